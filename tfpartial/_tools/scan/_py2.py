"""Python 2 read as Python 3, line for line: much TF1 training code was
written for Python 2 (`print x`, `except E, e:`), and a file that does not
parse hides every freeze in it. Only what keeps each statement on its line
is rewritten; a module read this way gets no mechanical port (its text is
not the file's).

>>> print(repair("print 'step', i,\\nexcept ValueError, e:\\n"))
print('step', i)
except ValueError as e:
<BLANKLINE>
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

_PRINT = re.compile(r"^(\s*)print\b(?!\s*\()(?!\s*=)(?!\s*$)\s*(>>\s*[^,]+,)?(.*?)(,?)\s*$")
_BARE_PRINT = re.compile(r"^(\s*)print\s*$")
_EXCEPT = re.compile(r"^(\s*except\s+[^,:]+?|\s*except\s*\([^)]*\))\s*,\s*(\w+)\s*:")
_EXEC = re.compile(r"^(\s*)exec\s+(?!\()(.+?)\s*$")
_RAISE = re.compile(r"^(\s*raise\s+[\w.]+)\s*,\s*(.+?)\s*$")
_OCTAL = re.compile(r"(?<![\w.])(?<![eE][-+])0([0-7]+)(?![\w.])")
_LONG = re.compile(r"(?<![\w.])(\d+)[lL](?!\w)")
_UNICODE = re.compile(r"(?<![\w])[uU][rR](?=['\"])")
_MAX_LINE = 2000  # Longer lines are left alone.


def repair(text: str) -> Optional[str]:
  """`text` with Python 2's statements written as Python 3's, each on its
  own line; None when nothing was rewritten."""
  written = text.split("\n")
  lines = [_expanded(line) for line in written]
  changed = lines != written
  out: List[str] = []
  number = 0
  while number < len(lines):
    line = lines[number]
    number += 1
    found = _PRINT.match(line) if "print" in line and len(
        line) <= _MAX_LINE else None
    if found and found.group(3).rstrip().endswith("\\") and (
        not found.group(2)):
      # `print a, \` continued: the call closes on its last line.
      out.append(f"{found.group(1)}print({found.group(3).rstrip()}")
      while number < len(lines) and lines[number].rstrip().endswith("\\"):
        out.append(lines[number])
        number += 1
      if number < len(lines):
        out.append(lines[number].rstrip().rstrip(",") + ")")
        number += 1
      changed = True
      continue
    if found and not found.group(2) and _open_brackets(found.group(3)) > 0:
      # `print "...".format(` or `print "..." % (a,` continued: the call
      # closes where its brackets do (the comma inside them stays).
      first = found.group(3) + found.group(4)
      out.append(f"{found.group(1)}print({first.rstrip()}")
      depth = _open_brackets(first)
      while number < len(lines) and depth > 0:
        depth += _open_brackets(lines[number])
        out.append(lines[number].rstrip() + (")" if depth <= 0 else ""))
        number += 1
      changed = True
      continue
    fixed = _line(line) if len(line) <= _MAX_LINE else line
    changed = changed or fixed != line
    out.append(fixed)
  return "\n".join(out) if changed else None


def _expanded(line: str) -> str:
  """`line` indented as Python 2 reads it: a tab to the next multiple of
  eight columns (Python 3 refuses tabs mixed with spaces)."""
  if "\t" not in line[:len(line) - len(line.lstrip())]:
    return line
  rest = line.lstrip()
  return line[:len(line) - len(rest)].expandtabs(8) + rest


_STRING = re.compile(r"""'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|#.*""")


def _open_brackets(text: str) -> int:
  """How many more brackets `text` opens than it closes, strings and
  comments left out."""
  bare = _STRING.sub("", text)
  return sum(bare.count(c) for c in "([{") - sum(
      bare.count(c) for c in ")]}")


def _comment(text: str) -> Tuple[str, str]:
  """`text` split before its comment (`x, y  # why`)."""
  for found in _STRING.finditer(text):
    if found.group().startswith("#"):
      return text[:found.start()], "  " + found.group()
  return text, ""


def parse(text: str, filename: str = "<unknown>") -> Optional[ast.Module]:
  """The tree of `text` read as Python 2 (None if that does not parse
  either)."""
  fixed = repair(text)
  if fixed is None:
    return None
  try:
    return ast.parse(fixed, filename=filename)
  except (SyntaxError, ValueError):
    return None


def _line(line: str) -> str:
  if "print" in line:
    bare = _BARE_PRINT.match(line)
    if bare:
      return bare.group(1) + "print()"
    found = _PRINT.match(line)
    if found and not found.group(3).rstrip().endswith("\\"):
      indent, target, rest = found.group(1), found.group(2), found.group(3)
      rest, comment = _comment(rest)
      rest = rest.strip().rstrip(",").strip() if comment else rest.strip()
      if target:
        stream = target.strip()[2:].rstrip(",").strip()
        rest = f"{rest}, file={stream}" if rest else f"file={stream}"
      return f"{indent}print({rest}){comment}"
  if "except" in line:
    line = _EXCEPT.sub(r"\1 as \2:", line)
  if line.lstrip().startswith("exec "):
    line = _EXEC.sub(r"\1exec(\2)", line)
  if line.lstrip().startswith("raise ") and "," in line:
    line = _RAISE.sub(r"\1(\2)", line)
  if "0" in line:
    line = _OCTAL.sub(r"0o\1", line)
    line = _LONG.sub(r"\1", line)
  if "r'" in line or 'r"' in line or "R'" in line or 'R"' in line:
    line = _UNICODE.sub("r", line)
  if "<>" in line:
    line = line.replace("<>", "!=")
  return line
