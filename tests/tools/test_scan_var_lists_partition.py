"""`tfpartial scan` on one gradient call over a partition of the model:
`compute_gradients(loss, net + sbp)` where `net` keeps the variables
without 'sbp' in their names and `sbp` those with it, the result sliced
in two and each part applied by its own optimizer (one learning rate
each). Between them every variable trains: silent. Beside it, the same
lists with one half never applied, or a source that leaves out a scope
the model opens: found."""

import scanned

_SPLIT = """\
    import tensorflow as tf

    def build_graph(images, labels, inference, loss_function, lr):
      optimizer_net = tf.train.AdamOptimizer(learning_rate=lr)
      optimizer_var = tf.train.AdamOptimizer(learning_rate=10 * lr)
      loss = loss_function(inference(images), labels)
      variables = tf.trainable_variables()
      net_variables = [v for v in variables if 'sbp' not in v.name]
      var_variables = list(filter(lambda v: 'sbp' in v.name, variables))
      grads = optimizer_net.compute_gradients(loss, net_variables + var_variables)
      grads_net = grads[:len(net_variables)]
      grads_var = grads[len(net_variables):]
      opt_net = optimizer_net.apply_gradients(grads_net)
      opt_var = optimizer_var.apply_gradients(grads_var)
      return tf.group(opt_net, opt_var)
    """


def _lists(text):
  return [f[0] for f in scanned.in_text(text, "var-list-filter")]


def test_two_optimizers_applying_the_halves_of_one_partition_are_silent():
  assert _lists(_SPLIT) == []


def test_a_source_leaving_out_a_name_the_project_never_writes_is_silent():
  # `'optimizer'` names no variable of the project: nothing left out.
  text = _SPLIT.replace(
      "variables = tf.trainable_variables()",
      "variables = [v for v in tf.trainable_variables()\n"
      "                   if 'optimizer' not in v.name.lower()]")
  assert _lists(text) == []


def test_a_partition_with_one_half_never_applied_is_found():
  text = _SPLIT.replace(
      "opt_var = optimizer_var.apply_gradients(grads_var)", "opt_var = None")
  assert _lists(text) == ["var-list-filter"]


def test_a_partition_of_a_source_without_the_encoder_is_found():
  # The source leaves out the scope the encoder is built in: frozen.
  text = _SPLIT.replace(
      "variables = tf.trainable_variables()",
      "variables = [v for v in tf.trainable_variables()\n"
      "                   if 'encoder' not in v.name]").replace(
      "loss = loss_function(inference(images), labels)",
      "with tf.variable_scope('encoder'):\n"
      "        features = inference(images)\n"
      "      loss = loss_function(features, labels)")
  assert _lists(text) == ["var-list-filter"]
