"""The conformance suite every optimizer family runs.

After Sonnet's `optimizer_tests.py` (an `OptimizerTestBase` subclassed per
optimizer): `Suite` states each guarantee once, as a test method, and a
family is done when its subclass passes the suite in every mode. A family's
test file subclasses it as `class TestFAMILY(conformance.Suite)` and
supplies:

- `OPTIMIZERS`: name -> factory, and `NAMES`: which of them each group of
  methods runs ("main": every method on the problem of `problems.py`;
  "decay": those whose regulariser or weight decay moves a weight whose
  gradient is zero; "rows": row gradients; "compact": compact element
  masks), and `PLAIN_DIFFERS`: those whose plain runs (no tfpartial)
  give other bits in one exact way than in another.
- a `way` fixture: one way of training (a mode of `conftest.py`, and for
  v1 an entry point too), and `EXACT_WAYS`, those that guarantee 3 says
  give the same bits.
- the hooks below (`train`, `reference`, `rows`, `plain_run`, `plain_state`,
  `zero_gradient_moves`, `fuses`, `wraps`).

Every run is cached for the process by (family, what, way, optimizer): the
methods that read one run (frozen bits, the reference, the state layout,
the same bits in every mode) train it once, and a split reference is shared
by every entry point and spec of its mode.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np

import compact_problem as cp
import helpers
import problems
from problems import B0, C0, X0, X_FROZEN

STEPS = 4
# Where `compact_problem.IDS` looks up a frozen row (`rows` poisons the
# gradient there).
FROZEN_LOOKUPS = np.broadcast_to(
    ~np.isin(cp.IDS, cp.TRAIN_ROWS)[..., None], cp.IDS.shape + (cp.DIM,))
Values = Tuple[np.ndarray, np.ndarray, np.ndarray]  # x, b, c after a step.


def poisoned_rows(table_model):
  """A Keras table model of `compact_problem.keras_models`, the gradient
  of each frozen id's lookup Inf/NaN."""

  class PoisonedTable(table_model):

    def call(self, ids):
      return problems.poisoned(super().call(ids), FROZEN_LOOKUPS)

  return PoisonedTable


@dataclasses.dataclass
class Run:
  """One training run under a spec: (x, b, c) after each step, the
  optimizer's state layout (`plain_state`'s form) and its state's shapes."""

  trajectory: List[Values]
  layout: Any
  shapes: frozenset


_RUNS: Dict[tuple, Any] = {}


def group(name: str) -> Callable:
  """Marks a test method as running the optimizers of `NAMES[name]`."""

  def mark(method):
    method.names_group = name
    return method

  return mark


class Suite:
  """The guarantees of every optimizer family, one test method each.

  x is frozen in a slice and two scattered elements, b whole, c is not in
  the spec; the frozen gradients are Inf and NaN throughout.
  """

  OPTIMIZERS: Dict[str, Callable] = {}
  NAMES: Dict[str, Sequence[str]] = {}
  PLAIN_DIFFERS: Sequence[str] = ()
  EXACT_WAYS: Sequence[Any] = ()

  # -- What a family supplies. -------------------------------------------

  def train(self, way, name: str, compact: bool) -> Run:
    """Trains x, b, c STEPS steps under the spec (`compact`: x by
    `train_only(x, ~X_FROZEN, compact=True)`) in `way`."""
    raise NotImplementedError

  def reference(self, way, name: str) -> List[Tuple[np.ndarray, np.ndarray]]:
    """The split-variable reference in `way`: (t, c) after each step."""
    raise NotImplementedError

  def rows(self, way, name: str) -> Tuple[list, list]:
    """`compact_problem`'s table under `train_only(table, TRAIN_ROWS)`,
    frozen rows' gradients Inf, and its split reference: the table and
    the reference's variable after each step."""
    raise NotImplementedError

  def plain_run(self, way, name: str) -> List[np.ndarray]:
    """x after each step of a plain run (no spec, no poison); needed for
    the optimizers of `PLAIN_DIFFERS` only."""
    raise NotImplementedError

  def plain_state(self, name: str, variables: Tuple[str, ...]) -> Any:
    """The state layout of a plain run of the optimizer on `variables`
    (of "x", "b", "c")."""
    raise NotImplementedError

  def zero_gradient_moves(self, name: str) -> bool:
    """Whether a plain step with a zero gradient moves a weight."""
    raise NotImplementedError

  def fuses(self, way) -> bool:
    """Whether XLA compiles the step: round-off, not bits."""
    raise NotImplementedError

  def wraps(self, way) -> bool:
    """Whether `way` steps with a wrapped optimizer."""
    raise NotImplementedError

  # -- Plumbing. ----------------------------------------------------------

  def pytest_generate_tests(self, metafunc):
    if "name" in metafunc.fixturenames:
      names = self.NAMES[getattr(metafunc.function, "names_group", "main")]
      metafunc.parametrize("name", sorted(names))

  def _cached(self, key: tuple, compute: Callable[[], Any]) -> Any:
    key = (type(self).__qualname__,) + key
    if key not in _RUNS:
      _RUNS[key] = compute()
    return _RUNS[key]

  def _run(self, way, name, compact=False) -> Run:
    return self._cached(("train", repr(way), name, compact),
                        lambda: self.train(way, name, compact))

  def _reference(self, way, name):
    return self._cached(("reference", self.reference_key(way), name),
                        lambda: self.reference(way, name))

  def reference_key(self, way) -> str:
    """Ways that share a split reference (v1: one per mode, whatever the
    entry point) have the same key."""
    return repr(way)

  def _tolerance(self, way) -> dict:
    return (dict(rtol=2e-5, atol=1e-6) if self.fuses(way)
            else dict(rtol=1e-6, atol=1e-7))

  def _check_frozen(self, trajectory):
    for step, (x, b, _) in enumerate(trajectory, start=1):
      helpers.assert_same_bits(x[X_FROZEN], X0[X_FROZEN],
                               f"frozen x, step {step}")
      helpers.assert_same_bits(b, B0, f"fully frozen b, step {step}")

  # -- The guarantees. ----------------------------------------------------

  def test_frozen_elements_keep_their_bits(self, way, name):
    """Guarantee 1, under Inf and NaN frozen gradients."""
    trajectory = self._run(way, name).trajectory
    assert len(trajectory) == STEPS
    for step, (x, _, _) in enumerate(trajectory, start=1):
      helpers.assert_same_bits(x[X_FROZEN], X0[X_FROZEN],
                               f"frozen x, step {step}")
      assert np.isfinite(x).all(), f"x, step {step}"

  def test_a_fully_frozen_variable_keeps_its_bits(self, way, name):
    for step, (_, b, _) in enumerate(self._run(way, name).trajectory, 1):
      helpers.assert_same_bits(b, B0, f"fully frozen b, step {step}")

  def test_trainable_elements_follow_the_split_reference(self, way, name):
    """Guarantee 2: float32 round-off at most (XLA fuses: looser)."""
    trajectory = self._run(way, name).trajectory
    reference = self._reference(way, name)
    assert len(trajectory) == len(reference) == STEPS
    for step, ((x, _, _), (t, _)) in enumerate(zip(trajectory, reference), 1):
      np.testing.assert_allclose(x[~X_FROZEN], t, **self._tolerance(way),
                                 err_msg=f"x trainable, step {step}")
    assert not np.array_equal(trajectory[-1][0][~X_FROZEN], X0[~X_FROZEN]), (
        "x did not train")

  def test_a_variable_not_in_the_spec_follows_the_split_reference(
      self, way, name):
    trajectory = self._run(way, name).trajectory
    reference = self._reference(way, name)
    for step, ((_, _, c), (_, c_ref)) in enumerate(
        zip(trajectory, reference), start=1):
      assert np.isfinite(c).all(), f"c, step {step}"
      np.testing.assert_allclose(c, c_ref, **self._tolerance(way),
                                 err_msg=f"c, step {step}")
    assert not np.array_equal(trajectory[-1][2], C0), "c did not train"

  def test_the_state_layout_is_a_plain_runs(self, way, name):
    """Guarantee 7: a wrapped optimizer holds a plain run's state, fully
    frozen b included; `spec.apply_gradients` and `spec.minimize` leave a
    fully frozen variable out (no state for it), as `var_list` would."""
    variables = ("x", "b", "c") if self.wraps(way) else ("x", "c")
    plain = self._cached(("plain_state", name, variables),
                         lambda: self.plain_state(name, variables))
    assert self._run(way, name).layout == plain

  def test_every_exact_mode_gives_the_same_bits(self, name):
    """Guarantee 3: x, b and c after every step, in every exact way; but
    for the optimizers of `PLAIN_DIFFERS`, whose plain runs differ between
    ways (then the trajectory each way gives follows the reference)."""
    if name in self.PLAIN_DIFFERS:
      plain = [self.plain_run(way, name) for way in self.EXACT_WAYS]
      assert any(not np.array_equal(helpers.bits(plain[0][step]),
                                    helpers.bits(other[step]))
                 for other in plain[1:] for step in range(STEPS)), (
                     f"plain runs of {name} now agree: take it out of "
                     f"PLAIN_DIFFERS")
      return
    runs = {way: self._run(way, name).trajectory for way in self.EXACT_WAYS}
    (first_way, first), plain = next(iter(runs.items())), {}
    for way, other in runs.items():
      try:
        for step, (expected, actual) in enumerate(zip(first, other), start=1):
          for variable, e, a in zip("xbc", expected, actual):
            helpers.assert_same_bits(
                a, e, f"{way!r} vs {first_way!r}: {variable}, step {step}")
      except AssertionError:
        # Where TensorFlow itself gives other bits between these two ways
        # on this machine (their plain runs, no tfpartial, differ too:
        # Grappler's rewrite of Keras 3 Adagrad on some CPUs), the same
        # bits cannot be asked of tfpartial; each way still follows its
        # reference. Any other way must still give the first way's bits.
        for one in (first_way, way):
          plain.setdefault(one, self.plain_run(one, name))
        if all(np.array_equal(helpers.bits(e), helpers.bits(a))
               for e, a in zip(plain[first_way], plain[way])):
          raise

  @group("decay")
  def test_regularisers_and_weight_decay_do_not_move_frozen_elements(
      self, way, name):
    """The optimizer moves a weight whose gradient is zero (its
    regulariser or weight decay is on), yet not a frozen one, whose
    gradient the freeze makes zero."""
    assert self._cached(("zero_gradient_moves", name),
                        lambda: self.zero_gradient_moves(name)), (
                            f"{name} does not move a zero-gradient weight")
    self._check_frozen(self._run(way, name).trajectory)

  @group("rows")
  def test_row_gradients_train_exactly(self, way, name):
    """Guarantee 5: `tf.IndexedSlices` gradients of a lookup that repeats
    ids; frozen rows keep their bits, trainable ones follow the split
    reference bit for bit (XLA fuses: round-off)."""
    trajectory, reference = self.rows(way, name)
    cp.check("rows", trajectory, reference, exact=not self.fuses(way))

  @group("compact")
  def test_compact_element_masks_follow_the_split_reference(self, way, name):
    """`compact=True` on an element mask: the optimizer's state holds only
    the trainable elements, which follow the split reference bit for bit
    (XLA fuses: round-off)."""
    run = self._run(way, name, compact=True)
    reference = self._reference(way, name)
    self._check_frozen(run.trajectory)
    for step, ((x, _, c), (t, c_ref)) in enumerate(
        zip(run.trajectory, reference), start=1):
      if self.fuses(way):
        np.testing.assert_allclose(x[~X_FROZEN], t, **self._tolerance(way),
                                   err_msg=f"x trainable, step {step}")
        np.testing.assert_allclose(c, c_ref, **self._tolerance(way),
                                   err_msg=f"c, step {step}")
      else:
        helpers.assert_same_bits(x[~X_FROZEN], t, f"x trainable, step {step}")
        helpers.assert_same_bits(c, c_ref, f"c, step {step}")
    assert not np.array_equal(run.trajectory[-1][0][~X_FROZEN],
                              X0[~X_FROZEN]), "x did not train"
    assert X0.shape not in run.shapes, "the optimizer holds state the size of x"
    if X0.shape in self._run(way, name).shapes:  # Slots: now of what trains.
      assert (int((~X_FROZEN).sum()),) in run.shapes, run.shapes
