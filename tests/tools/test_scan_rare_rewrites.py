"""`tfpartial scan` on the rarer idioms written in the other forms real
teams use for the same freeze (a recall fuzz over the reviewed instances
of parts ten to thirteen): a mask's complement taken off the weights
(`w.assign_sub(w * (1 - m))`, the re-mask `w.assign(w * m)` spelled as a
subtraction), a copy blended back with the mask beside the live weights
(`m * w + (1 - m) * copy`). Beside each, a look-alike that must stay
silent: weight decay and a shrink taken off by `assign_sub`, an EMA and a
target network blended the same way."""

import pytest

import scanned


_found = scanned.in_project

_LOOP = """\
    import tensorflow as tf
    def train(model, data, masks, opt):
      for x, y in data:
        with tf.GradientTape() as tape:
          loss = model.loss(model(x), y)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        for v, m in zip(model.trainable_variables, masks):
          {write}
    """


@pytest.mark.parametrize("write, expected", [
    ("v.assign_sub(v * (1.0 - m))", [("weight-remask", "t.py", 9)]),
    ("v.assign_sub(tf.multiply(1 - m, v))", [("weight-remask", "t.py", 9)]),
    ("tf.compat.v1.assign_sub(v, (1.0 - m) * v)",
     [("weight-remask", "t.py", 9)]),
    # The look-alikes: weight decay, a shrink by a rate (a scale, no mask).
    ("v.assign_sub(1e-4 * v)", []),
    ("v.assign_sub(v * (1.0 - 0.999))", []),
    ("v.assign_sub(v * opt.learning_rate * 1e-4)", []),
])
def test_a_mask_complement_taken_off_the_weights(write, expected):
  assert _found(_LOOP.format(write=write)) == expected


_SHADOW = """\
    import tensorflow as tf
    def build(loss, w, mask):
      shadow = tf.get_variable('w_frozen', initializer=w.initialized_value(), trainable=False)
      train_op = tf.train.AdamOptimizer().minimize(loss)
      with tf.control_dependencies([train_op]):
        restore = {write}
      return restore
    """


@pytest.mark.parametrize("write, expected", [
    ("tf.assign(w, (1. - mask) * w + mask * shadow)",
     [("shadow-variable", "t.py", 6)]),
    ("tf.assign(w, mask * w + (1. - mask) * shadow)",
     [("shadow-variable", "t.py", 6)]),
    ("w.assign(w * mask + shadow * (1 - mask))",
     [("shadow-variable", "t.py", 6)]),
    # The look-alikes: an EMA of the weights kept in the copy, a target
    # network's soft update (another variable's values blended in).
    ("tf.assign(shadow, mask * shadow + (1. - mask) * w)", []),
    ("shadow.assign(0.99 * shadow + (1 - 0.99) * w)", []),
])
def test_a_copy_blended_back_with_the_mask_beside_the_weights(write,
                                                               expected):
  assert _found(_SHADOW.format(write=write)) == expected


_PROJECTED = """\
    import numpy as np
    def local_train(model, x, y, mask, rate):
      before = model.get_weights()
      model.fit(x, y, epochs=1)
      after = model.get_weights()
      {project}
      model.set_weights(projected)
    """


@pytest.mark.parametrize("project, expected", [
    # The step's change kept where a mask says, the saved values put back
    # in the other elements (a federated client's projected update).
    ("projected = [b + (a - b) * m for b, a, m in zip(before, after, mask)]",
     [("write-back", "t.py", 7)]),
    ("projected = [b + m * (a - b) for a, b, m in zip(after, before, mask)]",
     [("write-back", "t.py", 7)]),
    # The look-alikes: the change scaled by a rate (a server's step size,
    # Reptile's meta-update): every element moves.
    ("projected = [b + (a - b) * rate for b, a in zip(before, after)]", []),
    ("projected = [b + (a - b) * 0.5 for b, a in zip(before, after)]", []),
    # Each element chosen by the mask from the weights after the step or
    # the ones saved before it, once, after training: written back still.
    ("projected = [np.where(m, a, b) for a, b, m in zip(after, before, mask)]",
     [("write-back", "t.py", 7)]),
    # The look-alikes: a guard on the step's values (NaN elements set to
    # zero or rolled back), chosen by the values, not by a mask.
    ("projected = [np.where(np.isnan(a), 0.0, a) for a in after]", []),
    ("projected = [np.where(np.isnan(a), b, a) for a, b in zip(after, before)]",
     []),
])
def test_a_masked_change_put_back_onto_the_saved_weights(project, expected):
  assert _found(_PROJECTED.format(project=project)) == expected


def test_weights_re_masked_stay_a_re_mask():
  # The weights read out after the step and masked: nothing saved.
  assert _found(_PROJECTED.format(
      project="projected = [a * m for a, m in zip(after, mask)]")) == [
          ("weight-remask", "t.py", 7)]
