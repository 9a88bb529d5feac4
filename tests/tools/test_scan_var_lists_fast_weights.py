"""`tfpartial scan` on a meta-learning inner update: `grads =
tf.gradients(inner_loss, model_variables)` over the model's variables
(less the non-model ones), read only to make fast weights `[v - lr * g
for v, g in zip(params, grads)]` that the model runs on again, the
outer step training every variable through them (MAML): silent. Beside
it, the same list whose gradients are written into the variables
(`assign_sub`): a step that trains only the list, found."""

import scanned

_MAML = """\
    import tensorflow as tf

    def build(model, x_update, y_update, x_meta, lr, n_steps):
      updated = []
      extra = tf.trainable_variables()
      params = []
      for i in range(n_steps):
        with tf.variable_scope('model', reuse=(i != 0)):
          y = model(x_update)
        if i == 0:
          params = list(v for v in tf.trainable_variables() if v not in extra)
          updated.append(params)
        loss = tf.reduce_mean((y - y_update) ** 2)
        grads = tf.gradients(loss, params)
        grads = [tf.stop_gradient(g) for g in grads]
        updated.append([v - lr * g for v, g in zip(updated[-1], grads)])
      with tf.variable_scope('model', reuse=True):
        y_meta = model(x_meta)
      return y_meta, updated
    """


def test_an_inner_update_making_fast_weights_is_silent():
  assert scanned.in_text(_MAML, "var-list-filter") == []


def test_the_same_gradients_written_into_the_variables_are_found():
  text = _MAML.replace(
      "updated.append([v - lr * g for v, g in zip(updated[-1], grads)])",
      "updated.append([v - lr * g for v, g in zip(updated[-1], grads)])\n"
      "        step = tf.group(*[v.assign_sub(lr * g)\n"
      "                          for v, g in zip(params, grads)])")
  assert [f[0] for f in scanned.in_text(text, "var-list-filter")] == [
      "var-list-filter"]
