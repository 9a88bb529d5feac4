"""Name patterns in spec files: a key may match many checkpoint names.

`*` matches within one name segment (no `/`), `**` across segments (and
`**/` any number of leading segments, none included), `?` one character;
everything else is literal. `"encoder/layer_*/attention/*/kernel"` names
the attention kernels of every layer, `"**/bias"` every bias. A pattern is
resolved against the names there are (the variables given to
`load_spec`, the variables of a checkpoint for `verify`) into one entry
per name it matches; a pattern that matches nothing is an error naming it
and the nearest names. Each pattern is compiled once and tried once per
name, so resolving costs time in proportion to names times patterns.
"""

from __future__ import annotations

import difflib
import re
from typing import Dict, List, Sequence, Tuple

from tfpartial._frozen._specfile import Entry

_WILD = "*?"


def is_pattern(key: str) -> bool:
  """Whether a spec key is a pattern (it holds `*` or `?`).

  >>> is_pattern("dense/kernel"), is_pattern("**/bias")
  (False, True)
  """
  return any(character in key for character in _WILD)


def compiled(pattern: str) -> "re.Pattern[str]":
  """The regular expression a pattern stands for, matching whole names.

  >>> bool(compiled("layer_*/kernel").fullmatch("layer_3/kernel"))
  True
  >>> bool(compiled("layer_*/kernel").fullmatch("layer_3/attn/kernel"))
  False
  >>> [bool(compiled("**/bias").fullmatch(n)) for n in ("bias", "a/b/bias")]
  [True, True]
  """
  parts, position = [], 0
  while position < len(pattern):
    if pattern.startswith("**/", position):
      parts.append("(?:[^/]*/)*")
      position += 3
    elif pattern.startswith("**", position):
      parts.append(".*")
      position += 2
    elif pattern[position] == "*":
      parts.append("[^/]*")
      position += 1
    elif pattern[position] == "?":
      parts.append("[^/]")
      position += 1
    else:
      parts.append(re.escape(pattern[position]))
      position += 1
  return re.compile("".join(parts))


def expand(entries: Sequence[Entry],
           names: Sequence[str]) -> List[Tuple[Entry, str]]:
  """(entry, key) per concrete name: a concrete entry as it is, a pattern
  entry once per name it matches (in the order of `names`), each with the
  key that named it.

  Raises:
    ValueError: a pattern matches none of `names`.
  """
  expanded: List[Tuple[Entry, str]] = []
  for entry in entries:
    if not is_pattern(entry.name):
      expanded.append((entry, entry.name))
      continue
    expression = compiled(entry.name)
    matched = [name for name in names if expression.fullmatch(name)]
    if not matched:
      raise unmatched(entry.name, names)
    expanded.extend((entry._replace(name=name), entry.name)
                    for name in matched)
  return expanded


def matches(expanded: Sequence[Tuple[Entry, str]]) -> Dict[str, List[str]]:
  """Key -> the concrete names it matched, for `verify --explain`."""
  found: Dict[str, List[str]] = {}
  for entry, key in expanded:
    found.setdefault(key, []).append(entry.name)
  return found


def unmatched(pattern: str, names: Sequence[str]) -> ValueError:
  """A pattern that matches no name."""
  literal = "".join(c for c in pattern if c not in _WILD)
  near = difflib.get_close_matches(literal, list(names), n=3, cutoff=0.3)
  hint = (f"; the nearest names are {', '.join(repr(n) for n in near)}"
          if near else "")
  return ValueError(
      f"the spec's pattern '{pattern}' matches no variable (of "
      f"{len(names)}){hint}. `*` matches within one name segment, `**` "
      "across segments, `?` one character.")
