"""`tfpartial scan` stays silent on look-alikes parts 18-24's negative
code showed, and still finds the same code that does leave a part out.

A model whose scope its caller opens: `Model(config, name_scope=s)` built
inside `with tf.variable_scope(name_or_scope=s)`, whose constructor trains
`[v for v in tf.trainable_variables() if name_scope in v.name]` (a
dialogue GAN's generator and discriminator, each built by its own
`create_model`). Everything the constructor makes lies under the scope
its caller opened: the filter keeps the whole model. A mask written once
before `fit` by a script's uncalled function that builds the model it
fits; each model of a folder loaded in a loop, pruned by a write, then
trained once. Synthetic sources in the shape of real code."""

import pytest
import scanned


_MODEL = """\
    import tensorflow as tf

    class Seq2Seq(object):
      def __init__(self, config, name_scope, forward_only=False):
        emb = tf.get_variable("emb", [4, 4])
        w = tf.get_variable("w", [4, 4])
        self.x = tf.placeholder(tf.float32, [None, 4])
        self.loss = tf.reduce_mean(tf.matmul(tf.matmul(self.x, emb), w))
        with tf.name_scope("gradient_descent"):
          params = [v for v in tf.trainable_variables() if {test}]
          grads = tf.gradients(self.loss, params)
          opt = tf.train.AdamOptimizer(1e-3)
          self.train_op = opt.apply_gradients(zip(grads, params))
    """

_CALLER = """\
    import tensorflow as tf
    from m import model

    def create_model(session, config, name_scope):
      {opened}
        made = model.Seq2Seq(config, name_scope={given}, forward_only=False)
      return made

    gen = create_model(None, {{}}, "gen")
    """

_SCOPED = "with tf.variable_scope(name_or_scope=name_scope):"


def _project(test="name_scope in v.name", opened=_SCOPED,
             given="name_scope"):
  return scanned.in_project({
      "m/__init__.py": "",
      "m/model.py": _MODEL.format(test=test),
      "m/train.py": _CALLER.format(opened=opened, given=given)})


_FOUND = [("var-list-filter", "m/model.py", 10)]


@pytest.mark.parametrize("kwargs, expected", [
    ({}, []),
    ({"opened": "with tf.variable_scope(name_scope, initializer=None):"},
     []),
    ({"test": "v.name.startswith(name_scope)"}, []),
    ({"opened": "if True:"}, _FOUND),
    ({"opened": 'with tf.variable_scope("model"):'}, _FOUND),
    ({"given": '"gen"'}, _FOUND),
    ({"test": "name_scope in v.name and 'emb' not in v.name"}, _FOUND),
    ({"test": "'emb' not in v.name"}, _FOUND),
], ids=["scope_opened_by_caller", "opened_positionally", "startswith",
        "caller_opens_no_scope", "caller_opens_another_scope",
        "scope_not_the_one_given", "a_part_of_the_scope_left_out",
        "filter_by_a_literal"])
def test_scope_opened_by_the_caller(kwargs, expected):
  assert _project(**kwargs) == expected


def test_one_caller_without_the_scope_stays_found():
  caller = _CALLER.format(opened=_SCOPED, given="name_scope") + (
      "other = model.Seq2Seq({}, name_scope='disc')\n")
  assert scanned.in_project({
      "m/__init__.py": "", "m/model.py": _MODEL.format(
          test="name_scope in v.name"),
      "m/train.py": caller}) == _FOUND


def test_another_caller_under_another_scope_stays_silent():
  caller = _CALLER.format(opened=_SCOPED, given="name_scope") + (
      'with tf.variable_scope("rnn_model"):\n'
      '      other = model.Seq2Seq({}, name_scope="disc")\n')
  assert scanned.in_project({
      "m/__init__.py": "", "m/model.py": _MODEL.format(
          test="name_scope in v.name"),
      "m/train.py": caller}) == []


# A mask written once before `fit`, by a function that builds the model it
# fits and that nothing in the project calls (a script's `run_training`):
# each call trains a new model, pruned once; its weights train on freely.
_PRUNED_ONCE = """\
    import numpy as np
    import tensorflow as tf

    def snip_prune(model, x, y, sparsity):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
      grads = tape.gradient(loss, model.trainable_variables)
      scores = [tf.abs(w * g) for w, g in zip(model.trainable_variables, grads)]
      masks = [(s > sparsity).numpy().astype(np.float32) for s in scores]
      for i, var in enumerate(model.trainable_variables):
        var.assign(var * masks[i])

    def run_training({params}sparsity=0.5, epochs=150):
      {model}
      x, y = np.zeros((8, 4)), np.zeros((8, 10))
      model.compile(optimizer="adam", loss="mse")
      {fit}
    """

_BUILT = "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])"
_ONCE = ("snip_prune(model, x[:4], y[:4], sparsity)\n"
         "      model.fit(x, y, epochs=epochs)")


@pytest.mark.parametrize("kwargs, expected", [
    ({}, []),
    ({"model": "model = build_resnet20()"}, []),
    ({"params": "model, ", "model": "pass"}, [("weight-remask", 11)]),
    ({"model": "model = tf.keras.models.load_model('global.h5')"},
     [("weight-remask", 11)]),
    ({"model": "model = tf.keras.models.clone_model(GLOBAL)"},
     [("weight-remask", 11)]),
    ({"fit": "for epoch in range(epochs):\n"
             "        snip_prune(model, x[:4], y[:4], sparsity)\n"
             "        model.fit(x, y, epochs=1)"},
     [("weight-remask", 11)]),
], ids=["built_here", "built_by_a_helper", "model_passed_in",
        "model_loaded", "model_cloned", "remasked_each_epoch"])
def test_pruned_once_by_an_uncalled_script(kwargs, expected):
  values = {"params": "", "model": _BUILT, "fit": _ONCE, **kwargs}
  assert scanned.found(_PRUNED_ONCE.format(**values)) == expected


# Each model of a folder loaded in a loop, a layer pruned by writing its
# weights, then trained once: the step the write seems to follow (the
# last pass's `fit`) trained another model.
_REPAIRED = """\
    import os
    import numpy as np
    from keras.models import load_model

    x, y = np.zeros((8, 4)), np.zeros((8,))
    {before}
    for model_name in os.listdir('models/'):
      {loaded}
      layer = model.get_layer("conv_3")
      weight, bias = layer.get_weights()
      for i in range(4):
        weight[:, :, :, i] = 0
        bias[i] = 0
        layer.set_weights([weight, bias])
      model.fit(x, y, epochs=20)
      model.save(os.path.join('repaired', model_name))
    """

_EACH = "model = load_model(os.path.join('models', model_name))"


@pytest.mark.parametrize("kwargs, expected", [
    ({}, []),
    ({"loaded": "path = os.path.join('models', model_name)\n"
                "      model = load_model(path)"}, []),
    ({"before": "model = load_model('global.h5')", "loaded": "pass"},
     [("write-back", 14)]),
    ({"loaded": "model = load_model('global.h5')"}, [("write-back", 14)]),
], ids=["each_model_loaded", "loaded_through_a_name", "one_model_trained_on",
        "one_model_reloaded"])
def test_each_model_of_a_folder_pruned_once(kwargs, expected):
  values = {"before": "", "loaded": _EACH, **kwargs}
  assert scanned.found(_REPAIRED.format(**values)) == expected
