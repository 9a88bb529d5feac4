"""A notebook's code cells as the Python IPython runs, cell by cell.

IPython runs more than Python: line magics (`%pip install x`), shell
escapes (`!ls`, `files = !ls`), help (`np.sum?`, `??x`), autocall (`/f x`)
and cell magics (`%%bash`). Each such line becomes a placeholder statement
at its own indentation (`pass`, or `files = None` for an assignment), so a
block whose only statement was a magic still parses; its backslash
continuation lines become blank lines, so every line keeps its number. A
cell magic whose body is not Python skips its cell (`%%bash`, `%%html`,
...); those whose body is Python keep it (`PYTHON_CELL_MAGICS`, and
`%%writefile` of a `.py` file). Each cell is then parsed alone: one that
still does not parse is left out and named in a note, never the notebook.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Dict, List, Optional, Tuple

from tfpartial._tools.scan import _lines
from tfpartial._tools.scan import _py2
from tfpartial._tools.scan import _scopes

MAX_CELLS = 10_000
# Cell magics that run (or write, to be run) their body as Python.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "px", "python",
                      "python3"}
WRITE_MAGICS = {"writefile", "file"}  # Python when the file is `.py`.
ESCAPES = "!%?/,;"  # No Python statement starts with one of these.
_CELL_MAGIC = re.compile(r"%%(\w+)(.*)")
# A line that may be IPython's (most cells have none).
_CANDIDATE = re.compile(r"^[ \t]*[!%?/,;]|\?|=[ \t]*[!%]", re.M)
_ASSIGNED = re.compile(
    r"(\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*,?)\s*=\s*[!%]")

Cells = Tuple[Tuple[int, int], ...]


def read(path: str, data: bytes) -> Tuple[str, Cells, Tuple[str, ...]]:
  """(text, cells, notes) of the notebook `data`: the Python of its code
  cells one after the other, (first line, cell number) per cell kept, and
  a line naming each cell left out. `ValueError` if it is not a notebook.

  >>> read("n.ipynb", b'{"cells": [{"cell_type": "code", "source": '
  ...      b'["!ls\\\\n", "x = 1"]}]}')
  ('pass\\nx = 1\\n', ((1, 1),), ())
  """
  text, cells, notes, _ = read_tree(path, data)
  return text, cells, notes


def read_tree(path: str, data: bytes
              ) -> Tuple[str, Cells, Tuple[str, ...], Optional[ast.Module]]:
  """`read`, and the tree of its text: the whole notebook's, or its kept
  cells' put together when it does not parse whole (parsed once: the
  scan's project takes that tree).

  >>> read_tree("n.ipynb", b'{"cells": [{"cell_type": "code", "source": '
  ...           b'["x = 1"]}]}')[3].body[0].lineno
  1
  """
  cells = []
  for number, code in _code_cells(_load(data)):
    python = python_of(code)
    if python is not None:
      cells.append((number, python))
  notes = []
  tree = _tree("\n".join(python for _, python in cells))
  if tree is None:
    parsed = []  # Cell by cell, only when the whole does not parse.
    tree, line = ast.Module(body=[], type_ignores=[]), 1
    for number, python in cells:
      # Its tree moved to where it lands in the text: the cells' trees make
      # the text's tree (the project then parses no notebook twice).
      cell, python = _cell_tree(python, line)
      if cell is None:
        notes.append(f"{path}: cell {number}, {_parse_error(python)}")
      else:
        parsed.append((number, python))
        tree.body.extend(cell.body)
        line += len(python.split("\n"))
    cells = parsed
  lines: List[str] = []
  starts = []
  for number, python in cells:
    starts.append((len(lines) + 1, number))
    lines.extend(python.split("\n"))
  return "\n".join(lines) + "\n", tuple(starts), tuple(notes), tree


def _load(data: bytes) -> Any:
  try:
    notebook = json.loads(data.decode("utf-8-sig"))
  except (ValueError, RecursionError):
    raise ValueError("not a notebook (JSON with cells)") from None
  if not isinstance(notebook, dict):
    raise ValueError("not a notebook (JSON with cells)")
  language = _language(notebook.get("metadata"))
  if language and "python" not in language.lower():
    raise ValueError(f"a notebook in {language}, not Python")
  return notebook


def _language(metadata: Any) -> str:
  """The notebook's language, as its metadata says ("" if it does not)."""
  if not isinstance(metadata, dict):
    return ""
  for key, field in (("kernelspec", "language"), ("language_info", "name")):
    value = metadata.get(key)
    if isinstance(value, dict) and isinstance(value.get(field), str):
      return str(value[field])
  return ""


def _code_cells(notebook: Any) -> List[Tuple[int, str]]:
  """(cell number, code) of each code cell; the format 3 (`worksheets`,
  `input`) too."""
  cells = notebook.get("cells")
  key = "source"
  if cells is None and isinstance(notebook.get("worksheets"), list):
    cells = [cell for sheet in notebook["worksheets"] if isinstance(sheet, dict)
             and isinstance(sheet.get("cells"), list) for cell in sheet["cells"]]
    key = "input"
  if not isinstance(cells, list) or len(cells) > MAX_CELLS:
    raise ValueError("not a notebook (JSON with cells)")
  code = []
  for number, cell in enumerate(cells, 1):
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
      continue
    text = cell.get(key, "")
    if isinstance(text, list) and all(isinstance(t, str) for t in text):
      text = "".join(text)
    if not isinstance(text, str):
      raise ValueError(f"not a notebook (cell {number}: its source is not "
                       "text)")
    code.append((number, text.replace("\r\n", "\n").replace("\r", "\n")))
  return code


def python_of(code: str) -> Optional[str]:
  """The Python IPython runs for one cell, line for line; None when the
  cell's magic says its body is not Python.

  >>> print(python_of("if ok:\\n    !pip install x \\\\\\n      y\\nz = 1"))
  if ok:
      pass
  <BLANKLINE>
  z = 1
  >>> python_of("%%bash\\nls") is None
  True
  >>> python_of("  x = 1\\n  y = 2")  # Columns move with the indentation.
  'x = 1\\ny = 2'
  """
  lines = code.split("\n")
  first = next((n for n, line in enumerate(lines) if line.strip()), None)
  if first is None:
    return code
  indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
  if indent:  # IPython runs a cell indented as a whole as if it were not.
    lines = [line[len(indent):] if line.startswith(indent) else line
             for line in lines]
  if lines[first].startswith("%%"):
    if not _python_body(lines[first]):
      return None
    lines[first] = ""
  if not _CANDIDATE.search(code):
    return "\n".join(lines)  # Python only: most cells.
  return "\n".join(_without_magics(lines))


def _python_body(line: str) -> bool:
  """Whether the cell magic on `line` runs its body as Python."""
  magic = _CELL_MAGIC.match(line)
  if not magic:
    return False
  name, arguments = magic.group(1), magic.group(2).split()
  if name in WRITE_MAGICS:
    return bool(arguments) and arguments[-1].endswith(".py")
  return name in PYTHON_CELL_MAGICS


def _without_magics(lines: List[str]) -> List[str]:
  """`lines` with each magic, escape or help line (at the start of a
  statement) replaced by a placeholder, its continuation lines blank."""
  out: List[str] = []
  state = _lines.LineState()
  number = 0
  # Past the last line that may be IPython's, every line is kept as is.
  last = next((n for n in range(len(lines) - 1, -1, -1)
               if _may_be_ipython(lines[n])), -1)
  while number <= last:
    line = lines[number]
    number += 1
    if state.at_start():
      placeholder = _placeholder(line)
      if placeholder is not None:
        out.append(placeholder)
        while line.endswith("\\") and number < len(lines):
          line = lines[number]
          number += 1
          out.append("")
        continue
    out.append(line)
    state.feed(line)
  return out + lines[number:]


def _may_be_ipython(line: str) -> bool:
  """Whether `_placeholder` may stand for `line` (an escape first, an
  assignment from `!` or `%`, or a `?`)."""
  return "?" in line or "!" in line or "%" in line or (
      line.lstrip()[:1] in ("/", ",", ";"))


def _placeholder(line: str) -> Optional[str]:
  """The statement standing for `line` if it is IPython's, else None."""
  code = line.lstrip()
  indent = line[:len(line) - len(code)]
  if code[:1] and code[0] in ESCAPES:
    return indent + "pass"
  assigned = _ASSIGNED.match(line)
  if assigned:
    return assigned.group(1).rstrip() + " = None"
  if "?" in line:
    probe = _lines.LineState()
    end = probe.feed(line)
    if not probe.quote and line[:end].rstrip().endswith("?"):
      return indent + "pass"
  return None


def _tree(python: str) -> Optional[ast.Module]:
  """The tree of `python` (the text `read` returns, but for its last
  newline, which changes no node), or None when it does not parse."""
  try:
    return ast.parse(python)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return None


def _cell_tree(python: str, line: int) -> Tuple[Optional[ast.Module], str]:
  """(tree, text) of a cell starting at `line` of the notebook's text: as
  it is, or repaired as Python 2 (tree None when neither parses)."""
  try:
    tree = ast.parse(python)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    fixed = _py2.repair(python)
    if fixed is None:
      return None, python
    try:
      tree, python = ast.parse(fixed), fixed
    except (SyntaxError, ValueError):
      return None, python
  return (moved(tree, line - 1) if line > 1 else tree), python


def moved(tree: ast.Module, lines: int) -> ast.Module:
  """`tree` moved down `lines` lines, as `ast.increment_lineno` but in one
  pass of the scanner's walk: the shared `Load` and `+` leaves, which hold
  no position, are not visited once per use.

  >>> moved(ast.parse("x = (1 +\\n  2)"), 4).body[0].value.end_lineno
  6
  """
  for node in _scopes.walk(tree):
    placed = _PLACED.get(type(node))
    if placed is None:
      placed = _PLACED[type(node)] = "lineno" in type(node)._attributes
    if placed:
      setattr(node, "lineno", getattr(node, "lineno") + lines)
      end = getattr(node, "end_lineno", None)
      if end is not None:
        setattr(node, "end_lineno", end + lines)
  return tree


# Node type -> whether its nodes have a position (statements, expressions).
_PLACED: Dict[type, bool] = {}


def _parse_error(python: str) -> str:
  """Why the cell does not parse ("" when it does)."""
  try:
    ast.parse(python)
  except SyntaxError as error:
    return f"line {error.lineno or 0}: skipped: does not parse ({error.msg})"
  except ValueError as error:  # A null character.
    return f"line 1: skipped: does not parse ({error})"
  except (RecursionError, MemoryError):
    return "line 1: skipped: nested too deeply to parse"
  return ""
