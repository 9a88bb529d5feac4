"""`tfpartial scan`'s cost after the final read of round forty-two: a
class whose methods each switch a stage through a `self.` flag counts
the class's flag assignments once, not once per method (the walk per
method made the work of `_scheduled` grow x16 for a class four times as
large). Synthetic source in the shape of the read's probe."""

import scanned


def _methods(n):
  """One class with `n` methods, each a two-stage loop switched by its
  own `self.single{i}` flag."""
  return "import tensorflow as tf\n\n\nclass Net(object):\n" + "".join(f"""
  def train{i}(self, sess, loss):
    base = tf.train.AdamOptimizer().minimize(loss, var_list=[
        v for v in tf.trainable_variables() if "base" in v.name])
    att = tf.train.AdamOptimizer().minimize(loss, var_list=[
        v for v in tf.trainable_variables() if "att" in v.name])
    for epoch in range(60):
      if epoch <= 30:
        self.single{i} = True
      else:
        self.single{i} = False
      if self.single{i}:
        sess.run(base)
      else:
        sess.run([loss, att])
""" for i in range(n))


def test_a_class_of_flagged_stages_counts_its_flags_once():
  small, large = (scanned.scan_work(_methods(n), "_scheduled.py")
                  for n in (20, 80))
  assert large <= 5 * small, (small, large)
