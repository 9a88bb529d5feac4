"""`tfpartial scan`: gradients computed only to be squared (an EWC
Fisher estimate, 20181867/Continual-Learning-with-Hypermodels'
`update_fisher_matrices`: `tape.gradient(loss, trainables)`, then
`fisher + tf.square(g)` for each) are a measurement, not a step: they
train nothing, so the variables they leave out are left out of no step.
The same gradients also applied, or read other than squared (divided by
the Fisher before an update), train what they name and stay found."""

import pytest

import scanned

_TF2 = """\
    import tensorflow as tf

    def update_fisher(trainables, fisher, model, data):
      for x, y in data:
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, trainables)
        for i, (f, g) in enumerate(zip(fisher, grads)):
          fisher[i] = f + tf.square(g) / len(trainables)
        {use}
      return fisher

    model = build_model()
    opt = tf.keras.optimizers.Adam()
    shared = [v for v in model.trainable_variables if "head" not in v.name]
    fisher = [tf.zeros_like(v) for v in shared]
    for x, y in data:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply_gradients(zip(grads, model.trainable_variables))
    fisher = update_fisher(shared, fisher, model, data)
    """

_TF1 = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("shared"):
      h = tf.layers.dense(x, 8)
    with tf.variable_scope("head"):
      out = tf.layers.dense(h, 2)
    loss = tf.reduce_mean((out - y) ** 2)
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    shared = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "shared")
    grads = tf.gradients(loss, shared)
    fisher = [g ** 2 for g in grads]
    {use}
    """

SILENT = {
    "tf2: Fisher of a filtered list, squared in a helper":
        _TF2.format(use=""),
    "tf1: Fisher of a scope, squared in a comprehension":
        _TF1.format(use=""),
}

FOUND = {
    "tf2: the same gradients also applied": (_TF2.format(
        use="tf.keras.optimizers.SGD().apply_gradients(zip(grads, "
            "trainables))"), 15),
    "tf2: the same gradients divided by the Fisher and applied": (
        _TF2.format(use="opt.apply_gradients([(g / (f + 1e-8), v) for g, f, "
                        "v in zip(grads, fisher, trainables)])"), 15),
    "tf1: the same gradients applied": (_TF1.format(
        use="step = tf.train.GradientDescentOptimizer(0.1).apply_gradients("
            "zip(grads, shared))"), 10),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_gradients_only_squared_leave_nothing_out(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_same_gradients_applied_are_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]
