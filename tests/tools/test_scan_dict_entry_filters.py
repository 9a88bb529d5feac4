"""`tfpartial scan`: a variable list kept as an entry of a dict
(wmyw96/fewshot-zoo's protonet: `graph_vars = {'network':
tf.get_collection(GLOBAL_VARIABLES, scope='protonet')}`, then
`compute_gradients(loss, var_list=graph_vars['network'])`) is the list
stored under that key: the key names the entry, not a scope. A scope
opened around the whole model selects the model, as the same list held
by a name does; an entry that keeps only the head over a restored base
leaves the base out, and stays found."""

import pytest

import scanned

_WHOLE = """\
    import tensorflow as tf

    def build(ph):
      with tf.variable_scope("protonet"):
        z = encoder(ph["x"], 64, ph["is_training"])
      loss, acc = proto_loss(z[:5], z[5:], ph["label"])
      graph_vars = {{"network": {listed}}}
      opt = tf.train.AdamOptimizer(1e-3)
      grads = opt.compute_gradients(loss=loss, var_list={chosen})
      return opt.apply_gradients(grads)
    """

_HEAD = """\
    import tensorflow as tf

    def build(x, y, sess):
      with tf.variable_scope("base"):
        h = tf.layers.dense(x, 64)
      with tf.variable_scope("head"):
        out = tf.layers.dense(h, 10)
      loss = tf.losses.softmax_cross_entropy(y, out)
      graph_vars = {{"train": {listed}}}
      base = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="base")
      tf.train.Saver(base).restore(sess, "pretrained.ckpt")
      opt = tf.train.AdamOptimizer(1e-3)
      return opt.minimize(loss, var_list={chosen})
    """

_PROTONET = "tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope='protonet')"
_ONLY_HEAD = "tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='head')"

SILENT = {
    "the model's scope, kept in a dict entry": _WHOLE.format(
        listed=_PROTONET, chosen='graph_vars["network"]'),
    "the model's scope, held by a name": _WHOLE.format(
        listed="[]", chosen=_PROTONET),
}

FOUND = {
    "the head's scope over a restored base, kept in a dict entry": (
        _HEAD.format(listed=_ONLY_HEAD, chosen='graph_vars["train"]'), 9),
    "the head's scope over a restored base, held by a name": (
        _HEAD.format(listed="[]", chosen=_ONLY_HEAD), 13),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_dict_entry_naming_the_model_leaves_nothing_out(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_dict_entry_keeping_the_head_is_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]
