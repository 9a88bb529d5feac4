"""Name patterns, matched in time linear in the name; literal names escaped.

A spec key is a pattern over checkpoint names when it holds an unescaped
`*` or `?`: `*` matches within one name segment (no `/`), `**` across
segments (and `**/` any number of whole leading segments, none included),
`?` one character; anything else is literal. A backslash makes the next
`*`, `?`, `[` or `\\` literal (`to_json` so writes a name that holds one,
so that it is read back as that name); before any other character it is
itself literal, as spec files written before escaping had it.

Python's `re` backtracks: `**/**/**/.../x` against a long name that does
not match takes time exponential in the number of `**`. `Glob` instead
runs the pattern's automaton on all its states at once (a DFA built
lazily, one state set per step), so a match costs one step per character
of the name and each new step at most one pass over the pattern.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

SPECIAL = "*?[\\"  # Escaped in a literal name.
_WILD = "*?"

# Token kinds of a compiled pattern, one automaton state each.
_LITERAL, _ONE, _STAR, _ANY, _SEGMENTS, _ANY_TO_SLASH = range(6)


def escape(name: str) -> str:
  r"""`name` as a spec key that names exactly it.

  >>> escape("w*2"), escape("a\\b")
  ('w\\*2', 'a\\\\b')
  """
  return "".join("\\" + c if c in SPECIAL else c for c in name)


def _tokens(key: str) -> List[Tuple[str, str]]:
  """("char", c) for a literal character, ("wild", w) for `*`, `**`, `**/`
  or `?`, reading escapes."""
  tokens: List[Tuple[str, str]] = []
  position = 0
  while position < len(key):
    character = key[position]
    if character == "\\" and key[position + 1:position + 2] in tuple(SPECIAL):
      tokens.append(("char", key[position + 1]))
      position += 2
    elif key.startswith("**/", position):
      tokens.append(("wild", "**/"))
      position += 3
    elif key.startswith("**", position):
      tokens.append(("wild", "**"))
      position += 2
    elif character in _WILD:
      tokens.append(("wild", character))
      position += 1
    else:
      tokens.append(("char", character))
      position += 1
  return tokens


def is_pattern(key: str) -> bool:
  r"""Whether a spec key is a pattern (an unescaped `*` or `?`).

  >>> is_pattern("dense/kernel"), is_pattern("**/bias"), is_pattern("w\\*")
  (False, True, False)
  """
  return any(kind == "wild" for kind, _ in _tokens(key))


def unescape(key: str) -> str:
  r"""The name a key that is not a pattern names.

  >>> unescape("w\\*2"), unescape("a\\b")
  ('w*2', 'a\\b')
  """
  return "".join(text for _, text in _tokens(key))


def witness(segment: str) -> str:
  """A text that a pattern segment (no `/`) matches: its literals, with
  `?` as one character and the stars matching nothing."""
  return "".join({"*": "", "**": "", "?": "x"}.get(text, text)
                 if kind == "wild" else text
                 for kind, text in _tokens(segment))


class Glob:
  """A compiled pattern: `fullmatch(name)` in one step per character.

  `steps` counts the state sets computed (each a pass over the pattern),
  which tests bound: at most one per character matched.

  >>> Glob("layer_*/kernel").fullmatch("layer_3/kernel")
  True
  >>> Glob("layer_*/kernel").fullmatch("layer_3/attn/kernel")
  False
  >>> [Glob("**/bias").fullmatch(n) for n in ("bias", "a/b/bias")]
  [True, True]
  """

  def __init__(self, pattern: str):
    self.pattern = pattern
    self._states: List[Tuple[int, str]] = []
    for kind, text in _tokens(pattern):
      if kind == "char":
        self._states.append((_LITERAL, text))
      elif text == "**/":  # Nothing, or anything that ends in "/".
        self._states += [(_SEGMENTS, ""), (_ANY_TO_SLASH, "")]
      else:
        self._states.append(({"*": _STAR, "**": _ANY, "?": _ONE}[text], ""))
    self._accept = 1 << len(self._states)
    self._literals = frozenset(text for kind, text in self._states
                               if kind == _LITERAL) | {"/"}
    self._start = self._closure(1)
    self._next: Dict[Tuple[int, str], int] = {}
    self.steps = 0

  def _closure(self, states: int) -> int:
    """`states` and what they reach without reading a character."""
    for position, (kind, _) in enumerate(self._states):
      if states >> position & 1:
        if kind in (_STAR, _ANY, _SEGMENTS):
          states |= 1 << (position + 1)
        if kind == _SEGMENTS:
          states |= 1 << (position + 2)
    return states

  def _step(self, states: int, character: str) -> int:
    """The states after reading `character` (a class: any character that
    is no literal of the pattern reads as "")."""
    self.steps += 1
    after = 0
    for position, (kind, text) in enumerate(self._states):
      if not states >> position & 1:
        continue
      if kind == _LITERAL:
        after |= (text == character) << (position + 1)
      elif kind == _ONE:
        after |= (character != "/") << (position + 1)
      elif kind == _STAR:
        after |= (character != "/") << position
      elif kind == _ANY:
        after |= 1 << position
      elif kind == _ANY_TO_SLASH:
        after |= 1 << position | (character == "/") << (position + 1)
    return self._closure(after)

  def fullmatch(self, name: str) -> bool:
    """Whether the pattern matches all of `name`."""
    states = self._start
    table, literals = self._next, self._literals
    for character in name:
      if character not in literals:
        character = ""
      key = (states, character)
      after = table.get(key)
      if after is None:
        after = table[key] = self._step(states, character)
      states = after
      if not states:
        return False
    return bool(states & self._accept)
