"""The spec file: JSON keyed by checkpoint name, index syntax in strings.

    {"x": {"freeze": "0", "shape": [3, 4]},
     "emb": {"train_only": "30000:"},
     "w": {"freeze": {"npy": "w_mask.npy"}}}

`to_json` writes the shortest of the freeze or train_only forms (a row
range, a row list, or element coordinates); a mask longer than the inline
limit goes to a `.npy` file beside the spec when it is written to a path.
`"shape"` is written for a check on load and may be left out by hand.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple, Union

import numpy as np

from tfpartial import _parse
from tfpartial import _selection
from tfpartial import _variables

_KINDS = ("freeze", "train_only")
INLINE_LIMIT = 4096  # Characters of index text before a mask goes to .npy.

PathOrText = Union[str, os.PathLike]


def to_json(entries, path: Optional[PathOrText] = None) -> str:
  """The spec's JSON text; also written to `path` (with any .npy files)."""
  directory = None if path is None else pathlib.Path(path).parent
  stem = None if path is None else pathlib.Path(path).stem
  out: Dict[str, Any] = {}
  for variable, selection in entries:
    name = _variables.checkpoint_name(variable)
    if name in out:
      raise ValueError(
          f"two variables in the spec share the checkpoint name '{name}'; "
          "a spec file names each variable once")
    if isinstance(selection, _selection.Rows):
      kind, expression = _rows_expression(selection)
    else:
      kind, expression = _expression(selection.frozen_mask())
    if len(expression) > INLINE_LIMIT and directory is not None:
      file_name = f"{stem}.{_file_safe(name)}.npy"
      mask = selection.frozen_mask()
      np.save(directory / file_name, mask if kind == "freeze" else ~mask)
      expression = {"npy": file_name}
    out[name] = {kind: expression,
                 "shape": list(_variables.static_shape(variable))}
    if selection.compact:
      out[name]["compact"] = True
  text = "{\n" + ",\n".join(f"  {json.dumps(name)}: {json.dumps(entry)}"
                            for name, entry in out.items()) + "\n}"
  if path is not None:
    pathlib.Path(path).write_text(text + "\n")
  return text


def _rows_expression(selection) -> Tuple[str, str]:
  """As `_expression`, from the row set, with no mask of the table."""
  if selection.is_empty:
    return "train_only", "..."
  rows = selection.rows
  everything = np.arange(selection.row_count, dtype=np.int64)
  other = np.setdiff1d(everything, rows, assume_unique=True)
  kinds = ("train_only", "freeze") if selection.trains else (
      "freeze", "train_only")
  candidates = [(kinds[0], _rows_text(rows, selection.row_count)),
                (kinds[1], _rows_text(other, selection.row_count))]
  if selection.compact:  # Only train_only entries can say "compact".
    return candidates[0]
  return min(candidates, key=lambda candidate: len(candidate[1]))


def _rows_text(selected: np.ndarray, row_count: int) -> str:
  if selected.size == 0:
    return "[]"
  first, last = int(selected[0]), int(selected[-1])
  if last - first + 1 == selected.size:
    start = "" if first == 0 else str(first)
    stop = "" if last + 1 == row_count else str(last + 1)
    return f"{start}:{stop}"
  return _list_text(selected)


def _expression(frozen: np.ndarray) -> Tuple[str, str]:
  """The shortest (kind, index text) selecting `frozen` (or its complement)."""
  if frozen.all():
    return "freeze", "..."
  if not frozen.any():
    return "train_only", "..."
  candidates = [(kind, _index_text(mask)) for kind, mask in
                (("freeze", frozen), ("train_only", ~frozen))]
  return min(candidates, key=lambda candidate: len(candidate[1]))


def _index_text(mask: np.ndarray) -> str:
  """Index text selecting exactly the True elements of `mask`."""
  if mask.ndim == 0:
    return "..."
  rows = mask.reshape(mask.shape[0], -1)
  whole_rows = rows.all(axis=1)
  if np.array_equal(whole_rows, rows.any(axis=1)):
    return _rows_text(np.flatnonzero(whole_rows), mask.shape[0])
  return ", ".join(_list_text(axis) for axis in np.nonzero(mask))


def _list_text(values: np.ndarray) -> str:
  return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _file_safe(name: str) -> str:
  return re.sub(r"[^\w.-]+", "_", name)


def read(text_or_path: PathOrText) -> Tuple[Any, Optional[pathlib.Path]]:
  """The decoded JSON and the folder `.npy` names are relative to."""
  if isinstance(text_or_path, os.PathLike) or (
      isinstance(text_or_path, str) and not text_or_path.lstrip().startswith("{")):
    path = pathlib.Path(text_or_path)
    try:
      text = path.read_text()
    except OSError as error:
      raise ValueError(f"cannot read spec file '{path}': {error.strerror}"
                       ) from None
    directory = path.parent
  elif isinstance(text_or_path, str):
    text, directory = text_or_path, None
  else:
    raise TypeError(
        "`text_or_path` must be JSON text or a path to a spec file; got "
        f"{type(text_or_path).__name__}")
  try:
    return json.loads(text), directory
  except json.JSONDecodeError as error:
    raise ValueError(f"the spec is not valid JSON: {error}") from None


def entries(data: Any, directory: Optional[pathlib.Path]):
  """An `Entry` for each entry of the spec, checked."""
  if not isinstance(data, dict):
    raise ValueError(
        "a spec is a JSON object keyed by variable name; got "
        f"{type(data).__name__}")
  for name, entry in data.items():
    where = f"'{name}' in the spec"
    if not isinstance(entry, dict):
      raise ValueError(f"{where} must be an object like {{\"freeze\": \"0\"}}"
                       f"; got {json.dumps(entry)[:60]}")
    kinds = [kind for kind in _KINDS if kind in entry]
    unknown = sorted(set(entry) - set(_KINDS) - {"shape", "compact"})
    if len(kinds) != 1 or unknown:
      raise ValueError(
          f"{where} must have exactly one of \"freeze\" or \"train_only\" "
          f"(and optionally \"shape\", \"compact\"); got keys "
          f"{sorted(entry)}")
    kind = kinds[0]
    compact = entry.get("compact", False)
    if compact not in (True, False) or (compact and kind != "train_only"):
      raise ValueError(f"{where}: \"compact\" is true or false, and only "
                       "for \"train_only\"")
    yield Entry(name, kind, _index(entry[kind], where, directory),
                _shape(entry.get("shape"), where), compact)


class Entry(NamedTuple):
  """One variable's entry in a spec file."""

  name: str
  kind: str  # "freeze" or "train_only"
  index: Any
  shape: Optional[Tuple[int, ...]]
  compact: bool


def _index(expression: Any, where: str, directory: Optional[pathlib.Path]):
  if isinstance(expression, str):
    return _parse.parse_index(expression, where)
  if isinstance(expression, dict) and set(expression) == {"npy"}:
    file_name = expression["npy"]
    if not isinstance(file_name, str):
      raise ValueError(f"{where}: \"npy\" must name a file")
    if directory is None:
      raise ValueError(
          f"{where} names the mask file '{file_name}', which is relative to "
          "a spec file; load the spec from its path, not from text")
    try:
      mask = np.load(directory / file_name, allow_pickle=False)
    except (OSError, ValueError) as error:
      raise ValueError(f"{where}: cannot read '{file_name}': {error}"
                       ) from None
    if mask.dtype != bool:
      raise ValueError(f"{where}: '{file_name}' holds {mask.dtype}, not a "
                       "boolean mask")
    return mask
  raise ValueError(
      f"{where}: an index is index text such as \":, :10\" or "
      f"{{\"npy\": FILE}}; got {json.dumps(expression)[:60]}")


def _shape(shape: Any, where: str) -> Optional[Tuple[int, ...]]:
  if shape is None:
    return None
  if not (isinstance(shape, list) and all(
      isinstance(d, int) and not isinstance(d, bool) and d >= 0
      for d in shape)):
    raise ValueError(f"{where}: \"shape\" must be a list of sizes; got "
                     f"{json.dumps(shape)[:60]}")
  return tuple(shape)


def variables_by_name(variables: Any) -> Mapping[str, Any]:
  """Name -> variable, from a mapping, a module/model or an iterable."""
  if isinstance(variables, Mapping):
    named = dict(variables)
    items = list(named.values())
  else:
    if hasattr(variables, "variables") and not _variables.is_variable(
        variables):
      variables = variables.variables
    try:
      items = list(variables)
    except TypeError:
      raise TypeError(
          "`variables` must be variables, a name -> variable mapping or a "
          f"module with `.variables`; got {type(variables).__name__}"
      ) from None
    named = {}
    for variable in items:
      _variables.check_variable(variable, "variables[...]")
      name = _variables.checkpoint_name(variable)
      if name in named and named[name] is not variable:
        raise ValueError(
            f"two of the variables given share the checkpoint name '{name}'; "
            "pass a name -> variable mapping instead")
      named[name] = variable
  for variable in items:
    _variables.check_variable(variable, "variables[...]")
  return named
