"""`tfpartial scan`'s `var-list-filter` where the model's layers are built
by a one-layer helper that opens the scope its caller names
(`fc_layer(fc7, 4096, 14, name='fc8')` under `with
tf.variable_scope(name):`; part twenty-six's VGG fine-tuning trains only
`fc8`): a helper given two layer names or more names layers of one
model, not whole models, so a filter keeping one of them leaves the
others out. A helper building a whole model under the name (a loop of
layers, or one name only) still names a model. Each source is
synthetic."""

import pytest

import scanned

_BY_HAND = """\
    import tensorflow as tf

    def fc_layer(x, size, name):
      with tf.variable_scope(name):
        w = tf.get_variable('w', [4, size])
        b = tf.get_variable('b', [size])
        return tf.nn.xw_plus_b(x, w, b)
    """

_LAYERS_CALL = """\
    import tensorflow as tf

    def conv_layer(x, filters, name):
      with tf.variable_scope(name):
        return tf.nn.relu(tf.layers.conv2d(x, filters, 3, name=name))
    """

_MODEL = """\
    class Net(object):
      def build(self, x):
        h = {helper}(x, 4, name='block1')
        h = {helper}(h, 4, name='block2')
        return {helper}(h, 2, name='head')
    """

_TRAIN = """\
    import tensorflow as tf
    from .net import Net

    def train(cfg, x):
      logits = Net().build(x)
      loss = tf.reduce_mean(logits)
      if cfg['finetuning'] == 'true':
        params = {kept}
      else:
        params = tf.trainable_variables()
      return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=params)
    """

_HEAD_BY_NAME = ("[v for v in tf.trainable_variables() "
                 "if v.name.startswith('head')]")
_HEAD_BY_SCOPE = ("tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
                  "scope='head')")


def _project(layers, helper, kept):
  # The helper beside the model that calls it, in one module.
  return {"m/__init__.py": "",
          "m/net.py": layers + "\n" + _MODEL.format(helper=helper),
          "m/train.py": _TRAIN.format(kept=kept)}


@pytest.mark.parametrize("layers, helper, kept", [
    (_BY_HAND, "fc_layer", _HEAD_BY_NAME),
    (_BY_HAND, "fc_layer", _HEAD_BY_SCOPE),
    (_LAYERS_CALL, "conv_layer", _HEAD_BY_NAME),
    (_LAYERS_CALL, "conv_layer", _HEAD_BY_SCOPE),
], ids=["by_hand_name", "by_hand_scope", "layers_call_name",
        "layers_call_scope"])
def test_one_layer_of_a_helper_named_model_is_a_part(layers, helper, kept):
  assert scanned.in_project(_project(layers, helper, kept)) == [
      ("var-list-filter", "m/train.py", 8)]


_WHOLE_MODEL = """\
    import tensorflow as tf

    def mlp(x, size, name):
      with tf.variable_scope(name):
        for width in (8, 8):
          x = tf.layers.dense(x, width)
        return tf.layers.dense(x, size)
    """


def test_a_helper_building_whole_models_still_names_a_model():
  # `mlp` builds a whole network under each name: the filter keeps a
  # model the project builds beside the others, as before.
  before = scanned.in_project(_project(_WHOLE_MODEL, "mlp", _HEAD_BY_NAME))
  assert before == []


_ACTOR_CRITIC = """\
    import tensorflow as tf
    from .layers import {helper}

    def build(s, a_loss_of, c_loss_of):
      actor = {helper}(s, 2, name='actor')
      critic = {helper}(s, 1, name='critic')
      a_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'actor')
      c_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'critic')
      a_op = tf.train.AdamOptimizer(1e-4).minimize(a_loss_of(actor), var_list=a_vars)
      c_op = tf.train.AdamOptimizer(1e-3).minimize(c_loss_of(critic), var_list=c_vars)
      return a_op, c_op
    """


@pytest.mark.parametrize("layers, helper", [
    (_BY_HAND, "fc_layer"), (_WHOLE_MODEL, "mlp")],
    ids=["one_layer_each", "whole_network_each"])
def test_networks_each_trained_by_its_own_step_stay_silent(layers, helper):
  assert scanned.in_project({
      "m/__init__.py": "", "m/layers.py": layers,
      "m/ac.py": _ACTOR_CRITIC.format(helper=helper)}) == []


def test_a_savers_list_of_one_layer_stays_silent():
  # The head is only saved; the step trains every variable.
  files = _project(_BY_HAND, "fc_layer", "tf.trainable_variables()")
  files["m/train.py"] = files["m/train.py"].replace(
      "      return tf.train", "      tf.train.Saver(var_list=%s)\n"
      "      return tf.train" % _HEAD_BY_NAME)
  assert "Saver" in files["m/train.py"]
  assert scanned.in_project(files) == []


def test_a_one_layer_helper_named_once_names_a_model():
  # One name only: the helper's scope is all the caller builds with it.
  model = ("    class Net(object):\n"
           "      def build(self, x):\n"
           "        return fc_layer(x, 2, name='head')\n")
  files = _project(_BY_HAND, "fc_layer", _HEAD_BY_NAME)
  files["m/net.py"] = _BY_HAND + "\n" + model
  assert scanned.in_project(files) == []


def test_a_list_keeping_every_layer_stays_silent():
  kept = ("[v for v in tf.trainable_variables() if v.name.startswith("
          "('block1', 'block2', 'head'))]")
  assert scanned.in_project(_project(_BY_HAND, "fc_layer", kept)) == []
