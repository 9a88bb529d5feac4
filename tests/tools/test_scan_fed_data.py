"""`tfpartial scan` and a `session.run` of a train step fed a masked
array: the array is a gradient the step applies only when the step takes
fed gradients (placeholders). A step made beside the run from gradients
it computes in the graph (`apply_gradients(zip(tf.gradients(loss, tvars),
tvars))`, `minimize`) applies those; what the run feeds is data, such as
an input's noise moved along the loss's gradient by that input and
zeroed where the gradient says (word-embedding perturbation's Bernoulli
adversarial noise)."""

import scanned


# A data helper: the noise fed to the model's `noise` placeholder, moved
# along the gradient by that input and zeroed element by element.
_HELPER = """\
    import numpy as np


    class Batches(object):
      def __init__(self, model, sess):
        self.model = model
        self.sess = sess

      def next(self, grad_noise):
        noise = np.ones([8, 10])
        feed = {self.model.x: np.zeros([8, 10]), self.model.noise: noise}
        grad_noise_ = self.sess.run(grad_noise, feed_dict=feed)
        for b in range(8):
          noise[b, :] += 0.1 * grad_noise_[b]
          flat = np.reshape(noise[b], [-1])
          g = np.reshape(grad_noise_[b], [-1])
          for i in range(len(g)):
            if flat[i] == 1 and g[i] < 0:
              flat[i] = 0.0
          noise[b, :] = flat
        feed[self.model.noise] = noise
        return feed
    """


def _train(step):
  return f"""\
    import tensorflow as tf
    from batches import Batches


    def train(model, sess):
      opt = tf.train.AdamOptimizer(1e-3)
      tvars = tf.trainable_variables()
      {step}
      grad_noise = tf.gradients(model.loss, [model.noise])[0]
      batches = Batches(model, sess)
      for it in range(100):
        feed = batches.next(grad_noise)
        sess.run([train_op, model.loss], feed_dict=feed)
    """


def _train_in_a_step(step):
  """The run in a function of its own, the step made around it."""
  return f"""\
    import tensorflow as tf
    from batches import Batches


    def train(model, sess):
      opt = tf.train.AdadeltaOptimizer(1.0)
      tvars = tf.trainable_variables()
      {step}
      grad_noise = tf.gradients(model.loss, [model.noise])[0]

      def train_step(feed):
        _, loss = sess.run([train_op, model.loss], feed)
        return loss

      batches = Batches(model, sess)
      for it in range(100):
        train_step(batches.next(grad_noise))
    """


_COMPUTED = ("grads, _ = tf.clip_by_global_norm(tf.gradients(model.loss, "
             "tvars), 10)\n      train_op = opt.apply_gradients(zip(grads, "
             "tvars))")
_MINIMIZED = "train_op = opt.minimize(model.loss, var_list=tvars)"
# The same run, but the step applies gradients fed to its placeholders.
_FED = ("grads = [tf.placeholder(tf.float32, v.shape) for v in tvars]\n"
        "      train_op = opt.apply_gradients(zip(grads, tvars))")


def test_noise_zeroed_and_fed_to_a_step_computing_its_gradients_is_data():
  assert scanned.in_project({
      "batches.py": _HELPER, "train.py": _train(_COMPUTED)}) == []


def test_noise_zeroed_and_fed_to_a_minimize_is_data():
  assert scanned.in_project({
      "batches.py": _HELPER, "train.py": _train(_MINIMIZED)}) == []


def test_the_same_array_fed_to_a_step_of_fed_gradients_stays_a_finding():
  assert [(i, p) for i, p, _ in scanned.in_project({
      "batches.py": _HELPER, "train.py": _train(_FED)})] == [
          ("grads-mask", "batches.py")]


def test_a_gradient_masked_and_fed_to_a_step_of_placeholders_is_found():
  assert scanned.found("""\
      import numpy as np
      import tensorflow as tf

      def train(sess, loss, w, batches):
        opt = tf.train.GradientDescentOptimizer(0.1)
        grad_ph = tf.placeholder(tf.float32, w.shape)
        train_op = opt.apply_gradients([(grad_ph, w)])
        grads = tf.gradients(loss, [w])
        mask = np.ones(w.shape)
        mask[0] = 0
        for batch in batches:
          values = sess.run(grads, feed_dict={'x:0': batch})
          sess.run(train_op, feed_dict={grad_ph: values[0] * mask})
      """) == [("grads-mask", 13)]


def test_noise_fed_in_a_step_function_to_a_step_made_around_it_is_data():
  assert scanned.in_project({
      "batches.py": _HELPER,
      "train.py": _train_in_a_step(_COMPUTED)}) == []


def test_the_same_step_function_fed_to_placeholders_stays_a_finding():
  assert [(i, p) for i, p, _ in scanned.in_project({
      "batches.py": _HELPER, "train.py": _train_in_a_step(_FED)})] == [
          ("grads-mask", "batches.py")]


def _gradient_tensor_fed(feed):
  return f"""\
      import numpy as np
      import tensorflow as tf

      def train(sess, loss, w, batches):
        opt = tf.train.GradientDescentOptimizer(0.1)
        grads = tf.gradients(loss, [w])
        train_op = opt.apply_gradients(zip(grads, [w]))
        mask = np.ones(w.shape)
        mask[0] = 0
        for batch in batches:
          values = sess.run(grads, feed_dict={{'x:0': batch}})
          {feed}
      """


def test_a_masked_gradient_fed_over_the_steps_own_gradient_is_found():
  # The step computes its gradients, but the feed replaces one of them.
  assert scanned.found(_gradient_tensor_fed(
      "sess.run(train_op, feed_dict={grads[0]: values[0] * mask})")) == [
          ("grads-mask", 12)]


def test_the_same_gradient_fed_through_a_dict_filled_by_key_is_found():
  assert [i for i, _ in scanned.found(_gradient_tensor_fed(
      "feed = {}\n"
      "          feed[grads[0]] = values[0] * mask\n"
      "          sess.run(train_op, feed_dict=feed)"))] == ["grads-mask"]
