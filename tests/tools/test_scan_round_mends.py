"""`tfpartial scan` after the independent review of part thirty's round:
its probes reduced to cases, each an exact finding or silence (a
`name_scope` of another model or one a caller names, a helper called
after `import *`, a wrapper's inner weights, a method beside the only
network), and the helper test's work growing linearly."""

import textwrap

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_FILTER = "var-list-filter"

_GAN = """\
import tensorflow as tf


class GAN(object):
  def generator(self, z):
    with tf.variable_scope('Generator'):
      w = tf.get_variable('w', [10, 10])
      return tf.matmul(z, w)

  def discriminator(self, x):
    with tf.variable_scope('Discriminator', reuse=tf.AUTO_REUSE):
      w = tf.get_variable('w', [10, 1])
      return tf.matmul(x, w)

  def build(self, z, x):
    fake = self.generator(z)
    d_real = self.discriminator(x)
    d_fake = self.discriminator(fake)
    g_loss = -tf.reduce_mean(d_fake)
    d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
    tvars = tf.trainable_variables()
    g_vars = [v for v in tvars if 'Generator' in v.name]
    d_vars = [v for v in tvars if 'Discriminator' in v.name]
    self.g_opt = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
    self.d_opt = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
"""

_LEGACY = """\
import tensorflow as tf


class Old(object):
  def generator(self, z):
    with tf.name_scope('Generator'):
      w = tf.get_variable('gw', [10, 10])
      return tf.matmul(z, w)
"""


def _messages(files):
  """(idiom, path, line, drift) of each finding in a project."""
  sources = [_files.Source(path, textwrap.dedent(text))
             for path, text in files.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.path, f.line, f.drift) for f in findings]


def test_a_name_scope_of_another_models_module_is_not_the_steps():
  # fr-ns2: the GAN names its generator by `variable_scope`; an unrelated
  # module's `name_scope('Generator')` is no part of its model.
  assert scanned.in_project({"dcgan.py": _GAN, "legacy.py": _LEGACY}) == []


def test_a_trainer_handed_its_model_ignores_another_models_name_scope():
  # fr3-ns3: the trainer makes no variable (its model is `dcgan.GAN`,
  # named by `variable_scope`); `legacy.py` opens `name_scope('Generator')`
  # and names nothing `Generator`: another model's, not the trainer's.
  trainer = """\
import tensorflow as tf
import dcgan


def main(z, x):
  gan = dcgan.GAN()
  fake = gan.generator(z)
  d_real = gan.discriminator(x)
  d_fake = gan.discriminator(fake)
  g_loss = -tf.reduce_mean(d_fake)
  d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
  tvars = tf.trainable_variables()
  g_vars = [v for v in tvars if 'Generator' in v.name]
  d_vars = [v for v in tvars if 'Discriminator' in v.name]
  g_opt = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
  d_opt = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
  return g_opt, d_opt
"""
  assert scanned.in_project({"dcgan.py": _GAN, "legacy.py": _LEGACY,
                             "train.py": trainer}) == []


def test_a_name_scope_inside_a_method_a_caller_names_is_named():
  # fr-ns1: the caller's `variable_scope('Generator')` names what the
  # method makes, whatever `name_scope` it opens inside.
  code = _GAN.replace(
      "    with tf.variable_scope('Generator'):\n      w = tf.get_variable("
      "'w', [10, 10])", "    with tf.name_scope('Generator'):\n      "
      "w = tf.get_variable('w', [10, 10])").replace(
          "    fake = self.generator(z)\n",
          "    with tf.variable_scope('Generator'):\n"
          "      fake = self.generator(z)\n")
  assert "name_scope('Generator')" in code
  assert scanned.in_project({"gan.py": code}) == []


def test_a_name_scope_handed_to_make_template_is_named():
  code = _GAN.replace(
      "    with tf.variable_scope('Generator'):\n      w = tf.get_variable("
      "'w', [10, 10])", "    with tf.name_scope('Generator'):\n      "
      "w = tf.get_variable('w', [10, 10])").replace(
          "    fake = self.generator(z)\n",
          "    fake = tf.make_template('Generator', self.generator)(z)\n")
  assert scanned.in_project({"gan.py": code}) == []


def test_a_name_scope_of_the_steps_own_model_is_found_with_its_path():
  code = _GAN.replace(
      "    with tf.variable_scope('Generator'):\n      w = tf.get_variable("
      "'w', [10, 10])", "    with tf.name_scope('Generator'):\n      "
      "w = tf.get_variable('w', [10, 10])")
  found = _messages({"gan.py": code})
  assert [(i, p, line) for i, p, line, _ in found] == [
      (_FILTER, "gan.py", 22)]
  assert "(gan.py:6)" in found[0][3]


def test_a_trainer_with_no_variables_reads_its_models_name_scope():
  # Part thirty's VAW-GAN: the trainer is handed its model, whose
  # `__init__` makes embedding tables under `name_scope('Generator')`
  # beside the generator it names `Generator` by `make_template`.
  model = """\
      import tensorflow as tf

      class Model(object):
        def __init__(self):
          with tf.name_scope('Generator'):
            self.emb = tf.get_variable('y_emb', [10, 4])
          self._generate = tf.make_template('Generator', self._generator)

        def _generator(self, z):
          return tf.layers.dense(z, 10)
      """
  trainer = """\
      import tensorflow as tf

      class Trainer(object):
        def optimize(self, loss):
          tvars = tf.trainable_variables()
          g_vars = [v for v in tvars if 'Generator' in v.name]
          return tf.train.RMSPropOptimizer(1e-4).minimize(loss, var_list=g_vars)
      """
  found = _messages({"model.py": model, "trainer.py": trainer})
  assert [(i, p, line) for i, p, line, _ in found] == [
      (_FILTER, "trainer.py", 6)]
  assert "(model.py:5)" in found[0][3]


_HELPERS = """\
    import tensorflow as tf


    def build_train_op(loss, lr):
      tvars = tf.trainable_variables()
      tvars = [v for v in tvars if 'embedding' not in v.name]
      return tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, var_list=tvars)
    """

_STARRED = """\
    import tensorflow as tf
    from helpers import *

    emb = tf.get_variable('embedding', [10, 3])
    w = tf.get_variable('w', [3])
    loss = tf.reduce_sum(tf.matmul(emb, w[:, None]))
    train_op = build_train_op(loss, 0.1)
    """

_UNCALLED = """\
    import tensorflow as tf
    from helpers import build_train_op

    loss = tf.reduce_sum(tf.get_variable('w', [3]))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    """


def test_a_helper_called_after_a_star_import_stays_found():
  # fr-uh1: one script imports the helper by name and never calls it;
  # another calls it after `from helpers import *`.
  assert [(i, p, line) for i, p, line in scanned.in_project({
      "helpers.py": _HELPERS, "old_script.py": _UNCALLED,
      "train.py": _STARRED})] == [(_FILTER, "helpers.py", 6)]


def test_a_helper_read_as_a_modules_attribute_stays_found():
  called = """\
      import tensorflow as tf
      import helpers

      loss = tf.reduce_sum(tf.get_variable('w', [3]))
      train_op = helpers.build_train_op(loss, 0.1)
      """
  assert [(i, p, line) for i, p, line in scanned.in_project({
      "helpers.py": _HELPERS, "old_script.py": _UNCALLED,
      "train.py": called})] == [(_FILTER, "helpers.py", 6)]


def test_a_helper_whose_module_is_star_imported_stays_found():
  # What `import *` binds is not read by name: the helper may be called.
  starred = """\
      from helpers import *

      print(tf)
      """
  assert [(i, p, line) for i, p, line in scanned.in_project({
      "helpers.py": _HELPERS, "old_script.py": _UNCALLED,
      "other.py": starred})] == [(_FILTER, "helpers.py", 6)]


def test_a_helper_called_under_its_as_name_stays_found():
  # fr3-uhv2: `from helpers import build_train_op as bto; bto(...)`.
  aliased = """\
      import tensorflow as tf
      from helpers import build_train_op as bto

      loss = tf.reduce_sum(tf.get_variable('w', [3]))
      train_op = bto(loss, 0.1)
      """
  assert [(i, p, line) for i, p, line in scanned.in_project({
      "helpers.py": _HELPERS, "train.py": aliased})] == [
          (_FILTER, "helpers.py", 6)]


def test_a_helper_imported_and_never_called_stays_silent():
  assert scanned.in_project({"helpers.py": _HELPERS,
                             "old_script.py": _UNCALLED}) == []


def _helpers_imported(n):
  """`n` step helpers, all imported by one script that calls none."""
  helpers = "import tensorflow as tf\n\n" + "".join(
      f"def step{i}(loss, lr):\n"
      f"  tvars = [v for v in tf.trainable_variables() "
      f"if 'emb{i}' not in v.name]\n"
      f"  return tf.train.MomentumOptimizer(lr, 0.9).minimize("
      f"loss, var_list=tvars)\n\n" for i in range(n))
  script = "import tensorflow as tf\nfrom helpers import (" + ", ".join(
      f"step{i}" for i in range(n)) + ")\n" + "".join(
          f"x{i} = tf.constant({i})\n" for i in range(n))
  return [_files.Source("helpers.py", helpers),
          _files.Source("train.py", script)]


def test_the_unused_helper_test_grows_linearly_with_the_helpers():
  # Each importing module is read once, not once per helper.
  small, found = scanned.calls_made(
      lambda: _scan.scan_project(_helpers_imported(20)), "_unused_helper.py")
  large, _ = scanned.calls_made(
      lambda: _scan.scan_project(_helpers_imported(80)), "_unused_helper.py")
  assert found == ([], [])
  assert large < 5 * small, (small, large)


_WRAPPER = """\
    import tensorflow as tf


    class Residual(tf.keras.layers.Layer):
      def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer

      @property
      def trainable_weights(self):
        if self.layer.built:
          return self.layer.trainable_weights
        return super().trainable_weights

      def call(self, x):
        return x + self.layer(x)
    """


def test_a_wrapper_returning_its_inner_layers_weights_is_whole():
  # fr-wp1: a wrapper with no weights of its own hands back its layer's.
  assert scanned.in_project({"wrap.py": _WRAPPER}) == []


def test_a_layer_with_weights_of_its_own_returning_a_part_is_found():
  code = _WRAPPER.replace(
      "        self.layer = layer\n",
      "        self.layer = layer\n"
      "        self.scale = self.add_weight('scale', [1])\n"
      "        self.pretrain = False\n").replace(
          "        if self.layer.built:\n",
          "        if self.pretrain:\n")
  assert [(i, line) for i, _, line in scanned.in_project(
      {"wrap.py": code})] == [(_FILTER, 14)]


def test_a_property_returning_a_part_with_no_switch_is_silent():
  # No `if` on a flag of the layer: nothing chooses the part.
  code = """\
      import tensorflow as tf


      class Head(tf.keras.layers.Layer):
        @property
        def trainable_weights(self):
          part = self.head_weights
          if not part:
            return super().trainable_weights
          return part
      """
  assert scanned.in_project({"head.py": code}) == []


_MAML = """\
    import tensorflow as tf


    def get_trainable_variables(flist):
        all_vs = tf.trainable_variables()
        vs = []
        for s in flist:
            vs += [p for p in all_vs if s in p.name]
        return vs


    class MLPRegressor(object):

        def construct(self, mlp):
            self.mlp = mlp
            self.y_hat = self._model()
            self.loss = tf.losses.mean_squared_error(self.y_t, self.y_hat)
            self.grads = tf.gradients(self.loss, tf.trainable_variables())

        def _model(self):
            y_hat = self.mlp(self.X_c, scope='mlp')
            vars = get_trainable_variables(['mlp'])
            for k in range(1, self.inner_iters + 1):
                loss = tf.losses.mean_squared_error(self.y_c, y_hat)
                grads = tf.gradients(loss, vars)
                vars = [v - self.alpha * g for v, g in zip(vars, grads)]
                y_hat = self.mlp(self.X_c, scope='mlp-%d' % k, params=vars)
            self._summarize(y_hat)
            return self.mlp(self.X_t, scope='mlp-test', params=vars)

        def _summarize(self, y_hat):
            tf.summary.histogram('y_hat', y_hat)
    """


def test_a_method_of_its_own_beside_the_only_network_is_no_network():
  # fr-ml1: `self._summarize(y_hat)` runs no other network.
  assert scanned.in_project({"mlp_maml.py": _MAML}) == []


def test_an_inner_loop_beside_another_bound_network_is_found():
  code = _MAML
  for old, new in [
      ("            self.mlp = mlp\n",
       "            self.mlp = mlp\n            self.encoder = encoder\n"),
      ("def construct(self, mlp):", "def construct(self, mlp, encoder):"),
      ("            y_hat = self.mlp(self.X_c, scope='mlp')\n",
       "            h = self.encoder(self.X_c)\n"
       "            y_hat = self.mlp(h, scope='mlp')\n")]:
    assert old in code
    code = code.replace(old, new)
  # Shown where the name is handed to the project's name filter (line
  # 24), not in the helper (`_helper_choice.names_given`).
  assert [(i, line) for i, _, line in scanned.in_project(
      {"mlp_maml.py": code})] == [(_FILTER, 24)]


def test_a_name_scoped_filter_in_a_helper_never_called_is_silent():
  # The later rules see the steps the main loop reads: none of a helper
  # its importer never calls.
  helper = """\
      import tensorflow as tf


      class Model(object):
        def __init__(self):
          with tf.name_scope('Generator'):
            self.emb = tf.get_variable('y_emb', [10, 4])


      def build(loss):
        tvars = tf.trainable_variables()
        g_vars = [v for v in tvars if 'Generator' in v.name]
        return tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=g_vars)
      """
  uncalled = _UNCALLED.replace("build_train_op", "build")
  assert scanned.in_project({"helpers.py": helper,
                             "old_script.py": uncalled}) == []
