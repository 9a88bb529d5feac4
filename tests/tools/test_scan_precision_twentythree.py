"""`tfpartial scan` stays silent on a look-alike that part twenty-two's
negative codebases showed.

Adversarial training (PGD) on an embedding: the step's loop perturbs the
embedding (`assign_add`), projects it back into a ball around a full
copy taken before, and restores the whole embedding from that copy
before `apply_gradients` in the same pass: the perturbation is undone,
every element still trains. The twins that freeze are still found: the
copy written back after the step, or into chosen rows only. Synthetic
sources in the shape of real code."""

import pytest
import scanned


_PGD = """\
    import tensorflow as tf

    class Train:
      def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

      def train(self, batches, k):
        {copy_before}
        for step, (x, y) in enumerate(batches):
          with tf.GradientTape() as tape:
            logits = self.model(x, training=1)
            loss = tf.reduce_mean(tf.square(logits - y))
          variables = self.model.trainable_variables
          gradients = tape.gradient(loss, variables)
          {copy_here}origin_embedding = tf.Variable(variables[0])
          for t in range(k):
            delta = 0.3 * gradients[0] / tf.norm(gradients[0], ord=2)
            variables[0].assign_add(delta)
            r = variables[0] - origin_embedding
            variables[0].assign(origin_embedding + tf.Variable(r))
            with tf.GradientTape() as gan_tape:
              logits = self.model(x, training=1)
              loss = tf.reduce_mean(tf.square(logits - y))
            gan_gradients = gan_tape.gradient(loss, variables)
            gradients = [g + a for g, a in zip(gradients, gan_gradients)]
          {before}
          self.optimizer.apply_gradients(zip(gradients, variables))
          {after}
    """

_RESTORE = "variables[0].assign(origin_embedding)"
_ROWS = "variables[0][:10].assign(origin_embedding[:10])"


_IN_PASS = {"copy_before": "pass", "copy_here": ""}
# The copy taken once, before training: each pass's restore undoes the
# step before it.
_ONCE = {"copy_before": "variables = self.model.trainable_variables\n"
                        "        origin_embedding = tf.Variable(variables[0])",
         "copy_here": "# "}


def test_adversarial_perturbation_undone_before_the_step():
  files = {"train.py": _PGD.format(before=_RESTORE, after="pass",
                                   **_IN_PASS)}
  assert scanned.in_project(files) == []


@pytest.mark.parametrize("before, after, copied", [
    ("pass", _RESTORE, _IN_PASS),
    ("pass", _ROWS, _IN_PASS),
    (_RESTORE, "pass", _ONCE),
], ids=["written_back_after_the_step", "chosen_rows_after_the_step",
        "copy_taken_once_before_training"])
def test_copy_written_back_over_a_step_is_found(before, after, copied):
  files = {"train.py": _PGD.format(before=before, after=after, **copied)}
  found = scanned.in_project(files)
  assert found and all(f[0] in ("shadow-variable", "write-back")
                       for f in found), found

