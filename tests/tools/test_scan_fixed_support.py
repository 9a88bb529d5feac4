"""`tfpartial scan`'s `weight-remask` on a support saved once and fed back
after each later step (iterative hard thresholding, then sparse
retraining on the support it found); beside it, the look-alikes that keep
nothing fixed: a support made again from the values it masks, a re-mask
only before an evaluation."""

import pytest

import scanned

_TRAINER = """\
    import numpy as np
    import tensorflow as tf

    def copy_support(src, dest):
      out = np.zeros(dest.shape)
      out[np.nonzero(src)] = dest[np.nonzero(src)]
      return out

    class Trainer:
      def __init__(self, model, sparsity):
        self.model = model
        self.sparsity = sparsity
        self.w_ph = tf.placeholder(tf.float32)
        self.group = tf.group(self.model.W.assign(self.w_ph))
        self.train_op = tf.train.AdamOptimizer(0.01).minimize(model.loss)

      def hard_threshold(self, sess):
        current = self.model.W.eval()
        self.thrsd_w = hard_threshold(current, self.sparsity)
        sess.run(self.group, feed_dict={self.w_ph: self.thrsd_w})

      def REMASK(self, sess):
        SAVED
        new_w = copy_support(self.thrsd_w, self.model.W.eval())
        feed = {}
        feed[self.w_ph] = new_w
        sess.run(self.group, feed_dict=feed)

      def train(self, sess, batches):
        total = len(batches)
        for i, (x, y) in enumerate(batches):
          sess.run(self.train_op, feed_dict={self.model.x: x})
          if total / 3 <= i < 2 * total / 3:
            self.hard_threshold(sess)
          elif i >= 2 * total / 3RETRAIN:
            self.sparse_retrain(sess)
        AFTER
    """


def _remasks(**parts):
  filled = dict(REMASK="sparse_retrain", SAVED="pass", RETRAIN="",
                AFTER="pass")
  filled.update(parts)
  code = _TRAINER
  for key, text in filled.items():
    code = code.replace(key, text)
  return [f[1] for f in scanned.in_text(code, "weight-remask")]


def test_support_saved_by_thresholding_fed_back_each_step():
  assert _remasks() == [24]


@pytest.mark.parametrize("parts", [
    # The support made again here from the weights: magnitude pruning.
    dict(SAVED="self.thrsd_w = hard_threshold(self.model.W.eval(), 0.5)"),
    # Re-masked once, after training, before an evaluation.
    dict(RETRAIN=" and False", REMASK="masked_eval",
         AFTER="self.masked_eval(sess)"),
], ids=["support-made-again-here", "only-before-evaluation"])
def test_look_alikes_stay_silent(parts):
  assert _remasks(**parts) == []


_ROWS = """\
    def train(session, table, loss, flagged_ids, batches):
      step = tf.train.AdagradOptimizer(0.1).minimize(loss)
      resets = [unit_sphere(table)]
      for idx in flagged_ids:
        ones = tf.ones_like(table[idx, :])
        resets += [table[idx, :].assign(ones)]
      BEFORE
      for batch in batches:
        session.run(step, feed_dict=batch)
        AFTER
    """


@pytest.mark.parametrize("before, after, expected", [
    # Rows chosen by a flag list set back to ones after every step.
    ("pass", "for op in resets: session.run(op)", [6]),
    # The same rows set to ones once, before training: an initialisation.
    ("for op in resets: session.run(op)", "pass", []),
], ids=["after-each-step", "once-before-training"])
def test_rows_set_back_to_a_constant(before, after, expected):
  code = _ROWS.replace("BEFORE", before).replace("AFTER", after)
  assert [f[1] for f in scanned.in_text(code, "weight-remask")] == expected
