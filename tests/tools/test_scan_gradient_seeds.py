"""`tfpartial scan` reads what a gradient call differentiates and with
respect to what, never the gradients it is seeded with (`grad_ys`,
`output_gradients`, `grad_loss`, a third positional argument of a
gradient call of another spelling): an activation's gradient masked
and sent back through `tf_gradients = gradients_lib.gradients` masks no
variable's gradient, as it masks none through `tf.gradients`. The
gradients themselves masked stay found. Synthetic sources in the shape
of real code."""

import pytest

import scanned

_found = scanned.found

_SEEDED = """\
    import tensorflow as tf
    from tensorflow.python.ops import gradients as tf_gradients_lib
    tf_gradients = tf_gradients_lib.gradients


    def backward(ys, xs, grad_ys=None):
        return tf_gradients(ys, xs, grad_ys)


    def train(loss, hidden, optimizer, keep):
        variables = tf.trainable_variables()
        d_hidden = tf.gradients(loss, hidden)[0]
        d_hidden = d_hidden * keep
        grads = {call}
        return optimizer.apply_gradients(list(zip(grads, variables)))
    """


@pytest.mark.parametrize("source, expected", [
    (_SEEDED.format(call="tf_gradients(hidden, variables, grad_ys=d_hidden)"),
     []),
    (_SEEDED.format(call="tf_gradients(hidden, variables, d_hidden)"), []),
    (_SEEDED.format(
        call="tape_gradient(hidden, variables, output_gradients=d_hidden)"),
     []),
    (_SEEDED.format(call="backward(hidden, variables, d_hidden)"), []),
    (_SEEDED.format(
        call="compute_grads(hidden, variables, grad_loss=d_hidden)"), []),
    (_SEEDED.format(call="tf.gradients(hidden, variables, grad_ys=d_hidden)"),
     []),
    (_SEEDED.format(call="[g * tf.constant([1.0, 0.0]) for g in "
                         "tf.gradients(hidden, variables, d_hidden)]"),
     [("grads-mask", 14)]),
], ids=["keyword", "positional", "output-gradients", "helper-parameter",
        "grad-loss", "spelled", "gradients-masked"])
def test_gradient_seeds(source, expected):
  assert _found(source) == expected
