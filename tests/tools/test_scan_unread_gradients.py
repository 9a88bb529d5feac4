"""`tfpartial scan`: gradients computed for some variables into a name
nothing reads (lampinen/shared_representations' `W1_grad =
tf.gradients(loss, [W1])[0]`, its print commented out) are never
applied: no step leaves the other variables out. Read and applied, the
same gradients train only the variables they name, and stay found."""

import pytest

import scanned

_TF1 = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, shape=[4, None])
    y = tf.placeholder(tf.float32, shape=[10, None])
    W1 = tf.Variable(tf.random_uniform([50, 4], 0., 0.1))
    W2 = tf.Variable(tf.random_uniform([10, 50], 0., 0.1))
    output = tf.nn.relu(tf.matmul(W2, tf.matmul(W1, x)))
    loss = tf.reduce_sum(tf.square(output - y))
    W1_grad = tf.gradients(loss, [W1])[0]
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    train = optimizer.minimize(loss)
    {use}
    """

_TF2 = """\
    import tensorflow as tf
    model = build_model()
    opt = tf.keras.optimizers.Adam()
    for x, y in data:
      with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
      head = [v for v in model.trainable_variables if "head" in v.name]
      head_grads = tape.gradient(loss, head)
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply_gradients(zip(grads, model.trainable_variables))
      {use}
    """

SILENT = {
    "tf1: tf.gradients of one variable, never read": _TF1.format(use=""),
    "tf2: tape.gradient of a scope, never read": _TF2.format(use=""),
}

FOUND = {
    "tf1: the same gradient applied": (_TF1.format(
        use="step = optimizer.apply_gradients([(W1_grad, W1)])"), 8),
    "tf2: the same gradients applied": (_TF2.format(
        use="opt.apply_gradients(zip(head_grads, head))"), 7),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_gradients_nothing_reads_leave_nothing_out(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_same_gradients_applied_are_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]
