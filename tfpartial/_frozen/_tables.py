"""Sharded tables: one variable of its full shape, held as parts.

A TF1 `PartitionedVariable` (`get_variable(..., partitioner=...)`) and a
TF2 `ShardedVariable` (`ParameterServerStrategy` with a
`variable_partitioner`) are one table to the user and to a checkpoint (the
Saver and `tf.train.Checkpoint` store the full tensor, under the table's
name), but an optimizer trains their parts, each a variable of its own. A
spec holds the table's selection in full-table coordinates (the
checkpoint's rows) and gives each part its slice (`_selection.part_of`).

Row numbers are the checkpoint's. A lookup numbers rows its own way:
`embedding_lookup(..., partition_strategy="div")` reads id i at checkpoint
row i; `"mod"` (the TF1 default) reads id i in part i % n at its row
i // n. `checkpoint_rows` turns a lookup's ids into checkpoint rows.
"""

from __future__ import annotations

from typing import (Any, Dict, Hashable, Iterable, List, Mapping,
                    NamedTuple, Optional, Sequence, Tuple)

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _tfprivate

STRATEGIES = ("div", "mod")


class Part(NamedTuple):
  """One part of a table: the variable, and where it sits in the table."""

  variable: Any  # A tf.Variable.
  offset: Tuple[int, ...]
  shape: Tuple[int, ...]


def is_table(value: object) -> bool:
  """Whether `value` is a partitioned or sharded variable."""
  return isinstance(value, _table_types())


def is_sharded(value: object) -> bool:
  """Whether `value` is a TF2 `ShardedVariable` (not a TF1 partitioned
  variable)."""
  sharded = _tfprivate.sharded_variable_type()
  return sharded is not None and isinstance(value, sharded)


def _table_types() -> Tuple[type, ...]:
  sharded = _tfprivate.sharded_variable_type()
  return (_tfprivate.PARTITIONED_VARIABLE,) + (
      () if sharded is None else (sharded,))


def parts(table: Any) -> Tuple[Part, ...]:
  """The table's parts, with their offsets in the table."""
  if isinstance(table, _tfprivate.PARTITIONED_VARIABLE):
    found = []
    for variable in _tfprivate.part_variables(table):
      info = _tfprivate.slice_info(variable)
      if info is None:
        raise ValueError(
            f"part '{variable.name}' of the partitioned variable "
            f"'{getattr(table, 'name', '?')}' says nothing of where it sits "
            "in the table.")
      found.append(Part(variable, info[2], _shape(variable)))
    return tuple(found)
  # A ShardedVariable's shards split the first axis, in order.
  found, start = [], 0
  for variable in table.variables:
    shape = _shape(variable)
    found.append(Part(variable, (start,) + (0,) * (len(shape) - 1), shape))
    start += shape[0]
  return tuple(found)


def _shape(variable: Any) -> Tuple[int, ...]:
  return tuple(tf.TensorShape(variable.shape).as_list())


def key(table: Any) -> Hashable:
  """Equal for every handle on the same table: its parts' identities."""
  return ("table",) + tuple(part.variable.ref() for part in parts(table))


def name(table: Any) -> str:
  """The name a checkpoint stores the table under: a partitioned
  variable's name (`emb`), a sharded one's shards' (`emb/part_0` -> `emb`;
  its own `name` is the class's)."""
  if isinstance(table, _tfprivate.PARTITIONED_VARIABLE):
    return str(getattr(table, "name"))
  first = str(parts(table)[0].variable.name)
  first = first[:-2] if first.endswith(":0") else first
  return first[:-len("/part_0")] if first.endswith("/part_0") else first


def row_parts(table: Any) -> Tuple[Part, ...]:
  """The parts along the first axis (one per block of rows), in order."""
  first: Dict[int, Part] = {}
  for part in parts(table):
    first.setdefault(part.offset[0], part)
  return tuple(first[offset] for offset in sorted(first))


def describe_parts(table: Any) -> str:
  """`4 parts` (`4 shards`), for a table's description."""
  count = len(parts(table))
  word = ("part" if isinstance(table, _tfprivate.PARTITIONED_VARIABLE)
          else "shard")
  return f"{count} {word}{'' if count == 1 else 's'}"


def checkpoint_rows(table: Any, ids: np.ndarray, strategy: str,
                    described: str) -> np.ndarray:
  """The checkpoint rows a lookup with `strategy` reads for `ids` (int64,
  each in range of the table's rows).

  Raises:
    ValueError: the parts are not laid out as such a lookup assumes (the
      first `rows % n` parts one row longer than the others).
  """
  blocks = row_parts(table)
  sizes = np.array([part.shape[0] for part in blocks], dtype=np.int64)
  offsets = np.array([part.offset[0] for part in blocks], dtype=np.int64)
  rows, count = int(sizes.sum()), sizes.size
  expected = np.full(count, rows // count, dtype=np.int64)
  expected[:rows % count] += 1
  if not np.array_equal(sizes, expected):
    raise ValueError(
        f"the {count} parts of {described} hold {sizes.tolist()} rows; "
        f"`partition_strategy=\"{strategy}\"` numbers rows as "
        "`embedding_lookup` does, which assumes parts of "
        f"{expected.tolist()} rows.")
  if strategy == "div":
    return ids
  rows_: np.ndarray = offsets[ids % count] + ids // count
  return rows_


def check_strategy(strategy: Optional[str], table: Any, index: object,
                   described: str) -> Optional[str]:
  """The strategy to number `index`'s rows by, None for checkpoint rows.

  Raises:
    ValueError: `strategy` is not "div" or "mod"; it is given for a
      variable that is not a table; or a table of several parts along its
      rows is indexed without it.
  """
  if strategy is not None and strategy not in STRATEGIES:
    raise ValueError(
        f"`partition_strategy` for {described} must be \"div\" or \"mod\"; "
        f"got {strategy!r}.")
  if table is None:
    if strategy is not None:
      raise ValueError(
          f"`partition_strategy` is for a partitioned or sharded variable; "
          f"{described} is not one (its rows are numbered one way only).")
    return None
  if index is None or index is Ellipsis or len(row_parts(table)) < 2:
    return None
  if strategy is None:
    count = len(row_parts(table))
    raise ValueError(
        f"{described}: which row an id names depends on the lookup that "
        "reads it, with its rows in several parts; pass "
        "`partition_strategy=\"div\"` for checkpoint rows (id i is row i, "
        "as in `tf.nn.embedding_lookup` and the `tf.compat.v1` one with "
        "`partition_strategy=\"div\"`) or `partition_strategy=\"mod\"` "
        "for ids as `tf.compat.v1.nn.embedding_lookup` reads them by "
        f"default (id i in part i % {count}, at its row i // {count}).")
  return strategy


def group_parts(variables: Sequence[Any],
                taken: Sequence[str]) -> Dict[str, Any]:
  """Name -> table for the parts among `variables` that make whole tables
  (TF1 parts by their save-slice info, TF2 shards by their container),
  except names in `taken`."""
  by_name: Dict[str, List[Tuple[Tuple[int, ...], Any]]] = {}
  shapes: Dict[str, Tuple[int, ...]] = {}
  for variable in variables:
    info = _tfprivate.slice_info(variable)
    if info is None or info[0] in taken:
      continue
    full_name, full_shape, offset = info
    shapes[full_name] = full_shape
    by_name.setdefault(full_name, []).append((offset, variable))
  tables = _sharded(variables, taken)
  for full_name, found in by_name.items():
    found.sort(key=lambda item: item[0])
    variables_ = [variable for _, variable in found]
    size = sum(int(np.prod(_shape(v), dtype=np.int64)) for v in variables_)
    shape = shapes[full_name]
    if size != int(np.prod(shape, dtype=np.int64)):
      continue  # Not every part is here: no whole table to bind.
    partitions = [len({offset[axis] for offset, _ in found})
                  for axis in range(len(shape))]
    tables[full_name] = _tfprivate.partitioned_variable(
        full_name, shape, variables_[0].dtype.base_dtype, variables_,
        partitions)
  return tables


def _sharded(variables: Sequence[Any], taken: Sequence[str]) -> Dict[str, Any]:
  """Name -> ShardedVariable for the whole tables of shards in `variables`."""
  given = {variable.ref() for variable in variables
           if hasattr(variable, "ref")}
  tables: Dict[str, Any] = {}
  for variable in variables:
    container = _tfprivate.sharded_container(variable)
    if container is None or not is_table(container):
      continue
    table_name = name(container)
    if table_name in taken or table_name in tables:
      continue
    if all(part.variable.ref() in given for part in parts(container)):
      tables[table_name] = container
  return tables


def pattern_names(named: Mapping[str, Any]) -> List[str]:
  """The names of `named` a pattern is matched against: a table's, never
  those of its parts (which `named` may hold beside it)."""
  held = {part.variable.ref() for variable in named.values()
          if is_table(variable) for part in parts(variable)}
  return [name for name, variable in named.items()
          if not (hasattr(variable, "ref") and not is_table(variable)
                  and variable.ref() in held)]


def expand(variables: Iterable[Any]) -> List[Any]:
  """`variables` with each table replaced by its parts."""
  expanded: List[Any] = []
  for variable in variables:
    if is_table(variable):
      expanded.extend(part.variable for part in parts(variable))
    else:
      expanded.append(variable)
  return expanded
