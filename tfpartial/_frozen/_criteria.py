"""Masks from a criterion: `{"where": "zero"}`, top/bottom by magnitude,
N:M, a seeded random subset; in a spec file or from Python.

A `Criterion` is an index computed from the variable's values when the
spec binds (`freeze`/`train_only` now, a late spec at its first step,
`verify` from BEFORE). It is checked in two steps: its own form when it is
read or made (`parse`, the helpers' arguments), then against the variable's
shape (`check`). `select` and `select_across` compute the mask
(`_ranking` says exactly how). The spec keeps the criterion beside the mask
(`Origin`), so that `to_json` writes it as written.

    {"where": "zero"}
    {"top": 0.01, "by": "magnitude"}      {"bottom_k": 100, "by": "magnitude"}
    {"top": 0.01, "by": "magnitude", "scope": "entry"}
    {"n_m": [2, 4], "axis": -1}
    {"random": 0.05, "seed": 0}
"""

from __future__ import annotations

import dataclasses
from typing import (Dict, FrozenSet, Hashable, List, Mapping, Optional,
                    Sequence, Tuple)

import numpy as np

from tfpartial._frozen import _ranking
from tfpartial._frozen._safejson import JSON

# The key that says which criterion a JSON object is.
KINDS = ("where", "top", "bottom", "top_k", "bottom_k", "n_m", "random")
_ALLOWED = {
    "where": {"where"},
    "top": {"top", "by", "scope", "group"},
    "bottom": {"bottom", "by", "scope", "group"},
    "top_k": {"top_k", "by", "scope", "group"},
    "bottom_k": {"bottom_k", "by", "scope", "group"},
    "n_m": {"n_m", "axis", "by"},
    "random": {"random", "seed", "scope", "group"},
}
_MAX_SEED = 2**64


@dataclasses.dataclass(frozen=True)
class Criterion:
  """Which elements to select, computed from the variable's values.

  Made by `tfpartial.zeros`, `largest`, `smallest`, `n_of_m` and
  `random_subset`, or read from a spec file; passed as the `index` of
  `tfpartial.freeze` or `tfpartial.train_only`. Immutable.
  """

  kind: str  # One of KINDS.
  fraction: Optional[float] = None  # top, bottom, random.
  count: Optional[int] = None  # top_k, bottom_k.
  n_m: Optional[Tuple[int, int]] = None
  axis: int = -1
  seed: Optional[int] = None
  scope: str = "variable"  # Or "entry": across the variables of an entry.
  group: Optional[str] = None  # Names the entry, once written by to_json.

  @property
  def ranked(self) -> bool:
    """Whether it ranks elements (top/bottom/random), which may span an
    entry."""
    return self.kind in ("top", "bottom", "top_k", "bottom_k", "random")

  def to_json(self) -> Dict[str, JSON]:
    """The criterion as a spec file writes it."""
    written: Dict[str, JSON]
    if self.kind == "where":
      return {"where": "zero"}
    if self.kind == "n_m":
      assert self.n_m is not None
      return {"n_m": list(self.n_m), "axis": self.axis}
    if self.kind == "random":
      written = {"random": self.fraction, "seed": self.seed}
    else:
      amount = self.fraction if self.count is None else self.count
      written = {self.kind: amount, "by": "magnitude"}
    if self.scope == "entry":
      written["scope"] = "entry"
      if self.group is not None:
        written["group"] = self.group
    return written

  def describe(self) -> str:
    """`top 1% by magnitude`, `2:4 along axis -1`, `random 5% (seed 0)`."""
    if self.kind == "where":
      return "where zero"
    if self.kind == "n_m":
      assert self.n_m is not None
      return f"{self.n_m[0]}:{self.n_m[1]} along axis {self.axis}"
    amount = (f"{self.count}" if self.count is not None
              else f"{100 * (self.fraction or 0):g}%")
    if self.kind == "random":
      text = f"random {amount} (seed {self.seed})"
    else:
      text = f"{self.kind.split('_')[0]} {amount} by magnitude"
    if self.scope == "entry":
      text += f" across '{self.group}'" if self.group else " across the entry"
    return text

  def __repr__(self) -> str:
    if self.kind == "where":
      return "tfpartial.zeros()"
    if self.kind == "n_m":
      assert self.n_m is not None
      return (f"tfpartial.n_of_m({self.n_m[0]}, {self.n_m[1]}, "
              f"axis={self.axis})")
    if self.kind == "random":
      call = f"tfpartial.random_subset({self.fraction}, seed={self.seed}"
    else:
      helper = "largest" if self.kind.startswith("top") else "smallest"
      amount = (f"k={self.count}" if self.count is not None
                else f"fraction={self.fraction}")
      call = f"tfpartial.{helper}({amount}"
    scope = ", scope='entry'" if self.scope == "entry" else ""
    return call + scope + ")"


@dataclasses.dataclass(frozen=True)
class Origin:
  """Where a variable's selection came from: a criterion, as `to_json`
  writes it. `members` are the keys of the variables an entry-wide
  criterion ranked together (None: this variable alone)."""

  kind: str  # "freeze" or "train_only".
  criterion: Criterion
  members: Optional[FrozenSet[Hashable]] = None


@dataclasses.dataclass(frozen=True, eq=False)
class Computed:
  """A criterion's mask for one variable, computed where a spec file's
  entry was bound (`_computed`): what `freeze` / `train_only` take for a
  spec file's criterion. `members`: as for `Origin`."""

  criterion: Criterion
  mask: np.ndarray  # True where selected, of the variable's shape.
  members: Optional[FrozenSet[Hashable]] = None


def is_criterion(index: object) -> bool:
  """Whether an index is a criterion (or one computed already)."""
  return isinstance(index, (Criterion, Computed))


def is_expression(expression: object) -> bool:
  """Whether a spec file's EXPR is a criterion (an object with a kind)."""
  return isinstance(expression, dict) and any(k in expression for k in KINDS)


# --- Reading and making ----------------------------------------------------

def parse(expression: Mapping[str, JSON], where: str) -> Criterion:
  """The criterion a spec file's EXPR object says, its form checked.

  Raises:
    ValueError: naming `where`: no or several kinds, an unknown key, a
      value of the wrong type or out of range.
  """
  kinds = [kind for kind in KINDS if kind in expression]
  if len(kinds) != 1:
    raise ValueError(
        f"{where}: a criterion has exactly one of "
        f"{', '.join(repr(k) for k in KINDS)}; got keys {sorted(expression)}.")
  kind = kinds[0]
  unknown = sorted(set(expression) - _ALLOWED[kind])
  if unknown:
    raise ValueError(
        f"{where}: the criterion {kind!r} takes the keys "
        f"{sorted(_ALLOWED[kind])}; got the unknown key(s) {unknown}.")
  if expression.get("by", "magnitude") != "magnitude":
    raise ValueError(f"{where}: \"by\" must be \"magnitude\"; got "
                     f"{expression['by']!r}.")
  scope = expression.get("scope", "variable")
  if scope not in ("variable", "entry"):
    raise ValueError(f"{where}: \"scope\" must be \"variable\" or \"entry\"; "
                     f"got {scope!r}.")
  group = expression.get("group")
  if group is not None and (scope != "entry" or not isinstance(group, str)):
    raise ValueError(f"{where}: \"group\" names the entry an entry-wide "
                     "criterion ranks across: a string, with "
                     "\"scope\": \"entry\".")
  return make(kind, expression[kind], expression, where, str(scope), group)


def make(kind: str, amount: JSON, options: Mapping[str, JSON], where: str,
         scope: str = "variable", group: Optional[str] = None) -> Criterion:
  """The criterion of `kind`, each value checked (see `parse`)."""
  if kind == "where":
    if amount != "zero":
      raise ValueError(f"{where}: \"where\" must be \"zero\"; got "
                       f"{amount!r}.")
    return Criterion("where")
  if kind in ("top", "bottom", "random"):
    fraction = _fraction(amount, kind, where)
    seed = _seed(options.get("seed"), where) if kind == "random" else None
    return Criterion(kind, fraction=fraction, seed=seed, scope=scope,
                     group=group)
  if kind in ("top_k", "bottom_k"):
    if not _is_int(amount) or int(amount) < 1:  # type: ignore[arg-type]
      raise ValueError(f"{where}: {kind!r} must be a count of elements, an "
                       f"integer of at least 1; got {amount!r}.")
    return Criterion(kind, count=int(amount),  # type: ignore[arg-type]
                     scope=scope, group=group)
  return _n_of_m(amount, options.get("axis", -1), where)


def _fraction(amount: JSON, kind: str, where: str) -> float:
  if (not isinstance(amount, (int, float)) or isinstance(amount, bool)
      or not 0 < amount <= 1):
    raise ValueError(f"{where}: {kind!r} must be a fraction F with "
                     f"0 < F <= 1; got {amount!r}.")
  return float(amount)


def _seed(seed: JSON, where: str) -> int:
  if not _is_int(seed) or not 0 <= int(seed) < _MAX_SEED:  # type: ignore
    raise ValueError(f"{where}: \"random\" needs \"seed\", an integer from 0 "
                     f"to 2**64 - 1; got {seed!r}.")
  return int(seed)  # type: ignore[arg-type]


def _n_of_m(amount: JSON, axis: JSON, where: str) -> Criterion:
  if not (isinstance(amount, (list, tuple)) and len(amount) == 2
          and all(_is_int(v) for v in amount)):
    raise ValueError(f"{where}: \"n_m\" must be [N, M], two integers; got "
                     f"{amount!r}.")
  n, m = (int(v) for v in amount)  # type: ignore[arg-type]
  if not 1 <= n <= m:
    raise ValueError(f"{where}: \"n_m\" [N, M] needs 1 <= N <= M; got "
                     f"[{n}, {m}].")
  if not _is_int(axis):
    raise ValueError(f"{where}: \"axis\" must be an integer; got {axis!r}.")
  return Criterion("n_m", n_m=(n, m), axis=int(axis))  # type: ignore


def _is_int(value: object) -> bool:
  return isinstance(value, (int, np.integer)) and not isinstance(
      value, (bool, np.bool_))


# --- Against a variable ------------------------------------------------------

def check(criterion: Criterion, shape: Tuple[int, ...], where: str,
          described: str, size: Optional[int] = None) -> None:
  """ValueError where the criterion cannot apply to a variable of `shape`
  (`size`: the elements an entry-wide criterion ranks, all variables)."""
  if criterion.kind == "n_m":
    assert criterion.n_m is not None
    n, m = criterion.n_m
    if not shape:
      raise ValueError(f"{where}: \"n_m\" groups elements along an axis; "
                       f"{described} is a scalar.")
    if not -len(shape) <= criterion.axis < len(shape):
      raise ValueError(f"{where}: \"axis\" {criterion.axis} is out of range "
                       f"for {described}.")
    length = shape[criterion.axis]
    if length % m:
      raise ValueError(
          f"{where}: \"n_m\" [{n}, {m}] needs M = {m} to divide axis "
          f"{criterion.axis} of {described}, of length {length}.")
  total = int(np.prod(shape, dtype=np.int64)) if size is None else size
  if criterion.count is not None and criterion.count > total:
    across = " across its entry" if size is not None else ""
    raise ValueError(
        f"{where}: {criterion.kind!r} {criterion.count} asks for more "
        f"elements than {described} has{across} ({total}).")


def select(criterion: Criterion, values: np.ndarray, name: str,
           where: str, described: str) -> np.ndarray:
  """A bool mask of `values`' shape, True where `criterion` selects."""
  values = np.asarray(values)
  shape = tuple(values.shape)
  check(criterion, shape, where, described)
  try:
    if criterion.kind == "where":
      _magnitudes(values)  # Refuses what is not numbers.
      selected: np.ndarray = values == 0
    elif criterion.kind == "n_m":
      assert criterion.n_m is not None
      selected = _ranking.n_of_m(values, *criterion.n_m, criterion.axis)
    else:
      keys = _keys(criterion, values, name)
      selected = _ranking.extreme(keys, _count(criterion, keys.size),
                                  _largest(criterion)).reshape(shape)
  except TypeError as error:
    raise TypeError(f"{where}: {criterion.describe()} reads {described}'s "
                    f"values, but {error}.") from None
  return np.asarray(selected, dtype=bool)


def select_across(criterion: Criterion,
                  named_values: Sequence[Tuple[str, np.ndarray]],
                  where: str, described: Sequence[str]) -> List[np.ndarray]:
  """Masks, one per (name, values), of an entry-wide criterion: ranked
  across all of them, in the order given."""
  total = sum(int(np.asarray(v).size) for _, v in named_values)
  for (_, values), text in zip(named_values, described):
    check(criterion, tuple(np.shape(values)), where, text, size=total)
  try:
    keys = [_keys(criterion, np.asarray(values), name)
            for name, values in named_values]
  except TypeError as error:
    raise TypeError(f"{where}: {criterion.describe()} reads the values of "
                    f"{', '.join(described)}, but {error}.") from None
  flat = _ranking.extreme_across(keys, _count(criterion, total),
                                 _largest(criterion))
  return [mask.reshape(np.shape(values))
          for mask, (_, values) in zip(flat, named_values)]


def _keys(criterion: Criterion, values: np.ndarray, name: str) -> np.ndarray:
  if criterion.kind == "random":
    assert criterion.seed is not None
    return _ranking.random_keys(criterion.seed, tuple(values.shape), name)
  return _magnitudes(values)


def _magnitudes(values: np.ndarray) -> np.ndarray:
  return _ranking.magnitude_keys(values)


def _count(criterion: Criterion, size: int) -> int:
  if criterion.count is not None:
    return criterion.count
  assert criterion.fraction is not None
  return _ranking.count_of(criterion.fraction, size)


def _largest(criterion: Criterion) -> bool:
  # Random: the smallest keys.
  return criterion.kind in ("top", "top_k")


def writable(origins: Mapping[Hashable, Origin]) -> Dict[Hashable, Origin]:
  """The origins `to_json` may write as criteria: an entry-wide one only
  while every variable it ranked is still there from it (else its members
  are written as masks), each group under a label of its own."""
  out: Dict[Hashable, Origin] = {}
  taken: Dict[Tuple[str, str, Criterion], Optional[FrozenSet[Hashable]]] = {}
  renamed: Dict[Origin, Origin] = {}
  for key, origin in origins.items():
    if origin.members is None:
      out[key] = origin
      continue
    if not all(origins.get(member) == origin for member in origin.members):
      continue
    if origin not in renamed:
      renamed[origin] = _labelled(origin, taken)
    out[key] = renamed[origin]
  return out


def _labelled(origin: Origin, taken: Dict[Tuple[str, str, Criterion],
                                          Optional[FrozenSet[Hashable]]]
              ) -> Origin:
  """`origin`, its group relabelled `LABEL #2`... if another group of the
  same criterion has its label (they would rank together when read)."""
  criterion = origin.criterion
  label, number = criterion.group or "entry", 1
  bare = dataclasses.replace(criterion, group=None)
  while taken.setdefault((label, origin.kind, bare),
                         origin.members) != origin.members:
    number += 1
    label = f"{criterion.group or 'entry'} #{number}"
  return dataclasses.replace(
      origin, criterion=dataclasses.replace(criterion, group=label))
