"""Name patterns in spec files: a key may match many checkpoint names.

`*` matches within one name segment (no `/`), `**` across segments (and
`**/` any number of leading segments, none included), `?` one character;
everything else is literal, and `\\` makes the next `*`, `?`, `[` or `\\`
literal (`_glob`). `"encoder/layer_*/attention/*/kernel"` names the
attention kernels of every layer, `"**/bias"` every bias. An entry may
carry `"exclude": [PATTERN, ...]`: the names its key matches, less those any
exclusion matches (`{"**": {"freeze": "...", "exclude": ["**/bias"]}}`
trains only the biases). A pattern is resolved against the names there are
(the variables given to `load_spec`, the variables of a checkpoint for
`verify`) into one entry per name it matches; a pattern that matches
nothing, an exclusion that excludes nothing, and an entry left with no name
or freezing no element are errors saying what was probably meant. Each
pattern is compiled once and tried once per name, and a match costs time
linear in the name, so resolving costs time in proportion to the names'
length times the patterns.
"""

from __future__ import annotations

import difflib
from typing import Dict, List, Sequence, Tuple

from tfpartial._frozen import _glob
from tfpartial._frozen._specfile import Entry

is_pattern = _glob.is_pattern


def compiled(pattern: str) -> _glob.Glob:
  """The matcher of a pattern, matching whole names.

  >>> compiled("layer_*/kernel").fullmatch("layer_3/kernel")
  True
  """
  return _glob.Glob(pattern)


def expand(entries: Sequence[Entry],
           names: Sequence[str]) -> List[Tuple[Entry, str]]:
  """(entry, key) per concrete name: a concrete entry as it is, a pattern
  entry once per name it matches and no exclusion does (in the order of
  `names`), each with the key that named it.

  Raises:
    ValueError: a pattern matches none of `names`, an exclusion excludes
      none of the names its key matches, or the exclusions exclude all.
  """
  expanded: List[Tuple[Entry, str]] = []
  for entry in entries:
    if not entry.pattern:
      expanded.append((entry, entry.name))
      continue
    expression = compiled(entry.name)
    matched = [name for name in names if expression.fullmatch(name)]
    if not matched:
      raise unmatched(entry.name, names)
    kept = _excluded(entry, matched)
    expanded.extend((entry._replace(name=name, pattern=False, exclude=()),
                     entry.name) for name in kept)
  return expanded


def _excluded(entry: Entry, matched: List[str]) -> List[str]:
  """`matched` less what `entry`'s exclusions match; ValueError if one
  excludes nothing or all are excluded."""
  excluded = set()
  for exclusion in entry.exclude:
    expression = compiled(exclusion)
    hits = {name for name in matched if expression.fullmatch(name)}
    if not hits:
      near = difflib.get_close_matches(
          _glob.unescape(exclusion.replace("*", "").replace("?", "")),
          matched, n=3, cutoff=0.3)
      hint = (f"; the nearest are {', '.join(repr(n) for n in near)}"
              if near else "")
      raise ValueError(
          f"the exclusion '{exclusion}' of the spec's entry '{entry.name}' "
          f"excludes none of the {len(matched)} name(s) the key matches"
          f"{hint}.")
    excluded |= hits
  kept = [name for name in matched if name not in excluded]
  if not kept:
    raise ValueError(
        f"the spec's entry '{entry.name}' freezes nothing: its exclusions "
        f"exclude all {len(matched)} name(s) its key matches.")
  return kept


def matches(expanded: Sequence[Tuple[Entry, str]]) -> Dict[str, List[str]]:
  """Key -> the concrete names it matched, for `verify --explain`."""
  found: Dict[str, List[str]] = {}
  for entry, key in expanded:
    found.setdefault(key, []).append(entry.name)
  return found


def unmatched(pattern: str, names: Sequence[str]) -> ValueError:
  """A pattern that matches no name."""
  literal = "".join(c for c in pattern if c not in "*?")
  near = difflib.get_close_matches(literal, list(names), n=3, cutoff=0.3)
  hint = (f"; the nearest names are {', '.join(repr(n) for n in near)}"
          if near else "")
  return ValueError(
      f"the spec's pattern '{pattern}' matches no variable (of "
      f"{len(names)}){hint}. `*` matches within one name segment, `**` "
      "across segments, `?` one character.")
