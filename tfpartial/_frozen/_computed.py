"""A spec file's criteria, computed from the values of the variables bound.

After the entries are resolved to concrete names (`_patterns.expand`),
each entry whose index is a criterion gets its mask (`_criteria.Computed`)
from the variable's value: per variable, or for `"scope": "entry"` across
every variable its entry matched. The variables of an entry are ranked in
the order of their names (code point order), so that `load_spec`, a late
spec and `verify` rank them alike whatever order they find them in.

An entry written by `to_json` names its entry with `"group"`: the
concrete entries of one group rank together again, as their pattern did.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Mapping, Sequence, Tuple

from tfpartial._frozen import _criteria
from tfpartial._frozen import _specfile
from tfpartial._frozen import _values
from tfpartial._frozen import _variables
from tfpartial._frozen._criteria import Criterion
from tfpartial._frozen._specfile import Entry
from tfpartial._frozen._types import Variable

Expanded = List[Tuple[Entry, str]]


def compute(expanded: Sequence[Tuple[Entry, str]],
            named: Mapping[str, Variable]) -> Expanded:
  """`expanded` ((entry, key) per concrete name) with each criterion
  replaced by its computed mask.

  Raises:
    ValueError, TypeError: a criterion does not fit its variable (naming
      the entry, the variable and its shape), or a value cannot be read.
  """
  out = list(expanded)
  for group, positions in groups(expanded).items():
    label = group[0]
    criterion = group[2]
    if criterion.scope == "entry" and criterion.ranked:
      _across(out, positions, criterion, label, named)
      continue
    for position in positions:
      entry, key = out[position]
      variable, _ = _specfile.bind(entry, named)
      mask = _criteria.select(
          criterion, _values.read(variable), entry.name,
          f"'{key}' in the spec", _variables.describe(variable))
      out[position] = (entry._replace(
          index=_criteria.Computed(criterion, mask)), key)
  return out


def groups(expanded: Sequence[Tuple[Entry, str]]
           ) -> Dict[Tuple[str, str, Criterion], List[int]]:
  """(label, kind, criterion) -> the positions of its entries in
  `expanded`. An entry-wide criterion's label is its `"group"`, or the key
  that matched it; its entries hold one position per name."""
  found: Dict[Tuple[str, str, Criterion], List[int]] = {}
  for position, (entry, key) in enumerate(expanded):
    criterion = entry.index
    if isinstance(criterion, Criterion):
      group = (criterion.group or key, entry.kind,
               dataclasses.replace(criterion, group=None))
      found.setdefault(group, []).append(position)
  return found


def _across(out: Expanded, positions: List[int], criterion: Criterion,
            label: str, named: Mapping[str, Variable]) -> None:
  """The masks of an entry-wide criterion, written into `out`."""
  # One place per name: two entries of the group may name one variable.
  first = {out[p][0].name: p for p in reversed(positions)}
  names = sorted(first)
  variables = [_specfile.bind(out[first[name]][0], named)[0]
               for name in names]
  with_label = dataclasses.replace(criterion, group=label)
  masks = _criteria.select_across(
      with_label, [(name, _values.read(v))
                   for name, v in zip(names, variables)],
      f"'{label}' in the spec",
      [_variables.describe(v) for v in variables])
  members = frozenset(_variables.key(v) for v in variables)
  computed = {name: _criteria.Computed(with_label, mask, members)
              for name, mask in zip(names, masks)}
  for position in positions:
    entry, key = out[position]
    out[position] = (entry._replace(index=computed[entry.name]), key)
