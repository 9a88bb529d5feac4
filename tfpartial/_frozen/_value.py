"""The spec's value: which elements of which variables are frozen.

`SpecValue` is what the step and the optimizer families work with: an
immutable mapping from each variable to its `Selection`. It knows nothing of
optimizers, so the layers stack without a cycle:

    _value (the value, its file form)  ->  _step (mask, apply, restore)
      ->  the families (_v1, _keras, _tf_keras)  ->  _spec (the public API)

The public `FreezeSpec` (`_spec.py`) holds one `SpecValue`; a wrapped
optimizer carries one too, and binds one again from its config after
loading (`load`).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import (Dict, Hashable, Iterable, List, Mapping, Optional,
                    Sequence, Tuple)

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _computed
from tfpartial._frozen import _criteria
from tfpartial._frozen import _errors
from tfpartial._frozen import _index
from tfpartial._frozen import _patterns
from tfpartial._frozen import _selection
from tfpartial._frozen import _specfile
from tfpartial._frozen import _tables
from tfpartial._frozen import _values
from tfpartial._frozen import _variables
from tfpartial._frozen._criteria import Origin
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Index, Variable

Entries = Mapping[Hashable, Tuple[Variable, Selection]]
Origins = Mapping[Hashable, Origin]
# What two values compare and hash by: each variable's key and its
# selection's fingerprint.
Fingerprint = Tuple[Tuple[Hashable, Tuple[Hashable, ...]], ...]


class SpecValue:
  """Variable -> frozen selection, immutable; `union` combines two."""

  __slots__ = ("_entries", "_parts", "_origins")
  _entries: Dict[Hashable, Tuple[Variable, Selection]]
  # Each part of a sharded table named in `_entries`, keyed as a step sees
  # it: the part variable and its slice of the table's selection.
  _parts: Dict[Hashable, Tuple[Variable, Selection]]
  # The criterion each selection came from, where it came from one alone
  # (what `to_json` writes); not part of the value: specs compare by what
  # they freeze.
  _origins: Dict[Hashable, Origin]

  def __init__(self, entries: Optional[Entries] = None,
               origins: Optional[Origins] = None) -> None:
    object.__setattr__(self, "_entries", dict(entries or {}))
    object.__setattr__(self, "_parts", _parts_of(self._entries))
    object.__setattr__(self, "_origins", dict(origins or {}))

  def __setattr__(self, name: str, value: object) -> None:
    raise AttributeError("a spec is immutable; combine specs with `|`.")

  @property
  def variables(self) -> Tuple[Variable, ...]:
    """The variables named, in the order they were added."""
    return tuple(variable for variable, _ in self._entries.values())

  @property
  def step_variables(self) -> Tuple[Variable, ...]:
    """The variables as a step sees them: each sharded table's parts."""
    return tuple(variable for variable, _ in self._entries.values()
                 if not _variables.is_table(variable)) + tuple(
                     variable for variable, _ in self._parts.values())

  def items(self) -> Iterable[Tuple[Variable, Selection]]:
    return self._entries.values()

  def __len__(self) -> int:
    return len(self._entries)

  def __contains__(self, variable: object) -> bool:
    if not (_variables.is_variable(variable)
            or _variables.is_table(variable)):
      return False
    key = _variables.key(variable)
    return key in self._entries or key in self._parts

  def selection(self, variable: Variable) -> Optional[Selection]:
    """`variable`'s frozen selection, or None when the spec leaves it alone
    (a part of a sharded table the spec names: its slice of the table's)."""
    key = _variables.key(variable)
    entry = self._entries.get(key) or self._parts.get(key)
    return None if entry is None else entry[1]

  def fully_frozen(self, variable: Variable) -> bool:
    selection = self.selection(variable)
    return selection is not None and selection.is_everything

  def check_applies_to(self, variables: Iterable[Variable]) -> None:
    """ValueError when the spec names none of `variables`."""
    variables = list(variables)
    if not self._entries or any(v in self for v in variables):
      return
    raise _errors.not_trained(self.variables, variables)

  def union(self, other: "SpecValue") -> "SpecValue":
    entries: Dict[Hashable, Tuple[Variable, Selection]] = dict(self._entries)
    origins = {**other._origins, **self._origins}
    for key, (variable, selection) in other._entries.items():
      if key in entries:
        entries[key] = (variable, entries[key][1].union(selection))
        if self._origins.get(key) != other._origins.get(key):
          origins.pop(key, None)  # Two sources: the union is a mask.
      else:
        entries[key] = (variable, selection)
    return SpecValue(entries, origins)

  def holds(self, other: "SpecValue") -> bool:
    """Whether this value freezes every element `other` does, and trains
    compact wherever `other` does: `self | other` is `self`."""
    for key, (_, selection) in other._entries.items():
      entry = self._entries.get(key)
      if entry is None:
        return False
      if entry[1] is selection:  # The same spec: no mask is compared.
        continue
      both = entry[1].union(selection)
      if (both.fingerprint() != entry[1].fingerprint()
          or both.compact != entry[1].compact):
        return False
    return True

  def fingerprint(self) -> Fingerprint:
    return tuple((key, selection.fingerprint())
                 for key, (_, selection) in self._entries.items())

  def describe(self) -> str:
    return ", ".join(
        f"{_name(variable)}: {selection.describe()}"
        for variable, selection in self._entries.values())

  def to_json(self, path: Optional[_specfile.PathOrText] = None,
              criteria: bool = True) -> str:
    """The spec file; a selection from a criterion written as the
    criterion (`criteria`), else as the elements it selected."""
    origins = _criteria.writable(self._origins) if criteria else {}
    return _specfile.to_json(self._entries.values(), path, origins)


def _name(variable: Variable) -> str:
  """`x`, or `emb [4 parts]` for a table (whose rows are the checkpoint's)."""
  name = _variables.checkpoint_name(variable)
  if _variables.is_table(variable):
    return f"{name} [{_tables.describe_parts(variable)}]"
  return name


def freeze(variable: Variable, index: Index = None,
           partition_strategy: Optional[str] = None,
           compact: bool = False) -> SpecValue:
  """The value freezing exactly what `variable.numpy()[index]` reads (for a
  sharded table, with rows numbered as `partition_strategy` says);
  `compact` trains the rest through a small variable (a spec file allows
  it with a criterion only: `_specfile.entries`)."""
  strategy = _check(variable, index, partition_strategy)
  shape = _variables.static_shape(variable)
  if index is None:
    selection: Selection = _selection.Everything(shape)
  elif _variables.is_variable(index):
    selection = _dynamic(variable, index, trains=False)
  else:
    selection = _static(variable, shape, index, trains=False,
                        compact=compact)
  return _one(variable, selection, strategy, _origin(index, "freeze"))


def train_only(variable: Variable, index: Index, *, compact: bool = False,
               partition_strategy: Optional[str] = None) -> SpecValue:
  """The value freezing every element but what `index` selects."""
  strategy = _check(variable, index, partition_strategy)
  shape = _variables.static_shape(variable)
  if _variables.is_variable(index):
    if compact:
      raise ValueError(
          f"`compact` needs a fixed index for "
          f"{_variables.describe(variable)}, not a mask variable (what "
          "trains must be known when the small variable is made).")
    selection = _dynamic(variable, index, trains=True)
  else:
    selection = _static(variable, shape, index, trains=True, compact=compact)
  return _one(variable, selection, strategy, _origin(index, "train_only"))


def across(variables: Sequence[Variable], criterion: _criteria.Criterion,
           trains: bool, compact: bool = False) -> SpecValue:
  """The value of an entry-wide criterion over `variables`: ranked across
  all of them, in the order of their checkpoint names."""
  if not isinstance(criterion, _criteria.Criterion):
    raise TypeError(f"`criterion` must be a criterion (`tfpartial.largest`, "
                    f"...); got {type(criterion).__name__}.")
  variables = list(variables)
  by_name: Dict[str, Variable] = {}
  for variable in variables:
    _variables.check_variable(variable, "variables[...]", tables=True)
    by_name.setdefault(_variables.checkpoint_name(variable), variable)
  if not by_name or len(by_name) != len(
      {_variables.key(v) for v in variables}):
    raise ValueError(
        "`variables` must name at least one variable, each by a checkpoint "
        f"name of its own; got {sorted(by_name) or 'none'}.")
  names = sorted(by_name)
  if not criterion.ranked:  # Zeros, N:M: the same element by element.
    return _union([
        train_only(by_name[n], criterion, compact=compact) if trains
        else freeze(by_name[n], criterion, compact=compact) for n in names])
  label = criterion.group or (
      names[0] if len(names) == 1
      else f"{len(names)} variables from '{names[0]}'")
  entry_wide = dataclasses.replace(criterion, scope="entry", group=label)
  masks = _criteria.select_across(
      entry_wide, [(name, _values.read(by_name[name])) for name in names],
      "`criterion`", [_variables.describe(by_name[n]) for n in names])
  members = frozenset(_variables.key(by_name[name]) for name in names)
  computed = [_criteria.Computed(entry_wide, mask, members) for mask in masks]
  return _union([
      train_only(by_name[n], index, compact=compact) if trains
      else freeze(by_name[n], index, compact=compact)
      for n, index in zip(names, computed)])


def _union(values: Sequence[SpecValue]) -> SpecValue:
  value = SpecValue()
  for each in values:
    value = value.union(each)
  return value


def _check(variable: Variable, index: Index,
           partition_strategy: Optional[str]) -> Optional[str]:
  """The variable checked; the strategy its rows are numbered by."""
  _variables.check_variable(variable, tables=True)
  table = variable if _variables.is_table(variable) else None
  described = _variables.describe(variable)
  if _criteria.is_criterion(index):
    # Selected by value, read in the checkpoint's rows: no renumbering.
    _tables.check_strategy(partition_strategy, table, None, described)
    return None
  if table is not None and _variables.is_variable(index):
    raise ValueError(
        f"{described} is a sharded table; a mask variable cannot freeze "
        "it (give a fixed index, or a mask variable per part).")
  return _tables.check_strategy(partition_strategy, table, index, described)


def _one(variable: Variable, selection: Selection, strategy: Optional[str],
         origin: Optional[Origin] = None) -> SpecValue:
  """The value of one variable; a table's rows renumbered from a lookup's
  ids to the checkpoint's rows."""
  if strategy is not None:
    described = _variables.describe(variable)
    selection = _selection.renumbered(
        selection, lambda ids: _tables.checkpoint_rows(
            variable, ids, strategy, described))
  key = _variables.key(variable)
  return SpecValue({key: (variable, selection)},
                   {key: origin} if origin is not None else None)


def _origin(index: Index, kind: str) -> Optional[Origin]:
  """The origin `to_json` writes for a criterion index, else None."""
  if isinstance(index, _criteria.Computed):
    return Origin(kind, index.criterion, index.members)
  if isinstance(index, _criteria.Criterion):
    return Origin(kind, index)
  return None


def _parts_of(entries: Entries) -> Dict[Hashable, Tuple[Variable, Selection]]:
  """Each part of the tables among `entries`, with its slice."""
  found: Dict[Hashable, Tuple[Variable, Selection]] = {}
  for variable, selection in entries.values():
    if not _variables.is_table(variable):
      continue
    for part in _tables.parts(variable):
      key = _variables.key(part.variable)
      if key in entries:
        raise ValueError(
            f"the spec names {_variables.describe(part.variable)} and "
            f"the table it is part of, {_variables.describe(variable)}; "
            "name the table only, in its full coordinates.")
      found[key] = (part.variable, _part_of(selection, part))
  return found


# A table's selection -> {(offset, shape): its part's}: one selection per
# part, however many values hold the table's (`|` makes a new value), as
# what is keyed by it (a compact part's small variable) needs.
_PARTS: "weakref.WeakKeyDictionary[Selection, Dict[Hashable, Selection]]" = (
    weakref.WeakKeyDictionary())


def _part_of(selection: Selection, part: _tables.Part) -> Selection:
  per_part = _PARTS.setdefault(selection, {})
  key = (tuple(part.offset), tuple(part.shape))
  if key not in per_part:
    per_part[key] = _selection.part_of(selection, part.offset, part.shape)
  return per_part[key]


def _static(variable: Variable, shape: Tuple[int, ...], index: Index,
            trains: bool, compact: bool = False) -> Selection:
  """The selection of a NumPy index: a row set when it names whole rows."""
  described = _variables.describe(variable)
  if not _criteria.is_criterion(index):
    checked = _index.check_index(index, described)
    _index.check_one_reading(shape, checked, described)
    rows = _index.row_set(shape, checked)
    if rows is not None:
      return _selection.from_rows(shape, rows, trains=trains,
                                  compact=compact)
  if compact and int(np.prod(shape, dtype=np.int64)) >= 2**31:
    raise ValueError(
        f"`compact` with an index that is not whole rows needs a variable "
        f"of fewer than 2**31 elements (its elements are found by int32 "
        f"offsets); {described} has more. Train it without `compact`, or "
        "by whole rows.")
  if isinstance(index, _criteria.Computed):
    selected = _selection.new_mask(shape)
    selected[...] = index.mask
  elif isinstance(index, _criteria.Criterion):
    selected = _criteria.select(
        index, _values.read(variable), _variables.checkpoint_name(variable),
        "`index`", described)
  else:
    selected = _index.selection_mask(shape, checked, described)
  return _selection.from_mask(~selected if trains else selected,
                              compact=compact)


def _dynamic(variable: Variable, mask: Variable, trains: bool) -> Selection:
  """The selection a boolean mask variable gives, checked against `variable`."""
  dtype = tf.as_dtype(_variables.storage(mask).dtype).base_dtype
  if dtype != tf.bool:
    raise TypeError(
        f"`index` is the variable '{_variables.checkpoint_name(mask)}' of "
        f"dtype {dtype.name}; a mask variable for {_variables.describe(variable)}"
        " must be bool.")
  shape = _variables.static_shape(variable)
  if tuple(tf.TensorShape(mask.shape).as_list()) != shape:
    raise ValueError(
        f"`index` is the mask variable '{_variables.checkpoint_name(mask)}' "
        f"of shape {_variables.shape_text(mask.shape)}, which does not fit "
        f"{_variables.describe(variable)}; a mask variable has the full shape.")
  return _selection.Dynamic(shape, ((mask, trains),))


def load(text_or_path: _specfile.PathOrText,
         variables: _specfile.Variables) -> SpecValue:
  """The value a spec file describes, bound to `variables` by name."""
  data, directory = _specfile.read(text_or_path)
  named = _specfile.variables_by_name(variables)
  return from_entries(_specfile.entries(data, directory), named)


def from_entries(entries: Iterable[_specfile.Entry],
                 named: Mapping[str, Variable]) -> SpecValue:
  """The value of a spec file's entries, bound to `named` variables: a
  pattern entry once per name it matches (a sharded table's, never its
  parts'), overlapping entries combined as `|` combines them; criteria
  computed from the variables' values (`_computed`).

  Raises:
    ValueError: as `_patterns.expand`, or a pattern entry freezes no
      element of the variables it names.
  """
  entries = list(entries)
  value = SpecValue()
  freezes: Dict[str, List[bool]] = {e.name: [] for e in entries if e.pattern}
  expanded = _patterns.expand(entries, _tables.pattern_names(named))
  for entry, key in _computed.compute(expanded, named):
    variable, index = _specfile.bind(entry, named)
    # A spec file numbers a table's rows as its checkpoint does.
    strategy = "div" if _variables.is_table(variable) else None
    if entry.kind == "freeze":
      part = freeze(variable, index, strategy, entry.compact)
    else:
      part = train_only(variable, index, compact=entry.compact,
                        partition_strategy=strategy)
    if key in freezes:
      selection = part.selection(variable)
      freezes[key].append(selection is not None and not selection.is_empty)
    value = value.union(part)
  for entry in entries:
    if entry.pattern and not any(freezes[entry.name]):
      raise _specfile.freezes_nothing(entry, len(freezes[entry.name]))
  return value


def frozen_mask(value: SpecValue, variable: Variable) -> np.ndarray:
  """A NumPy bool array of `variable`'s shape, True where frozen (a sharded
  table's in its checkpoint's coordinates)."""
  _variables.check_variable(variable, tables=True)
  selection = value.selection(variable)
  if selection is None:
    return np.zeros(_variables.static_shape(variable), dtype=bool)
  return selection.frozen_mask()
