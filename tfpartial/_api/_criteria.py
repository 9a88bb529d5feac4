"""The public criteria: indices computed from a variable's values.

`zeros`, `largest`, `smallest`, `n_of_m` and `random_subset` make a
criterion, the `index` of `tfpartial.freeze` / `tfpartial.train_only`;
`freeze_across` and `train_only_across` rank one across several variables
(a spec file's `"scope": "entry"`). The same criteria as spec file
entries: `_frozen/_criteria.py`.
"""

from __future__ import annotations

from typing import Iterable, Optional

from tfpartial._api._spec import FreezeSpec
from tfpartial._frozen import _criteria
from tfpartial._frozen import _value
from tfpartial._frozen._criteria import Criterion
from tfpartial._frozen._types import Variable


def zeros() -> Criterion:
  """The elements whose value is zero, +0.0 or -0.0: a pruned model's zeros.

  As the `index` of `tfpartial.freeze`, it keeps a pruned model's zeros
  (with their sign) while the rest trains; a spec file says
  `{"freeze": {"where": "zero"}}`. Like every criterion, it is computed
  from the variable's value when the spec is made (a spec file's, when it
  binds), once: values assigned later do not move it.

  Returns:
    A criterion.

  >>> w = tf.Variable([[0.5, 0.0], [-0.0, 2.0]], name="w")
  >>> spec = tfpartial.freeze(w, tfpartial.zeros())
  >>> spec.frozen_mask(w)
  array([[False,  True],
         [ True, False]])
  >>> print(spec.to_json())
  {
    "w": {"freeze": {"where": "zero"}, "shape": [2, 2]}
  }
  """
  return Criterion("where")


def largest(fraction: Optional[float] = None, *, k: Optional[int] = None,
            by: str = "magnitude") -> Criterion:
  """The `fraction` (or `k`) of elements of largest magnitude.

  `fraction` F selects `floor(F * n + 0.5)` of a variable's n elements, at
  least one; `k` exactly k. Ties break by flat (row-major) position,
  lowest first; a NaN ranks above every number. Computed from the value
  when the spec is made, once: values assigned later do not move it. A
  spec file says `{"top": F, "by": "magnitude"}` or `{"top_k": K, "by":
  "magnitude"}`; `train_only_across` ranks across several variables.

  Args:
    fraction: 0 < fraction <= 1; or give `k`.
    k: a count of elements, at least 1 and at most the variable's size.
    by: `"magnitude"` (|value|), the one ranking there is.

  Returns:
    A criterion.

  Raises:
    ValueError: neither or both of `fraction` and `k`, or either out of
      range.

  >>> w = tf.Variable([[0.1, -3.0], [2.0, 0.5]], name="w")
  >>> tfpartial.train_only(w, tfpartial.largest(0.5)).frozen_mask(w)
  array([[ True, False],
         [False,  True]])
  >>> tfpartial.largest(k=3)
  tfpartial.largest(k=3)
  """
  return _ranked("top", fraction, k, by)


def smallest(fraction: Optional[float] = None, *, k: Optional[int] = None,
             by: str = "magnitude") -> Criterion:
  """The `fraction` (or `k`) of elements of smallest magnitude.

  As `largest`, from the other end (`{"bottom": F, "by": "magnitude"}`,
  `{"bottom_k": K, ...}` in a spec file); ties by lowest position.

  Args:
    fraction: 0 < fraction <= 1; or give `k`.
    k: a count of elements.
    by: `"magnitude"`.

  Returns:
    A criterion.

  Raises:
    ValueError: as for `largest`.

  >>> w = tf.Variable([0.1, -3.0, 0.0, 0.5], name="w")
  >>> tfpartial.freeze(w, tfpartial.smallest(k=2)).frozen_mask(w)
  array([ True, False,  True, False])
  """
  return _ranked("bottom", fraction, k, by)


def n_of_m(n: int, m: int, axis: int = -1) -> Criterion:
  """In each group of `m` consecutive elements along `axis`, the `n` of
  largest magnitude: N:M sparsity (2:4 for sparse tensor cores).

  `m` must divide the axis' length (checked against the variable); ties
  break by lowest position. `train_only(kernel, n_of_m(2, 4))` fine-tunes
  a 2:4-pruned kernel keeping its pattern; a spec file says
  `{"n_m": [2, 4], "axis": -1}`.

  Args:
    n: how many of each group, 1 <= n <= m.
    m: the group's size along `axis`.
    axis: the axis the groups run along.

  Returns:
    A criterion.

  Raises:
    ValueError: `n` or `m` out of range, or not integers.

  >>> w = tf.Variable([[0.1, -3.0, 2.0, 0.5], [1.0, 1.0, 1.0, 1.0]], name="w")
  >>> tfpartial.train_only(w, tfpartial.n_of_m(2, 4)).frozen_mask(w)
  array([[ True, False, False,  True],
         [False, False,  True,  True]])
  """
  return _criteria.make("n_m", [n, m], {"axis": axis}, "`n_of_m`")


def random_subset(fraction: float, seed: int) -> Criterion:
  """A fraction of the elements, chosen by `seed`: the same for the same
  seed, shape and checkpoint name, on any machine.

  Each element's flat position p gets a 64-bit key, SplitMix64's output
  for p from a state made from SHA-256 of the seed, the shape and the
  name; the `floor(fraction * n + 0.5)` elements of smallest key are
  selected (`tfpartial._frozen._ranking` says it to the bit). No NumPy
  generator is involved, so no NumPy release changes it. A spec file says
  `{"random": F, "seed": S}`.

  Args:
    fraction: 0 < fraction <= 1.
    seed: an integer from 0 to 2**64 - 1.

  Returns:
    A criterion.

  Raises:
    ValueError: `fraction` or `seed` out of range.

  >>> w = tf.Variable(tf.zeros([100, 10]), name="w")
  >>> spec = tfpartial.train_only(w, tfpartial.random_subset(0.05, seed=7))
  >>> int((~spec.frozen_mask(w)).sum())
  50
  """
  return _criteria.make("random", fraction, {"seed": seed},
                        "`random_subset`")


def freeze_across(variables: Iterable[Variable], criterion: Criterion, *,
                  compact: bool = False) -> FreezeSpec:
  """A spec freezing what `criterion` selects ranked across `variables`.

  The variables are one population: `largest(0.01)` selects the 1% of
  largest magnitude among all their elements together, wherever they fall
  (a spec file's `"scope": "entry"`). They are ranked in the order of
  their checkpoint names, each row-major, for ties. `zeros` and `n_of_m`
  select element by element, so across is the same as each alone.

  With one variable, this is `tfpartial.freeze(variable, criterion)`
  that can also be compact: `freeze_across([kernel], tfpartial.zeros(),
  compact=True)` keeps a pruned kernel's zeros and trains the rest through
  a small variable of just those (a spec file's `{"freeze": {"where":
  "zero"}, "compact": true}`).

  Args:
    variables: the variables, each with a checkpoint name of its own.
    criterion: a criterion (`largest`, `smallest`, `random_subset`, ...).
    compact: the elements not frozen train through a small variable of
      their own, as `tfpartial.train_only(..., compact=True)` trains.

  Returns:
    A `FreezeSpec` naming every variable; `to_json` writes the criterion
    with `"scope": "entry"` and a `"group"` naming the variables ranked
    together.

  Raises:
    TypeError: `criterion` is not one, or an item is not a variable.
    ValueError: no variables, two with one name, or the criterion does
      not fit them.

  >>> a = tf.Variable([1.0, 9.0], name="a")
  >>> b = tf.Variable([5.0, 2.0, 7.0], name="b")
  >>> spec = tfpartial.freeze_across([a, b], tfpartial.largest(k=2))
  >>> spec.frozen_mask(a), spec.frozen_mask(b)
  (array([False,  True]), array([False, False,  True]))
  """
  return FreezeSpec._of(_value.across(list(variables), criterion,
                                      trains=False, compact=compact))


def train_only_across(variables: Iterable[Variable], criterion: Criterion,
                      *, compact: bool = False) -> FreezeSpec:
  """A spec training only what `criterion` selects across `variables`.

  As `freeze_across`, the complement: the top 0.5% by magnitude of a whole
  model's kernels train, wherever they fall.

  Args:
    variables: the variables, each with a checkpoint name of its own.
    criterion: a criterion.
    compact: as for `tfpartial.train_only`: each variable trains through a
      small variable of its selected elements.

  Returns:
    A `FreezeSpec` naming every variable.

  Raises:
    TypeError, ValueError: as for `freeze_across`.

  >>> a = tf.Variable([1.0, 9.0], name="a")
  >>> b = tf.Variable([5.0, 2.0, 7.0], name="b")
  >>> spec = tfpartial.train_only_across([a, b], tfpartial.largest(0.4))
  >>> spec.frozen_mask(a), spec.frozen_mask(b)
  (array([ True, False]), array([ True,  True, False]))
  """
  return FreezeSpec._of(_value.across(list(variables), criterion,
                                      trains=True, compact=compact))


def _ranked(side: str, fraction: Optional[float], k: Optional[int],
            by: str) -> Criterion:
  where = f"`{'largest' if side == 'top' else 'smallest'}`"
  if (fraction is None) == (k is None):
    raise ValueError(f"{where} takes `fraction` or `k`, one of them; got "
                     f"fraction={fraction!r}, k={k!r}.")
  if by != "magnitude":
    raise ValueError(f"{where}: `by` must be \"magnitude\"; got {by!r}.")
  if k is not None:
    return _criteria.make(f"{side}_k", k, {}, where)
  return _criteria.make(side, fraction, {}, where)
