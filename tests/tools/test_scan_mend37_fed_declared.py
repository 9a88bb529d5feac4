"""`tfpartial scan` after the review of part thirty-seven's declared
weights and fed inputs: each silence holds only where the code shows
what it assumes.

- A layer declaring its sublayers' weights once each (`for w in
  i.trainable_weights: if w not in self._trainable_weights: append(w)`)
  leaves none out only when the loop walks a whole list of weights; a
  loop over a filtered or sliced list, or a name bound to one, declares
  a chosen part (raufer's bert-summarization stays silent).
- A step whose list is variables written from placeholders trains
  inputs only when that setter is run with its placeholder fed where the
  step is run, before it, on each pass of the loop that runs the step
  (MILES-PSL's EAD stays silent); a setter never run, or run once before
  training (a soft prompt loaded from a file), leaves a trained part.
- An entry filled under an `is` test is under a `None` check only when
  it compares with `None`.
- A class's setters and runs are read once per class, and a method a
  loss calls is walked once however many calls reach it.
"""

import pytest

import scanned

_DECLARED = """\
    import tensorflow as tf

    class MultiHeadAttention(tf.keras.layers.Layer):

      def __init__(self, d_model):
        super().__init__()
        self.d_model = d_model

      def build(self, input_shape):
        self.wq = tf.keras.layers.Dense(self.d_model)
        self.wk = tf.keras.layers.Dense(self.d_model)
        self.dense = tf.keras.layers.Dense(self.d_model)
        for i in [self.wq, self.wk, self.dense]:
          i.build(input_shape)
          WALKED
          for weight in LOOP:
            if weight not in self._trainable_weights:
              self._trainable_weights.append(weight)
        super().build(input_shape)

      def call(self, q):
        return self.dense(self.wq(q) * self.wk(q))
    """


def _declared(loop, walked="pass"):
  return _DECLARED.replace("WALKED", walked).replace("LOOP", loop)


@pytest.mark.parametrize("loop", ["i.trainable_weights",
                                  "i.trainable_variables"])
def test_every_weight_of_a_whole_list_declared_once_is_silent(loop):
  assert scanned.found(_declared(loop)) == []


def test_a_name_bound_to_a_whole_list_declared_once_is_silent():
  assert scanned.found(_declared(
      "walked", walked="walked = i.trainable_weights")) == []


@pytest.mark.parametrize("loop", [
    "[w for w in i.trainable_weights if 'kernel' in w.name]",
    "i.trainable_weights[:1]"])
def test_a_filtered_or_sliced_list_declared_once_is_found(loop):
  assert scanned.found(_declared(loop)) == [("var-list-filter", 16)]


def test_a_name_bound_to_a_filtered_list_declared_once_is_found():
  assert scanned.found(_declared("walked", walked=(
      "walked = [w for w in i.trainable_weights if 'bias' not in w.name]"
  ))) == [("var-list-filter", 15)]


_ATTACK = """\
    import numpy as np
    import tensorflow as tf

    class EAD:

      def __init__(self, sess, model, shape):
        self.sess = sess
        self.timg = tf.Variable(np.zeros(shape), dtype=tf.float32)
        self.slack = tf.Variable(np.zeros(shape), dtype=tf.float32)
        self.assign_timg = tf.compat.v1.placeholder(tf.float32, shape)
        self.assign_slack = tf.compat.v1.placeholder(tf.float32, shape)
        self.setter = tf.compat.v1.assign(self.slack, self.assign_slack)
        self.setup = [self.timg.assign(self.assign_timg)]
        self.output = model.get_logits(self.slack)
        self.loss = tf.reduce_sum(self.output) + tf.reduce_sum(
            tf.square(self.slack - self.timg))
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
        self.train = optimizer.minimize(self.loss, var_list=[self.slack])
        INIT

      def attack(self, batch):
        self.sess.run(self.setup, {self.assign_timg: batch})
        SET
        STEPS
        AFTER
    """


def _attack(init="pass", set_="pass", after="pass", steps=(
    "for _ in range(1000):\n          self.sess.run(self.train)")):
  return _ATTACK.replace("INIT", init).replace("SET", set_).replace(
      "STEPS", steps).replace("AFTER", after)


_RUN_SETTER = "self.sess.run(self.setter, {self.assign_slack: batch})"


@pytest.mark.parametrize("set_", [
    _RUN_SETTER,
    "self.sess.run(fetches=[self.setter], "
    "feed_dict={self.assign_slack: batch})"])
def test_a_copy_set_before_the_steps_that_train_it_is_silent(set_):
  assert scanned.found(_attack(set_=set_)) == []


def test_a_copy_set_on_each_pass_before_its_steps_is_silent():
  # MILES-PSL's shape: a binary search, each pass setting the copy and
  # then running the steps of an inner loop.
  assert scanned.found(_attack(steps=(
      "for outer in range(9):\n"
      "          self.sess.run(self.setter, {self.assign_slack: batch})\n"
      "          for _ in range(10):\n"
      "            self.sess.run([self.train])"))) == []


def test_a_setter_never_run_leaves_a_trained_part():
  assert scanned.found(_attack()) == [("var-list-filter", 18)]


@pytest.mark.parametrize("init", [
    "self.sess.run(self.setter, {self.assign_slack: np.load('p.npy')})",
    # A soft prompt set once from vocabulary rows, then trained.
    "self.sess.run(self.setter, {self.assign_slack: model.rows[:8]})"])
def test_a_setter_run_once_before_training_leaves_a_trained_part(init):
  assert scanned.found(_attack(init=init)) == [("var-list-filter", 18)]


def test_a_setter_run_after_the_steps_leaves_a_trained_part():
  assert scanned.found(_attack(after=_RUN_SETTER)) == [
      ("var-list-filter", 18)]


def test_a_setter_run_in_a_loop_of_its_own_leaves_a_trained_part():
  assert scanned.found(_attack(set_=(
      "for b in batch:\n"
      "          self.sess.run(self.setter, {self.assign_slack: b})"))) == [
          ("var-list-filter", 18)]


def test_a_setter_run_unfed_leaves_a_trained_part():
  assert scanned.found(_attack(set_="self.sess.run(self.setter)")) == [
      ("var-list-filter", 18)]


_AGENT = """\
    import tensorflow as tf
    class Agent(object):
      def __init__(self, model):
        self.variables = {}
        self.model = model
        self.variables['trainable'] = []
        for v in self.model.trainable_variables:
          if TEST:
            self.variables['trainable'].append(v)
        self.optimizer = tf.optimizers.RMSprop(1e-3)

      def step(self, x):
        with tf.GradientTape() as tape:
          loss = self.model(x)
        grads = tape.gradient(loss, self.variables['trainable'])
        self.optimizer.apply_gradients(zip(grads, self.variables['trainable']))
    """


@pytest.mark.parametrize("test", ["v is not self.model.embedding.embeddings",
                                  "v is not self.model.layers[0].kernel"])
def test_an_entry_filled_under_an_identity_test_is_found(test):
  assert scanned.found(_AGENT.replace("TEST", test)) == [
      ("var-list-filter", 15)]


def test_an_entry_filled_under_a_none_check_is_silent():
  assert scanned.found(_AGENT.replace("TEST", "v is not None")) == []


def _setters(n):
  """One class: an image and a copy written from a placeholder, and `n`
  steps of losses of their own training the copy."""
  return ("import numpy as np\nimport tensorflow as tf\n\nclass EAD:\n"
          "  def __init__(self, sess, model, shape):\n"
          "    self.sess = sess\n"
          "    self.slack = tf.Variable(np.zeros(shape), dtype=tf.float32)\n"
          "    self.timg = tf.Variable(np.zeros(shape), dtype=tf.float32)\n"
          "    self.assign = tf.compat.v1.placeholder(tf.float32, shape)\n"
          "    self.setter = tf.compat.v1.assign(self.slack, self.assign)\n"
          "    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)\n"
          + "".join(
              f"    self.loss{k} = tf.reduce_sum(model(self.slack * {k}.0)) + "
              "tf.reduce_sum(tf.square(self.slack - self.timg))\n"
              f"    self.train{k} = optimizer.minimize(self.loss{k}, "
              "var_list=[self.slack])\n" for k in range(n))
          + "\n  def attack(self, batch):\n"
          "    self.sess.run(self.setter, {self.assign: batch})\n" + "".join(
              f"    for _ in range(9):\n      self.sess.run(self.train{k})\n"
              for k in range(n)))


def test_a_class_of_many_steps_reads_its_setters_once():
  # Was quadratic: each step walked every value the class keeps (x14).
  assert scanned.found(_setters(3)) == []
  small, large = (scanned.scan_work(_setters(n), "_fed_inputs.py")
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


def _helper_calls(n):
  """A head's loss summing `n` calls of one method of `n` plain lines
  over its arguments only (`metrics.squared(score, y)`)."""
  lines = "".join(f"        d{k} = tf.square(a - b) * {k}.0\n"
                  for k in range(n))
  calls = " + ".join(f"metrics.squared(s, y{k})" for k in range(n))
  return ("import tensorflow as tf\n\n\nclass Metrics(object):\n"
          "    def __init__(self, scale):\n        self.scale = scale\n\n"
          "    def squared(self, a, b):\n" + lines +
          "        return tf.reduce_mean(d0)\n\n\n"
          "def train(x, s, " + ", ".join(f"y{k}" for k in range(n)) + "):\n"
          "    metrics = Metrics(2.0)\n"
          "    with tf.variable_scope('critic'):\n"
          "        score = tf.layers.dense(x, 1)\n"
          f"    loss = {calls}\n"
          "    critic_vars = [v for v in tf.trainable_variables()\n"
          "                   if v.name.startswith('critic')]\n"
          "    return tf.train.AdamOptimizer(1e-3).minimize(\n"
          "        loss, var_list=critic_vars)\n")


def test_a_method_a_loss_calls_many_times_is_walked_once():
  # Was quadratic: each call walked the method it calls three times, and
  # the function holding it once (x14).
  small, large = (scanned.scan_work(_helper_calls(n), "_own_loss.py")
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)
