"""`tfpartial scan` on a hand list of every parameter a function makes,
beside variables that only wrap its inputs (`batch_x =
tf.Variable(batch_x)`, for a tape to watch): the list leaves out no
parameter, silent. Beside it, the same list leaving out a parameter made
from an initializer: found."""

import scanned

_TUTORIAL = """\
    import tensorflow as tf

    def nn_example(x_train, y_train, x_test, epochs):
      x_test = tf.Variable(x_test)
      W1 = tf.Variable(tf.random.normal([784, 300], stddev=0.03), name='W1')
      b1 = tf.Variable(tf.random.normal([300]), name='b1')
      W2 = tf.Variable(tf.random.normal([300, 10], stddev=0.03), name='W2')
      b2 = tf.Variable(tf.random.normal([10]), name='b2')
      optimizer = tf.keras.optimizers.Adam()
      for epoch in range(epochs):
        batch_x, batch_y = get_batch(x_train, y_train)
        batch_x = tf.Variable(batch_x)
        with tf.GradientTape() as tape:
          logits = tf.matmul(tf.nn.relu(tf.matmul(batch_x, W1) + b1), W2) + b2
          loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
              labels=batch_y, logits=logits))
        gradients = tape.gradient(loss, [W1, b1, W2, b2])
        optimizer.apply_gradients(zip(gradients, [W1, b1, W2, b2]))
      return tf.matmul(tf.nn.relu(tf.matmul(x_test, W1) + b1), W2) + b2
    """


def test_a_hand_list_beside_wrapped_inputs_is_silent():
  assert scanned.in_text(_TUTORIAL, "var-list-filter") == []


def test_a_hand_list_leaving_out_a_parameter_is_found():
  text = _TUTORIAL.replace("[W1, b1, W2, b2]", "[W2, b2]")
  assert [f[0] for f in scanned.in_text(text, "var-list-filter")] == [
      "var-list-filter"]
