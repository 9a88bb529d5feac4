"""Untrusted JSON text: a spec file read and decoded within bounds.

A spec file is shared and reviewed, and `tfpartial verify` must give bad
input exit status 2, never a traceback or a hang. So a spec file is read
only if it is a regular file of at most `MAX_BYTES` (`_files`: a pipe or a
device is refused), as UTF-8, and its JSON is decoded only
if it nests at most `MAX_DEPTH` deep and no object has a key twice (JSON
readers keep the last, which would silently drop a variable's entry).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
from typing import Dict, List, NoReturn, Sequence, Tuple, Union

from tfpartial._frozen import _files

# A decoded JSON value.
JSON = Union[None, bool, int, float, str, List["JSON"], Dict[str, "JSON"]]

MAX_BYTES = 16 * 2**20  # A spec file larger than this is refused unread.
MAX_DEPTH = 16  # A spec needs 3 levels of objects and arrays.
# Entries of a spec (variables or name patterns); a model has thousands.
MAX_ENTRIES = 100_000
_BOM = "\ufeff"


def read_file(path: pathlib.Path, given: Union[str, os.PathLike[str]]) -> str:
  """The text of the spec file: a regular file, bounded, UTF-8."""
  try:
    descriptor, status = _files.open_descriptor(path)
    try:
      data = _files.read_bounded(
          descriptor, status, path, MAX_BYTES,
          f"{MAX_BYTES // 2**20} MiB, the most a spec file may be (a large "
          "mask belongs in a .npy file beside it)")
    finally:
      os.close(descriptor)
  except _files.Refused as error:
    hint = _json_hint(given) if error.missing else ""
    raise ValueError(f"cannot read spec file '{path}': {error.problem}"
                     f"{hint}.") from None
  try:
    return data.decode("utf-8").removeprefix(_BOM)
  except UnicodeDecodeError as error:
    raise ValueError(f"the spec file '{path}' is not UTF-8 text (byte "
                     f"{error.start}).") from None


def _json_hint(given: Union[str, os.PathLike[str]]) -> str:
  """For a string taken as a path that is JSON text after all."""
  if not isinstance(given, str) or len(given) > 100:
    return ""
  try:
    value = json.loads(given)
  except ValueError:
    return ""
  return (f" (as JSON text it is {type_name(value, json_word=False)}, and a "
          "spec is a JSON object)")


_JSON_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def decode(text: str) -> JSON:
  """`text` decoded: refused when too long, too deep, of too many entries
  or when a key repeats."""
  text = text.removeprefix(_BOM)
  if len(text) > MAX_BYTES:
    raise ValueError(
        f"the spec is {len(text):,} characters long, past the "
        f"{MAX_BYTES // 2**20} MiB a spec may have (a large mask belongs in "
        "a .npy file beside it).")
  depth = 0
  for match in _JSON_STRUCTURE.finditer(text):
    bracket = match.group()
    if bracket in "[{":
      depth += 1
      if depth > MAX_DEPTH:
        raise ValueError(
            f"the spec nests JSON more than {MAX_DEPTH} levels deep (at "
            f"character {match.start() + 1}); a spec needs 3.")
    elif bracket in "]}":
      depth -= 1
  repeated: List[Tuple[Dict[str, JSON], str]] = []
  objects = [0]

  def object_from(pairs: Sequence[Tuple[str, JSON]]) -> Dict[str, JSON]:
    objects[0] += 1
    if objects[0] > 2 * MAX_ENTRIES + 1:  # Each entry is one or two.
      _too_many()
    result: Dict[str, JSON] = {}
    for key, value in pairs:
      if key in result:
        repeated.append((result, key))
      result[key] = value
    return result

  try:
    data: JSON = json.loads(text, object_pairs_hook=object_from)
  except json.JSONDecodeError as error:
    raise ValueError(
        f"the spec is not valid JSON: {str(error).rstrip('.')}.") from None
  except RecursionError:
    raise ValueError("the spec nests JSON too deep to read.") from None
  if isinstance(data, dict) and len(data) > MAX_ENTRIES:
    _too_many()
  if repeated:
    raise ValueError(_repeated_message(data, *repeated[0]))
  return data


def _too_many() -> NoReturn:
  raise ValueError(
      f"the spec has more than {MAX_ENTRIES:,} entries, the most a spec may "
      "have (a name pattern such as \"**/bias\" names many variables in "
      "one entry).")


def _repeated_message(data: JSON, where: Dict[str, JSON], key: str) -> str:
  if where is data:
    return (f"the spec names '{key}' twice; a spec names each variable once "
            "(JSON keeps only the last, so the first would be lost).")
  if isinstance(data, dict):
    for name, entry in data.items():
      if entry is where:
        return (f"'{name}' in the spec has the key \"{key}\" twice; give it "
                "once.")
  return f"the spec has the key \"{key}\" twice in one object; give it once."


def type_name(value: JSON, json_word: bool = True) -> str:
  """`a JSON array`, `a JSON number`, `true`, ...; `an array` without the
  word JSON."""
  if isinstance(value, bool) or value is None:
    return json.dumps(value)
  kinds: Dict[type, str] = {dict: "object", list: "array", str: "string"}
  kind = kinds.get(type(value), "number")
  if json_word:
    return f"a JSON {kind}"
  return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
