"""`tfpartial scan`, part thirty-eight's false positives.

A model class that trains its Keras model whole (`self.model.compile(
optimizer=...)`, then `fit`) and hands back, from a method the project
never calls, the gradients of its loss for some of its weights
(`return tf.gradients(self.loss, [w for w in weights if 'kernel' in
w.name])`, for influence functions): those gradients are read, never
applied by the project; the model's one step is the compile's, which
trains everything. Called by the project and applied, the same
gradients train only the weights they name and stay found; so do they
handed back by a class that trains nothing itself (a library's helper,
whose caller is outside)."""

import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scan
from tfpartial._tools.scan.idioms._wholes import _restored

_MODEL = """\
    import tensorflow as tf
    from tensorflow import keras


    class Net(object):

      def __init__(self, n):
        self.x = tf.placeholder(tf.float32, [None, 8])
        self.y = tf.placeholder(tf.float32, [None, n])
        self.model = self.build(n)
        self.loss = keras.losses.categorical_crossentropy(
            self.y, self.model(self.x))
    {compile}

      def build(self, n):
        i = keras.layers.Input((8,))
        h = keras.layers.Dense(16, activation="relu")(i)
        return keras.models.Model(i, keras.layers.Dense(n)(h))

      def weights_of_interest(self):
        return [w for w in self.model.trainable_weights if "kernel" in w.name]

      def grad_loss(self):
        return tf.gradients(self.loss, self.weights_of_interest())
    """

_COMPILE = """\

      def train(self, xs, ys):
        self.model.compile(loss="categorical_crossentropy",
                           optimizer=keras.optimizers.Adam(0.001))
        self.model.fit(xs, ys, epochs=3)
"""

_APPLIES = """\
    import tensorflow as tf
    from net import Net

    net = Net(10)
    opt = tf.train.AdamOptimizer(0.01)
    step = opt.apply_gradients(zip(net.grad_loss(),
                                   net.weights_of_interest()))
    """

SILENT = {
    "returned, uncalled, the class compiles its model": {
        "net.py": _MODEL.format(compile=_COMPILE)},
}

FOUND = {
    "called by the project and applied": {
        "net.py": _MODEL.format(compile=_COMPILE), "train.py": _APPLIES},
    "returned by a class that trains nothing itself": {
        "net.py": _MODEL.format(compile="")},
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_gradients_handed_back_beside_a_whole_compile_are_silent(name):
  assert [f for f in scanned.in_project(SILENT[name])
          if f[0] == "var-list-filter"] == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_same_gradients_applied_or_given_out_stay_found(name):
  assert [f for f in scanned.in_project(FOUND[name])
          if f[0] == "var-list-filter"] != []



# A classifier trained alone under the scope its helper opens around all
# its variables, its checkpoint read back for evaluation through a
# `Saver` over the global variables of that same scope (f-CLSWGAN's
# `classifier.py`, whose root-scope reading the restore had undone): the
# saver resumes what the step trains, no other part. The same saver
# over another scope (a pretrained encoder) restores a part.
_SAVED = """\
    import tensorflow as tf

    def build(self):
      chosen = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope="classification")
      step = opt.minimize(loss, var_list=chosen)

    def val(self, path):
      params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                 scope="{restored}")
      self.saver = tf.train.Saver(var_list=params)
      self.saver.restore(sess, path)
    """


def _restores_a_part(restored):
  project = _project.Project([_files.Source("c.py", textwrap.dedent(
      _SAVED.format(restored=restored)))])
  module = project.modules[0]
  assert project.parsed(module) is not None
  build = module.tree.body[1]
  trained = build.body[0].targets[0]
  held = [build.body[0].value]
  return _restored.restores_a_part(module, trained, held)


def test_a_saver_over_the_trained_scope_restores_no_other_part():
  assert not _restores_a_part("classification")


def test_a_saver_over_another_scope_restores_a_part():
  assert _restores_a_part("encoder")


def _models(n):
  """`n` model files, each a class compiling its model and handing back
  its kernels' gradients from a method of one name."""
  return [_files.Source(f"m{i}.py", textwrap.dedent(
      _MODEL.format(compile=_COMPILE)).replace("Net", f"Net{i}"))
          for i in range(n)]


def test_handed_back_gradients_cost_grows_linearly():
  # Each class walked once, the method's name looked up once: four times
  # the models, at most about four times the work of those checks.
  def work(n):
    return scanned.calls_made(lambda: _scan.scan_project(_models(n)),
                              "_runs/_dropped.py")[0]
  small, large = work(3), work(12)
  assert 0 < large <= 4 * small + 200, (small, large)
