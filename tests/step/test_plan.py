"""The step's plan (`_step._plan`): one action per variable, decided alone.

The plan is the one place a step, `mask_gradients` and `mask` decide what
happens to a variable; these tests pin every branch of it without running
an optimizer, then check that the step and the masks follow it.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._frozen import _selection
from tfpartial._step import _mask
from tfpartial._step import _plan
from tfpartial._step._plan import Action

SHAPE = (4, 3)
PART = _selection.from_mask(np.eye(4, 3, dtype=bool))
EVERYTHING = _selection.Everything(SHAPE)
NOTHING = _selection.from_mask(np.zeros(SHAPE, bool))
ROWS = _selection.from_rows(SHAPE, np.array([1, 2]), trains=True)
COMPACT = _selection.from_rows(SHAPE, np.array([1, 2]), trains=True,
                               compact=True)
GRAD = tf.ones(SHAPE)


def _action(selection, grad=GRAD, keep=False, compact=False, kernel=None):
  return _plan.action(grad, tf.Variable(tf.zeros(SHAPE)), selection,
                      keep_fully_frozen=keep, compact=compact, kernel=kernel)


def _yes(grad, variable, selection):
  del grad, variable, selection
  return True


def _no(grad, variable, selection):
  del grad, variable, selection
  return False


@pytest.mark.parametrize("selection, grad, keep, compact, kernel, expected", [
    (None, GRAD, False, False, None, Action.KEEP),
    (NOTHING, GRAD, True, True, _yes, Action.KEEP),
    (EVERYTHING, GRAD, False, False, _yes, Action.DROP),
    (EVERYTHING, None, False, False, None, Action.DROP),
    (EVERYTHING, GRAD, True, False, None, Action.ZERO),
    (EVERYTHING, GRAD, True, False, _no, Action.ZERO),
    (EVERYTHING, None, True, False, _yes, Action.ZERO),
    (EVERYTHING, GRAD, True, False, _yes, Action.KERNEL),
    (PART, GRAD, False, False, None, Action.MASK),
    (PART, None, False, False, _yes, Action.KEEP),
    (PART, GRAD, False, False, _no, Action.MASK),
    (PART, GRAD, False, False, _yes, Action.KERNEL),
    (ROWS, GRAD, False, True, None, Action.MASK),
    (COMPACT, GRAD, False, True, _yes, Action.COMPACT),
    (COMPACT, None, False, True, None, Action.COMPACT),
    (COMPACT, GRAD, False, False, None, Action.MASK),
], ids=lambda value: getattr(value, "__name__", None))
def test_each_case_gets_its_action(selection, grad, keep, compact, kernel,
                                   expected):
  assert _action(selection, grad, keep, compact, kernel) is expected


def test_the_kernel_is_asked_only_where_it_could_serve():
  asked = []

  def kernel(grad, variable, selection):
    asked.append(selection)
    return False

  for selection in (None, NOTHING, PART, EVERYTHING, COMPACT):
    _action(selection, keep=False, compact=True, kernel=kernel)
  _action(PART, grad=None, kernel=kernel)
  assert asked == [PART]


def test_restored_entries_are_the_masked_and_the_zeroed_with_a_gradient():
  variable = tf.Variable(tf.zeros(SHAPE))
  restored = {action: _plan.Entry(action, GRAD, variable, PART).restored
              for action in Action}
  assert restored == {Action.KEEP: False, Action.DROP: False,
                      Action.ZERO: True, Action.MASK: True,
                      Action.KERNEL: False, Action.COMPACT: False}
  assert not _plan.Entry(Action.ZERO, None, variable, EVERYTHING).restored


def test_the_masks_follow_the_plan():
  # mask_gradients drops what the plan drops; mask keeps one entry each.
  x, y, z = (tf.Variable(tf.zeros(SHAPE), name=n) for n in "xyz")
  lookup = {x.ref(): PART, y.ref(): EVERYTHING}.get
  pairs = [(GRAD * np.nan, x), (GRAD, y), (None, z)]
  dropped = _mask.mask_gradients(lambda v: lookup(v.ref()), pairs)
  assert [v.name for _, v in dropped] == ["x:0", "z:0"]
  aligned = _mask.mask_aligned(lambda v: lookup(v.ref()), pairs)
  assert len(aligned) == 3 and aligned[2] is None
  helpers.assert_same_bits(aligned[1].numpy(), np.zeros(SHAPE, np.float32))
  frozen = PART.frozen_mask()
  helpers.assert_same_bits(aligned[0].numpy()[frozen],
                           np.zeros(frozen.sum(), np.float32))
  assert np.isnan(aligned[0].numpy()[~frozen]).all()


def test_the_step_runs_what_the_plan_says(monkeypatch):
  # Every variable of a step goes through the plan, once, in order.
  planned = []
  real = _plan.plan

  def spy(pairs, lookup, **options):
    entries = real(pairs, lookup, **options)
    planned.extend(entry.action for entry in entries)
    return entries

  helpers.unfused(monkeypatch)  # So the plan masks: no kernel takes x.
  monkeypatch.setattr(_plan, "plan", spy)
  x, y = tf.Variable(tf.ones(SHAPE)), tf.Variable(tf.ones(SHAPE))
  spec = tfpartial.freeze(x, np.eye(4, 3, dtype=bool)) | tfpartial.freeze(y)
  before = x.numpy()
  spec.apply_gradients(tf.keras.optimizers.SGD(0.5),
                       [(GRAD, x), (GRAD, y)])
  assert planned == [Action.MASK, Action.DROP], planned
  frozen = spec.frozen_mask(x)
  helpers.assert_same_bits(x.numpy()[frozen], before[frozen])
  assert (x.numpy()[~frozen] == 0.5).all()


def test_a_step_of_only_fully_frozen_variables_is_a_clear_error():
  x = tf.Variable(tf.ones(SHAPE), name="x")
  with pytest.raises(ValueError, match=r"every variable in `grads_and_vars` "
                     r"is fully frozen by the spec \(x\)"):
    tfpartial.freeze(x).apply_gradients(tf.keras.optimizers.SGD(0.5),
                                        [(GRAD, x)])
