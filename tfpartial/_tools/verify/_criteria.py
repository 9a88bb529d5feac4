"""verify's side of masks from a criterion: recomputed from BEFORE.

A spec entry whose index is a criterion (`_frozen/_criteria.py`) selects
from the values the spec bound to, which for a fine-tune are BEFORE's: the
same values `load_spec` read when training started. Its form and its fit
to each variable's shape are checked with everything else, before any
value is read (`check`); an entry-wide criterion is then ranked across the
BEFORE values of every variable its entry matched (`rank_entries`, in the
order of their names, as `load_spec` ranks them); a per-variable one from
the BEFORE value read for the comparison (`frozen`). `describe` is the
table's criterion column.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tfpartial._frozen import _computed
from tfpartial._frozen import _criteria
from tfpartial._frozen import _index
from tfpartial._frozen._specfile import Entry
from tfpartial._tools.verify._checkpoints import Stored

Read = Callable[[int], np.ndarray]  # A plan position's BEFORE value.
Planned = Tuple[Entry, Stored, Stored]  # An entry, where BEFORE, AFTER hold it.


def _described(name: str, shape: Tuple[int, ...]) -> str:
  return f"variable '{name}' of shape {shape}"


def prepared(expanded: Sequence[Tuple[Entry, str]], plan: Sequence[Planned],
             read: Callable[[Stored], np.ndarray]) -> List[Planned]:
  """verify's plan ((entry, BEFORE, AFTER) per entry of `expanded`) with
  its criteria checked against BEFORE's shapes, then each entry-wide one
  ranked from BEFORE's values (`read`)."""
  check(expanded, [before.shape for _, before, _ in plan])
  ranked = rank_entries(expanded, lambda at: read(plan[at][1]))
  return [(entry, before, after)
          for (entry, _), (_, before, after) in zip(ranked, plan)]


def check(expanded: Sequence[Tuple[Entry, str]],
          shapes: Sequence[Tuple[int, ...]]) -> None:
  """ValueError where a criterion does not fit its variables' shapes
  (`shapes`: BEFORE's, one per entry of `expanded`)."""
  for (label, _, criterion), positions in _computed.groups(expanded).items():
    entry_wide = criterion.scope == "entry" and criterion.ranked
    names = {expanded[p][0].name: shapes[p] for p in positions}
    total = sum(int(np.prod(s, dtype=np.int64)) for s in names.values())
    for position in positions:
      entry, key = expanded[position]
      _criteria.check(criterion, shapes[position],
                      f"'{label if entry_wide else key}' in the spec",
                      _described(entry.name, shapes[position]),
                      size=total if entry_wide else None)


def rank_entries(expanded: Sequence[Tuple[Entry, str]],
                 read: Read) -> List[Tuple[Entry, str]]:
  """`expanded` with each entry-wide criterion replaced by its mask, from
  the BEFORE values `read` gives (read here, once per variable)."""
  out = list(expanded)
  for (label, _, criterion), positions in _computed.groups(expanded).items():
    if not (criterion.scope == "entry" and criterion.ranked):
      continue
    first: Dict[str, int] = {}
    for position in positions:
      first.setdefault(out[position][0].name, position)
    names = sorted(first)
    values = [read(first[name]) for name in names]
    masks = _criteria.select_across(
        criterion, list(zip(names, values)), f"'{label}' in the spec",
        [_described(n, tuple(v.shape)) for n, v in zip(names, values)])
    with_label = _criteria.Criterion(**{**criterion.__dict__,
                                        "group": label})
    computed = {name: _criteria.Computed(with_label, mask)
                for name, mask in zip(names, masks)}
    for position in positions:
      entry, key = out[position]
      out[position] = (entry._replace(index=computed[entry.name]), key)
  return out


def check_index(entry: Entry, shape: Tuple[int, ...]) -> None:
  """An index checked against `shape` (a criterion: by `check`)."""
  if not _criteria.is_criterion(entry.index):
    frozen(entry, shape, None)


def frozen(entry: Entry, shape: Tuple[int, ...],
           before: Optional[np.ndarray]) -> np.ndarray:
  """The entry's frozen elements of a variable whose BEFORE is `before`
  (needed by a per-variable criterion only)."""
  index = entry.index
  if isinstance(index, _criteria.Computed):
    selected = index.mask
  elif isinstance(index, _criteria.Criterion):
    assert before is not None, "a criterion selects from BEFORE's values"
    selected = _criteria.select(index, before, entry.name,
                                f"'{entry.name}' in the spec",
                                _described(entry.name, shape))
  else:
    selected = _index.selection_mask(shape, index, _described(entry.name,
                                                              shape))
  return selected if entry.kind == "freeze" else ~selected


def frozen_by(entries: Sequence[Entry], shape: Tuple[int, ...],
              before: np.ndarray) -> Tuple[np.ndarray, str]:
  """The frozen elements of a variable `entries` name (the union, as `|`
  gives) and the criteria that chose them (`describe`)."""
  frozen_ = np.logical_or.reduce([frozen(e, shape, before) for e in entries])
  return frozen_, describe(entries)


def describe(entries: Sequence[Entry]) -> str:
  """The criterion column: `freeze where zero`, or "" for indices."""
  texts = []
  for entry in entries:
    index = entry.index
    if isinstance(index, _criteria.Computed):
      index = index.criterion
    if isinstance(index, _criteria.Criterion):
      texts.append(f"{entry.kind} {index.describe()}")
  return "; ".join(texts)


def might_freeze(entry: Entry, shape: Tuple[int, ...]) -> bool:
  """Whether an entry freezes some element of a variable of `shape`: by
  its index, or by a mask ranked already; a criterion still to rank per
  variable selects at least one element (so "freeze" freezes some, and
  "train_only" does unless it selects all, which its values decide)."""
  if isinstance(entry.index, _criteria.Criterion):
    return True
  return bool(frozen(entry, shape, None).any())
