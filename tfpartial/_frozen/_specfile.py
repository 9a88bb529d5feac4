"""The spec file: JSON keyed by checkpoint name, index syntax in strings.

    {"x": {"freeze": "0", "shape": [3, 4]},
     "emb": {"train_only": "30000:"},
     "w": {"freeze": {"npy": "w_mask.npy"}}}

`to_json` writes the shortest readable index text of the freeze or the
train_only form (`_index_text`); a mask longer than the inline limit goes to
a `.npy` file beside the spec when it is written to a path. `"shape"` is
written for a check on load and may be left out by hand.

A spec file is untrusted input: `_safejson` reads it (a regular file, size
and nesting bounded, no key twice); mask files are confined and checked by
`_npy`.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import (Dict, Hashable, Iterable, Iterator, List, Mapping,
                    NamedTuple, Optional, Protocol, Tuple, Union, cast)

import numpy as np

from tfpartial._frozen import _criteria
from tfpartial._frozen import _glob
from tfpartial._frozen import _index_text
from tfpartial._frozen import _npy
from tfpartial._frozen import _parse
from tfpartial._frozen import _safejson
from tfpartial._frozen import _saved
from tfpartial._frozen import _tables
from tfpartial._frozen import _variables
from tfpartial._frozen._safejson import JSON
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import CheckedIndex, Index, Variable

_KINDS = ("freeze", "train_only")
_OPTIONS = ("shape", "compact", "exclude", "saved")
_OPTIONS_TEXT = ", ".join(f'"{option}"' for option in _OPTIONS)
INLINE_LIMIT = 4096  # Characters of index text before a mask goes to .npy.

PathOrText = Union[str, os.PathLike[str]]


class _HasVariables(Protocol):
  """A `tf.Module` or a Keras model."""

  @property
  def variables(self) -> Iterable[Variable]: ...


# What a spec binds to: variables, a name -> variable mapping, or a module.
Variables = Union[Mapping[str, Variable], Iterable[Variable], _HasVariables]


# --- Reading -----------------------------------------------------------

def read(text_or_path: PathOrText) -> Tuple[JSON, Optional[pathlib.Path]]:
  """The decoded JSON and the folder `.npy` names are relative to.

  A string that names an existing regular file is that file's path (so
  `[exp 3]/spec.json` is read); any other string is JSON text when it
  starts (after a byte-order mark and spaces) with `{`, `[` or `"`, and a
  path otherwise.

  Raises:
    TypeError: `text_or_path` is neither a string nor a path.
    ValueError: the file cannot be read, or the text is not JSON, is
      nested too deep or repeats a key.
  """
  if isinstance(text_or_path, str) and not text_or_path.strip():
    raise ValueError("the spec is empty text; a spec is a JSON object such "
                     "as {\"x\": {\"freeze\": \"0\"}}.")
  if isinstance(text_or_path, str) and not _is_file(text_or_path) and (
      text_or_path.lstrip("\ufeff \t\r\n")[:1] in ("{", "[", "\"")):
    return _safejson.decode(text_or_path.lstrip()), None
  if not isinstance(text_or_path, (str, os.PathLike)):
    raise TypeError(
        "`text_or_path` must be JSON text or a path to a spec file; got "
        f"{type(text_or_path).__name__}.")
  path = pathlib.Path(text_or_path)
  text = _safejson.read_file(path, text_or_path)
  return _safejson.decode(text), path.parent


def dumps(data: JSON) -> str:
  """`data`, read by `read`, as JSON text again (for a saved config)."""
  return json.dumps(data)


def _is_file(text: str) -> bool:
  """Whether `text` names a regular file (JSON text is rarely a name)."""
  return len(text) < 4096 and os.path.isfile(text)


def _preview(value: JSON) -> str:
  text = json.dumps(value)
  return text if len(text) <= 60 else text[:57] + "..."


# --- Entries -----------------------------------------------------------

class Entry(NamedTuple):
  """One entry of a spec file: a variable's, or a pattern's."""

  name: str  # The variable's name (escapes read), or the pattern.
  kind: str  # "freeze" or "train_only"
  # An index, an `_npy.MaskFile` read once the shape is known, or a
  # criterion (computed from the values when bound: `_computed`). (The
  # field hides `tuple.index`, which nothing calls on an Entry.)
  index: Union[CheckedIndex, _npy.MaskFile,  # type: ignore[assignment]
               _criteria.Criterion, _criteria.Computed]
  shape: Optional[Tuple[int, ...]]
  compact: bool
  pattern: bool = False  # `name` is a pattern (`_patterns`).
  exclude: Tuple[str, ...] = ()  # Patterns a pattern's names are less.
  # Where the model `to_json` was written from saves the variable, per
  # file format (`_saved`), for `verify`.
  saved: Optional[Mapping[str, str]] = None


def entries(data: JSON,
            directory: Optional[pathlib.Path]) -> Iterator[Entry]:
  """An `Entry` for each entry of the spec, checked."""
  if not isinstance(data, dict):
    raise ValueError(
        "a spec is a JSON object keyed by variable name; got "
        f"{_safejson.type_name(data)}.")
  for key, entry in data.items():
    where = f"'{key}' in the spec"
    if not isinstance(entry, dict):
      raise ValueError(f"{where} must be an object like {{\"freeze\": \"0\"}}"
                       f"; got {_preview(entry)}.")
    kinds = [kind for kind in _KINDS if kind in entry]
    unknown = sorted(set(entry) - set(_KINDS) - set(_OPTIONS))
    if len(kinds) != 1 or unknown:
      raise ValueError(
          f"{where} must have exactly one of \"freeze\" or \"train_only\" "
          f"(and optionally {_OPTIONS_TEXT}); "
          f"got keys {sorted(entry)}.")
    kind = kinds[0]
    compact = entry.get("compact", False)
    if not isinstance(compact, bool):
      raise ValueError(f"{where}: \"compact\" must be true or false; got "
                       f"{_preview(compact)}.")
    index = _index(entry[kind], where, directory)
    # A criterion's complement has no index text: compact may join either.
    if compact and kind != "train_only" and not _criteria.is_criterion(index):
      raise ValueError(f"{where}: \"compact\" is only for \"train_only\" "
                       "(or a criterion).")
    pattern = _glob.is_pattern(key)
    found = Entry(key if pattern else _glob.unescape(key), kind, index,
                  _shape(entry.get("shape"), where), compact, pattern,
                  _exclude(entry.get("exclude"), pattern, where),
                  _saved_at(entry.get("saved"), pattern, where))
    if pattern:
      check_freezes(found)
    yield found


def check_freezes(entry: Entry) -> None:
  """ValueError for a pattern entry whose index freezes nothing whatever
  the shapes (`train_only` of everything, `freeze` of an empty list)."""
  index = entry.index
  everything = all(part is Ellipsis or (
      isinstance(part, slice) and part == slice(None)) for part in (
      index if isinstance(index, tuple) else (index,)))
  nothing = isinstance(index, np.ndarray) and index.size == 0
  if (everything and entry.kind == "train_only") or (
      nothing and entry.kind == "freeze"):
    raise freezes_nothing(entry, None)


def freezes_nothing(entry: Entry, count: Optional[int]) -> ValueError:
  """A pattern entry (`entry`, before expanding) whose index freezes no
  element: of any variable (`count` None: `train_only` of everything,
  `freeze` of nothing), or of the `count` variables it names; what it does,
  and what was probably meant."""
  key = entry.name
  if entry.kind == "train_only" and count is None:
    leaf = key.rsplit("/", 1)[-1]
    what = (f"the {_plural(leaf)}" if not _glob.is_pattern(leaf)
            else f"what '{key}' matches")
    meant = json.dumps({"**": {"freeze": "...", "exclude": [key]}})
    return ValueError(
        f"the spec's entry '{key}' freezes nothing: \"train_only\" freezes "
        "the elements its index does not select, and its index selects "
        "every element of each variable it matches (a spec leaves the "
        f"variables it does not name to train). To train only {what}, write "
        f"{meant}.")
  each = ("each variable" if count is None
          else f"each of the {count} variable(s)")
  if entry.kind == "train_only":
    return ValueError(
        f"the spec's entry '{key}' freezes nothing: \"train_only\" freezes "
        "the elements its index does not select, and its index selects "
        f"every element of {each} it matches.")
  return ValueError(
      f"the spec's entry '{key}' freezes nothing: its index selects no "
      f"element of {each} it matches. To freeze them whole, write "
      f"{json.dumps({key: {'freeze': '...'}})}.")


def _plural(word: str) -> str:
  """`biases`, `kernels`, `embeddings`: a variable's name, for a sentence."""
  word = _glob.unescape(word)
  if word.endswith(("ss", "as")):
    return word + "es"
  return word if word.endswith("s") else word + "s"


def _exclude(value: JSON, pattern: bool, where: str) -> Tuple[str, ...]:
  if value is None:
    return ()
  if not pattern:
    raise ValueError(f"{where}: \"exclude\" is for a pattern key (one with "
                     "`*` or `?`), whose names it takes out.")
  if not (isinstance(value, list) and all(
      isinstance(item, str) and item for item in value)):
    raise ValueError(f"{where}: \"exclude\" must be a list of patterns; got "
                     f"{_preview(value)}.")
  return tuple(cast(List[str], value))  # Strings, checked just above.


def _saved_at(value: JSON, pattern: bool,
              where: str) -> Optional[Mapping[str, str]]:
  if value is None:
    return None
  if pattern:
    raise ValueError(f"{where}: \"saved\" says where one variable is saved; "
                     "a pattern key names many.")
  if not (isinstance(value, dict) and all(
      key in _saved.FORMATS and isinstance(text, str) and text
      for key, text in value.items())):
    raise ValueError(
        f"{where}: \"saved\" must map file formats "
        f"({', '.join(_saved.FORMATS)}) to where the variable is saved; got "
        f"{_preview(value)}.")
  return cast(Dict[str, str], dict(value))  # Strings, checked just above.


def _index(expression: JSON, where: str, directory: Optional[pathlib.Path]
           ) -> Union[CheckedIndex, _npy.MaskFile, _criteria.Criterion]:
  if isinstance(expression, str):
    return _parse.parse_index(expression, where)
  if isinstance(expression, dict) and _criteria.is_expression(expression):
    return _criteria.parse(expression, where)
  if isinstance(expression, dict) and set(expression) == {"npy"}:
    file_name = expression["npy"]
    if not isinstance(file_name, str):
      raise ValueError(f"{where}: \"npy\" must name a file; got "
                       f"{_preview(file_name)}.")
    if directory is None:
      raise ValueError(
          f"{where} names the mask file '{file_name}', which is relative to "
          "a spec file; load the spec from its path, not from text.")
    return _npy.open_mask(directory, file_name, where)
  raise ValueError(
      f"{where}: an index is index text such as \":, :10\", "
      f"{{\"npy\": FILE}} or a criterion such as {{\"where\": \"zero\"}}; "
      f"got {_preview(expression)}.")


def _shape(shape: JSON, where: str) -> Optional[Tuple[int, ...]]:
  if shape is None:
    return None
  if not (isinstance(shape, list) and all(
      isinstance(d, int) and not isinstance(d, bool) and d >= 0
      for d in shape)):
    raise ValueError(f"{where}: \"shape\" must be a list of sizes; got "
                     f"{_preview(shape)}.")
  return tuple(cast(List[int], shape))  # Sizes, checked just above.


# --- Binding to variables ----------------------------------------------

def variables_by_name(variables: Variables) -> Mapping[str, Variable]:
  """Name -> variable, from a mapping, a module/model or an iterable."""
  named: Dict[str, Variable]
  if isinstance(variables, Mapping):
    named = dict(variables)
    items = list(named.values())
  else:
    if hasattr(variables, "variables") and not _variables.is_variable(
        variables):
      variables = variables.variables
    try:
      # A TypeError, caught here, unless iterable; each item is checked.
      items = list(cast(Iterable[Variable], variables))
    except TypeError:
      raise TypeError(
          "`variables` must be variables, a name -> variable mapping or a "
          f"module with `.variables`; got {type(variables).__name__}."
      ) from None
    named = {}
    for variable in items:
      _variables.check_variable(variable, "variables[...]", tables=True)
      name = _variables.checkpoint_name(variable)
      if name in named and named[name] is not variable:
        raise ValueError(
            f"two of the variables given share the checkpoint name '{name}'; "
            "pass a name -> variable mapping instead.")
      named[name] = variable
  for variable in items:
    _variables.check_variable(variable, "variables[...]", tables=True)
  # The parts of a TF1 partitioned table (`emb/part_0`, ...), given whole,
  # are also the table, by the name the Saver stores it under (`emb`).
  named.update(_tables.group_parts(items, list(named)))
  return named


def bind(entry: Entry, named: Mapping[str, Variable]) -> Tuple[Variable, Index]:
  """(variable, index) for `entry`: found by name, shape checked, a mask
  file read for the variable's shape.

  Raises:
    ValueError: no variable has the name, the shapes differ, or the mask
      file does not fit.
  """
  variable = named.get(entry.name)
  if variable is None:
    given = sorted(named)
    listed = ", ".join(given[:20]) or "none"
    if len(given) > 20:
      listed += f", ... ({len(given)} in all)"
    raise ValueError(
        f"the spec names '{entry.name}', which is not among the variables "
        f"given ({listed}).")
  shape = _variables.static_shape(variable)
  if entry.shape is not None and entry.shape != shape:
    raise ValueError(
        f"the spec gives '{entry.name}' the shape {entry.shape}, but "
        f"variable '{_variables.checkpoint_name(variable)}' has the shape "
        f"{shape}.")
  index = entry.index
  if isinstance(index, _npy.MaskFile):
    index = index.load(shape, _variables.describe(variable))
  return variable, index


# --- Writing -----------------------------------------------------------

def to_json(entries_: Iterable[Tuple[Variable, Selection]],
            path: Optional[PathOrText] = None,
            origins: Optional[Mapping[Hashable, _criteria.Origin]] = None
            ) -> str:
  """The spec's JSON text; also written to `path` (with any .npy files).

  A name that holds `*`, `?`, `[` or `\\` is escaped, so that it is read
  back as that name, never as a pattern. A variable with an origin in
  `origins` (by its key) is written as its criterion. An index longer than
  `INLINE_LIMIT` characters goes to a mask file beside `path`
  (`_npy.file_name`: never shared, never overwritten). Without `path` every
  index is inline. A Keras 3 variable that a live model holds gets
  `"saved"`: where that model saves it, per file format (`_saved`).

  Raises:
    ValueError: two variables share a checkpoint name; without `path`, a
      mask's text would be longer than a spec may hold; a mask file of the
      name to write exists and holds another mask.
  """
  target = None if path is None else pathlib.Path(path)
  pairs = list(entries_)
  saved = _saved.locations([variable for variable, _ in pairs])
  out: Dict[str, Dict[str, JSON]] = {}
  masks: List[Tuple[str, np.ndarray]] = []
  for variable, selection in pairs:
    name = _variables.checkpoint_name(variable)
    if name in out:
      raise ValueError(
          f"two variables in the spec share the checkpoint name '{name}'; "
          "a spec file names each variable once.")
    origin = (origins or {}).get(_variables.key(variable))
    if origin is not None:  # Written as the criterion, as it was given.
      kind, expression = origin.kind, cast(JSON, origin.criterion.to_json())
    else:
      kind, expression = _indexed(variable, selection, target, masks)
    out[name] = {kind: expression,
                 "shape": list(_variables.static_shape(variable))}
    if selection.compact:
      out[name]["compact"] = True
    if id(variable) in saved:
      out[name]["saved"] = dict(saved[id(variable)])
  written = "{\n" + ",\n".join(
      f"  {json.dumps(_glob.escape(name))}: {json.dumps(entry)}"
      for name, entry in out.items()) + "\n}"
  if target is not None:
    for file_name, mask in masks:
      _npy.write_mask(target.parent, file_name, mask)
    _npy.write_atomically(target, (written + "\n").encode("utf-8"))
  return written


def _indexed(variable: Variable, selection: Selection,
             target: Optional[pathlib.Path],
             masks: List[Tuple[str, np.ndarray]]) -> Tuple[str, JSON]:
  """(kind, EXPR) of a selection: index text, or a mask file to write
  (added to `masks`)."""
  limit = INLINE_LIMIT if target is not None else _parse.MAX_LENGTH
  kind, text = _index_text.shortest(selection, limit)
  if text is not None:
    return kind, text
  if target is None:
    raise ValueError(
        f"the mask of {_variables.describe(variable)} needs more than "
        f"{_parse.MAX_LENGTH:,} characters of index text; pass `path` so "
        "that it goes to a .npy file beside the spec.")
  mask = selection.frozen_mask()
  mask = mask if kind == "freeze" else ~mask
  file_name = _npy.file_name(target.stem, _variables.checkpoint_name(variable),
                             mask)
  masks.append((file_name, mask))
  return kind, {"npy": file_name}
