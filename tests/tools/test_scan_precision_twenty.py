"""`tfpartial scan` stays silent on look-alikes that large negative
codebases showed (part fifteen's and devneg16's): a metric's classifier
built under its own scope and trained alone on a loss of its outputs; a
module's `parameters()` kept by each variable's `trainable` flag;
gradient pairs kept past `g is not None and v is not None`; a class's
own `get_gradients` that no optimizer calls (NumPy fitting by hand); a
copy of Keras kept inside the project. Each twin that does freeze a
part is still found. Synthetic sources in the shape of real code."""

import io
import json

import pytest
import scanned

from tfpartial._tools.scan import _main


_found = scanned.found


# TimeGAN's discriminative score: a post-hoc RNN classifier built in a
# scope of its own, its variables collected by `vs.name`, trained on a
# loss of its outputs over two placeholders.
_METRIC = """\
    import tensorflow as tf

    def discriminative_score(data_x, data_x_hat, dim):
      X = tf.placeholder(tf.float32, [None, 24, dim])
      X_hat = tf.placeholder(tf.float32, [None, 24, dim])

      def encoder(X):
        with tf.variable_scope("encoder", reuse=tf.AUTO_REUSE):
          return tf.layers.dense(X, 8)

      def discriminator(X):
        with tf.variable_scope("discriminator", reuse=tf.AUTO_REUSE) as vs:
          h = tf.layers.dense(X, 12)
          y_hat = tf.layers.dense(h, 1)
          d_vars = [v for v in tf.all_variables()
                    if v.name.startswith(vs.name)]
        return y_hat, d_vars

      y_real, d_vars = discriminator({real})
      y_fake, _ = discriminator({fake})
      loss_real = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
          logits=y_real, labels=tf.ones_like(y_real)))
      loss_fake = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
          logits=y_fake, labels=tf.zeros_like(y_fake)))
      d_loss = loss_real + loss_fake
      solver = tf.train.AdamOptimizer().minimize(d_loss, var_list=d_vars)
      return solver
    """

# VIME's semi-supervised predictor: the encoder ran beforehand (Keras,
# outside the graph); the predictor's scope is its whole list, the loss
# weighted by a parameter; the best model restored from its meta graph.
_PREDICTOR = """\
    import tensorflow as tf
    from tensorflow.contrib import layers as contrib_layers

    def vime_semi(x_train, y_train, dim, beta, hidden):
      x_input = tf.placeholder(tf.float32, [None, dim])
      y_input = tf.placeholder(tf.float32, [None, 2])
      xu_input = tf.placeholder(tf.float32, [None, None, dim])

      def predictor(x_input):
        with tf.variable_scope('predictor', reuse=tf.AUTO_REUSE):
          inter = contrib_layers.fully_connected(x_input, hidden)
          logit = contrib_layers.fully_connected(inter, 2,
                                                 activation_fn=None)
          y_hat = tf.nn.softmax(logit)
        return logit, y_hat

      y_hat_logit, y_hat = predictor(x_input)
      yv_hat_logit, yv_hat = predictor(xu_input)
      y_loss = tf.losses.softmax_cross_entropy(y_input, y_hat_logit)
      yu_loss = tf.reduce_mean(tf.nn.moments(yv_hat_logit, axes=0)[1])
      p_vars = [v for v in tf.trainable_variables()
                if v.name.startswith({kept})]
      solver = tf.train.AdamOptimizer().minimize(y_loss + beta * yu_loss,
                                                 var_list=p_vars)
      sess = tf.Session()
      sess.run(solver)
      tf.train.Saver(p_vars).save(sess, 'class_model.ckpt')
      # The best model restored, to predict.
      graph = tf.train.import_meta_graph('class_model.ckpt.meta')
      return graph
    """


@pytest.mark.parametrize("source, expected", [
    (_METRIC.format(real="X", fake="X_hat"), []),
    # On a pretrained encoder's output: the encoder stays fixed.
    (_METRIC.format(real="encoder(X)", fake="encoder(X_hat)"),
     [("var-list-filter", 15)]),
    (_PREDICTOR.format(kept="'predictor'"), []),
    # Its output layer alone: the hidden layer stays fixed.
    (_PREDICTOR.format(kept="'predictor/fully_connected_1'"),
     [("var-list-filter", 21)]),
], ids=["metric_alone", "metric_on_an_encoder", "predictor_alone",
        "predictor_s_output_layer"])
def test_a_network_trained_alone_on_its_own_loss(source, expected):
  assert _found(source) == expected


# slbo's `Module.parameters()`: PyTorch's, by each parameter's
# `trainable` flag and flags of its own, recursively: the whole module.
_MODULE = """\
    import tensorflow as tf

    class Module(object):
      def __init__(self):
        self._parameters = {{}}
        self._modules = {{}}

      def parameters(self, trainable=True, non_trainable=False, out=None):
        if out is None:
          out = []
        for param in self._parameters.values():
          if {test}:
            out.append(param)
        for module in self._modules.values():
          module.parameters(trainable=trainable,
                            non_trainable=non_trainable, out=out)
        return out

    def build_backward(model, loss, lr):
      optimizer = tf.train.AdamOptimizer(lr)
      params = model.parameters()
      grads_and_vars = optimizer.compute_gradients(loss, var_list=params)
      return optimizer.apply_gradients(grads_and_vars)
    """


@pytest.mark.parametrize("source, expected", [
    (_MODULE.format(test="param.trainable and trainable or "
                         "not param.trainable and non_trainable"), []),
    (_MODULE.format(test="param.trainable and 'bias' not in param.name"),
     [("var-list-filter", 13)]),
], ids=["by_trainable", "by_name"])
def test_a_module_s_parameters_by_their_trainable_flag(source, expected):
  assert _found(source) == expected


# OmniAnomaly's trainer: pairs kept past two joined None guards, the
# gradient checked under a message naming the variable.
_GUARDED = """\
    import tensorflow as tf

    def train_op(loss, optimizer, check_numerics=True):
      origin = optimizer.compute_gradients(loss, tf.trainable_variables())
      grad_vars = []
      for grad, var in origin:
        if {test}:
          if check_numerics:
            grad = tf.check_numerics(
                grad, 'gradient for {{}} has numeric issue'.format(var.name))
          grad_vars.append((grad, var))
      return optimizer.apply_gradients(grad_vars)
    """


@pytest.mark.parametrize("source, expected", [
    (_GUARDED.format(test="grad is not None and var is not None"), []),
    (_GUARDED.format(test="grad is not None and 'bias' not in var.name"),
     [("var-list-filter", 11)]),
], ids=["none_guards", "a_name_test"])
def test_pairs_kept_past_joined_none_guards(source, expected):
  assert _found(source) == expected


# A symbolic metamodel fits NumPy parameters by hand: `get_gradients`
# is its own method, a buffer of zeros filled row by row.
_FITTED = """\
    import numpy as np
    import tensorflow as tf

    class Metamodel{base}:
      def __init__(self, params):
        self.params = params

      def get_gradients(self, y, y_hat):
        param_grads = self.params * 0
        for k in range(self.params.shape[0]):
          param_grads[k, :] = np.mean(2 * (y - y_hat)) * self.params[k]
        return param_grads

      def fit(self, y, y_hat, learning_rate=.01):
        param_grads = self.get_gradients(y, y_hat)
        self.params = self.params - learning_rate * param_grads
    """


@pytest.mark.parametrize("source, expected", [
    (_FITTED.format(base=""), []),
    # An optimizer's override: what it returns, the optimizer applies.
    (_FITTED.format(base="(tf.keras.optimizers.SGD)"),
     [("grads-mask", 9)]),
], ids=["own_method", "optimizer_override"])
def test_a_get_gradients_no_optimizer_calls(source, expected):
  assert _found(source) == expected


_KERAS_COPY = {
    "__init__.py": "from . import engine\n__version__ = '2.0.8'\n",
    "engine/__init__.py": "",
    "engine/training.py": (
        "import tensorflow as tf\n"
        "def step(opt, loss, variables, mask):\n"
        "  grads = tf.gradients(loss, variables)\n"
        "  return opt.apply_gradients(zip([g * mask for g in grads],\n"
        "                                 variables))\n"),
}


@pytest.mark.parametrize("package, version, found", [
    ("Keras-2.0.8/keras", True, []),
    # Not a release: the project's own `keras/` folder is read.
    ("Keras-2.0.8/keras", False, ["Keras-2.0.8/keras/engine/training.py"]),
    # A sub-package of the project's own (its backend code) is read.
    ("project/keras", True, ["project/keras/engine/training.py"]),
], ids=["copy", "unreleased", "sub_package"])
def test_a_copy_of_keras_in_the_project_is_skipped(tmp_path, monkeypatch,
                                                  package, version, found):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "project").mkdir()
  (tmp_path / "project" / "__init__.py").write_text("")
  for name, text in _KERAS_COPY.items():
    path = tmp_path / package / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if not version:
      text = text.replace("__version__", "VERSION")
    path.write_text(text)
  (tmp_path / "train.py").write_text("import keras\n")
  out, err = io.StringIO(), io.StringIO()
  _main.run(["."], "json", False, out, err)
  paths = sorted({f["path"] for f in json.loads(out.getvalue() or "[]")})
  assert [p[2:] if p.startswith("./") else p for p in paths] == found
  assert ("skipped: a copy of keras" in err.getvalue()) == (not found)


# multisensory's source separation: with a GAN loss, the generator's and
# the discriminator's lists under one rebound name; without it, the
# generator's loss on every variable, in the other arm of the `if`.
_GAN_ARM = """\
    import tensorflow as tf

    def vars_with_prefix(prefix):
      return [x for x in tf.trainable_variables()
              if x.name.startswith(prefix)]

    def make_train_ops(gen_loss, discrim_loss, gan_weight, opt):
      if gan_weight <= 0:
        grads = opt.compute_gradients(gen_loss)
      else:
        var_list = vars_with_prefix('gen') + vars_with_prefix('im')
        grads = opt.compute_gradients(gen_loss, var_list=var_list)
      gen_op = opt.apply_gradients(grads)
      {discriminator}
      return gen_op
    """

_DISCRIMINATOR = """var_list = vars_with_prefix('discrim')
      if gan_weight <= 0:
        d_grads = []
      else:
        d_grads = opt.compute_gradients(discrim_loss, var_list=var_list)
      gen_op = tf.group(gen_op, opt.apply_gradients(d_grads))"""

# The discriminator trained in either run: where the generator's list is
# chosen, its other layers stay fixed (a GAN fine-tuning some layers).
_ALWAYS = """var_list = vars_with_prefix('discrim')
      d_grads = opt.compute_gradients(discrim_loss, var_list=var_list)
      gen_op = tf.group(gen_op, opt.apply_gradients(d_grads))"""


@pytest.mark.parametrize("source, expected", [
    (_GAN_ARM.format(discriminator=_DISCRIMINATOR), []),
    # No other loss trains the rest: a flag chooses a part to train,
    # shown where the prefixes are handed to the helper.
    (_GAN_ARM.format(discriminator="pass"), [("var-list-filter", 11)]),
    (_GAN_ARM.format(discriminator=_ALWAYS), [("var-list-filter", 11)]),
], ids=["gan_halves", "a_part_by_a_flag", "beside_a_discriminator"])
def test_a_gan_s_halves_under_one_name_beside_a_plain_run(source, expected):
  assert _found(source) == expected


# DeepMimic's AMP agent: the base agent's module trains the actor and
# the critic, each on its own loss; a subclass in a module of its own
# adds a discriminator trained on its loss after `super()` built them.
_AGENT = """\
    import tensorflow as tf

    class PPOAgent(object):
      def _tf_vars(self, scope=''):
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope='agent/' + scope)

      def _build_solvers(self):
        critic_vars = self._tf_vars('main/critic')
        self.critic_step = tf.train.AdamOptimizer(1e-3).minimize(
            self._critic_loss_tf, var_list=critic_vars)
        actor_vars = self._tf_vars('main/actor')
        self.actor_step = tf.train.AdamOptimizer(1e-4).minimize(
            self._actor_loss_tf, var_list=actor_vars)
    """

_AMP = """\
    import tensorflow as tf
    from ppo_agent import PPOAgent

    class AMPAgent(PPOAgent):
      def _build_solvers(self):
        {base}
        disc_vars = self._tf_vars('main/disc')
        self.disc_step = tf.train.MomentumOptimizer(1e-3, 0.9).minimize(
            self._disc_loss_tf, var_list=disc_vars)
    """


@pytest.mark.parametrize("base, expected", [
    ("super()._build_solvers()", []),
    # Not calling the base: the discriminator trains alone.
    ("pass", [("var-list-filter", "ppo_agent.py", 5)]),
], ids=["with_the_base_s_steps", "without_them"])
def test_a_subclass_s_step_beside_the_steps_it_inherits(base, expected):
  assert scanned.in_project({"ppo_agent.py": _AGENT,
                             "amp_agent.py": _AMP.format(base=base)}) == (
                                 expected)


# Learning2AdaptForStereo's networks record each layer through one
# method, which collects the variables under the layer output's scope
# into one member; `get_trainable_variables()` returns it, the whole
# network. One layer's variables (`get_variables('predict')`) are a part.
_REGISTRY = """\
    import tensorflow as tf

    class StereoNet(object):
      def __init__(self, left):
        self._layers = {{}}
        self._variables_list = set()
        self._layer_to_var = {{}}
        self._build_network(left)

      def _add_to_layers(self, name, op):
        self._layers[name] = op
        scope = '/'.join(op.name.split('/')[0:-1])
        variables = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                      scope=scope)
        self._layer_to_var[name] = variables
        self._variables_list.update(variables)

      def get_variables(self, layer_name):
        return self._layer_to_var[layer_name]

      def get_trainable_variables(self):
        return [x for x in list(self._variables_list) if x.trainable]

    class DispNet(StereoNet):
      def _build_network(self, left):
        {backbone}
        self._add_to_layers('conv1', tf.layers.conv2d(left, 64, 7,
                                                      name='conv1'))
        self._add_to_layers('predict', tf.layers.conv2d(
            self._layers['conv1'], 1, 3, name='predict'))

    def adapt(net, loss, lr):
      trainable_variables = {listed}
      return tf.train.AdamOptimizer(lr).minimize(
          loss, var_list=trainable_variables)
    """


_BACKBONE = "left = tf.layers.conv2d(left, 32, 3, name='backbone')"


@pytest.mark.parametrize("source, expected", [
    (_REGISTRY.format(listed="net.get_trainable_variables()",
                      backbone="pass"), []),
    (_REGISTRY.format(listed="net.get_variables('predict')",
                      backbone="pass"), [("var-list-filter", 33)]),
    # A backbone made outside the records: the records are a part.
    (_REGISTRY.format(listed="net.get_trainable_variables()",
                      backbone=_BACKBONE), [("var-list-filter", 13)]),
], ids=["every_layer", "one_layer", "beside_a_backbone"])
def test_a_network_s_registry_of_its_layers_variables(source, expected):
  assert _found(source) == expected


# TimeGAN's predictive score written inline: the predictor's layers in
# the body of `with tf.variable_scope("predictor") as vs:`, its list by
# `vs.name`. On the output of an encoder built before, outside that
# scope, the encoder stays fixed.
_INLINE = """\
    import tensorflow as tf

    def enc(x):
      with tf.variable_scope("encoder"):
        return tf.layers.dense(x, 4)

    def predictive_score(data_x, dim):
      X = tf.placeholder(tf.float32, [None, 23, dim - 1])
      Y = tf.placeholder(tf.float32, [None, 23, 1])
      feats = {feats}
      with tf.variable_scope("predictor", reuse=tf.AUTO_REUSE) as vs:
        cell = tf.nn.rnn_cell.GRUCell(num_units=dim, name='p_cell')
        outputs, _ = tf.nn.dynamic_rnn(cell, feats, dtype=tf.float32)
        y_hat = tf.layers.dense(outputs, 1)
        p_vars = [v for v in tf.all_variables() if v.name.startswith(vs.name)]
      p_loss = tf.losses.absolute_difference(Y, y_hat){decay}
      return tf.train.AdamOptimizer().minimize(p_loss, var_list=p_vars)
    """


# A weight decay over the list, joined to the loss.
_DECAY = " + 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in p_vars])"


@pytest.mark.parametrize("source, expected", [
    (_INLINE.format(feats="X", decay=""), []),
    (_INLINE.format(feats="enc(X)", decay=""), [("var-list-filter", 15)]),
    (_INLINE.format(feats="X", decay=_DECAY), []),
    (_INLINE.format(feats="enc(X)", decay=_DECAY),
     [("var-list-filter", 15)]),
], ids=["alone", "on_an_encoder", "decayed_alone",
        "decayed_on_an_encoder"])
def test_a_network_built_inline_in_its_scope_and_trained_alone(source,
                                                              expected):
  assert _found(source) == expected


# A model made before the scope, only called in its block: its variables
# are not the scope's, and stay fixed.
_CALLED_IN_BLOCK = """\
    import tensorflow as tf

    def train(dim):
      X = tf.placeholder(tf.float32, [None, 224, 224, 3])
      Y = tf.placeholder(tf.float32, [None, 10])
      base = tf.keras.applications.MobileNetV2(include_top=False)
      with tf.variable_scope("head", reuse=tf.AUTO_REUSE) as vs:
        feats = base(X)
        logits = tf.layers.dense(feats, 10)
        head_vars = [v for v in tf.all_variables()
                     if v.name.startswith(vs.name)]
      loss = tf.losses.softmax_cross_entropy(Y, logits)
      return tf.train.AdamOptimizer().minimize(loss, var_list=head_vars)
    """


def test_a_model_made_before_a_scope_and_called_in_it_stays_found():
  assert _found(_CALLED_IN_BLOCK) == [("var-list-filter", 10)]
