"""Edits of the original text: replace a node, insert a line, add the
import; the helpers the ports share."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple, Union

from tfpartial._tools.scan import _deep
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _traced
from tfpartial._tools.scan._finding import Edit

Port = Union[Tuple[Edit, ...], str]  # The edits, or why it is by hand.


def text(node: ast.AST, lines: List[str]) -> str:
  """The source text of `node`, from the file's own lines; `_deep.TooDeep`
  when only the tree could give it and `_deep` cut part of it."""
  start = getattr(node, "lineno", None)
  end = getattr(node, "end_lineno", None)
  col = getattr(node, "col_offset", None)
  end_col = getattr(node, "end_col_offset", None)
  if start is None or end is None or col is None or end_col is None or (
      end > len(lines)):
    return _unparsed(node)
  if start == end:
    cut = _cut(lines[start - 1], col, end_col)
  else:
    cut = _cut(lines[start - 1], col, None) + "".join(
        lines[start:end - 1]) + _cut(lines[end - 1], 0, end_col)
  tabbed = any("\t" in line for line in lines[start - 1:end])
  return cut if not tabbed or _same(cut, node) else _unparsed(node)


def _unparsed(node: ast.AST) -> str:
  if _deep.holds_cut(node):
    raise _deep.TooDeep()
  return ast.unparse(node)


def _same(cut: str, node: ast.AST) -> bool:
  """Whether `cut` is `node`'s text: the lines a tree was parsed from can
  differ from the file's where a tab indents them (Python 2 tabs
  expanded), and then so do their columns."""
  if not isinstance(node, ast.expr):
    return True
  try:
    parsed = ast.parse("(" + cut + "\n)", mode="eval").body
  except (SyntaxError, ValueError):
    return False
  return ast.unparse(parsed) == ast.unparse(node)


def _cut(line: str, start: int, end: Optional[int]) -> str:
  """`line[start:end]` with `ast`'s UTF-8 byte columns."""
  data = line.encode("utf-8")
  return data[start:end].decode("utf-8", "replace")


def replace(node: ast.AST, text: str) -> Edit:
  line = int(getattr(node, "lineno", 0))
  return Edit(line, int(getattr(node, "col_offset", 0)),
              int(getattr(node, "end_lineno", None) or line),
              int(getattr(node, "end_col_offset", None) or 0), text)


def before(statement: ast.stmt, lines: List[str], text: str) -> Edit:
  """A line of `text` before `statement`, at its indentation, wrapped
  after its first parenthesis when it would pass 80 columns."""
  indent = lines[statement.lineno - 1][:statement.col_offset]
  if len(indent) + len(text) > 79 and "(" in text:
    head, tail = text.split("(", 1)
    text = f"{head}(\n{indent}    {tail}"
  return Edit(statement.lineno, 0, statement.lineno, 0,
              f"{indent}{text}\n")


def import_edit(module: ast.Module) -> Optional[Edit]:
  """`import tfpartial` after the module's last top-level import."""
  last = None
  for statement in module.body:
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
      if any(a.name == "tfpartial" for a in statement.names):
        return None
      last = statement
  line = (last.end_lineno or last.lineno) + 1 if last else 1
  return Edit(line, 0, line, 0, "import tfpartial\n")


def tf_alias(module: ast.Module) -> Optional[str]:
  """The name the module imports TensorFlow as, if any."""
  for statement in module.body:
    if isinstance(statement, ast.Import):
      for alias in statement.names:
        if alias.name.startswith("tensorflow"):
          return alias.asname or None if "." in alias.name else (
              alias.asname or "tensorflow")
  return None


def numpy_alias(module: ast.Module) -> Optional[str]:
  """The name the module imports NumPy as, if any."""
  for statement in module.body:
    if isinstance(statement, ast.Import):
      for alias in statement.names:
        if alias.name == "numpy":
          return alias.asname or "numpy"
  return None


def frozen_where_zero(mask: str, tf: str, np: str = "np",
                      variable: str = "") -> str:
  """The frozen elements of `variable` where the mask is 0, as a bool
  array of the variable's shape (the mask may broadcast against it)."""
  value = f"{tf}.get_static_value({tf}.convert_to_tensor({mask})) == 0"
  if not variable:
    return value
  return f"{np}.broadcast_to({value}, {variable}.shape.as_list())"


def spec_name(module: ast.Module) -> str:
  """`spec`, or `tfpartial_spec` when the module already uses `spec`."""
  used = any(isinstance(n, ast.Name) and n.id == "spec"
             for n in ast.walk(module))
  return "tfpartial_spec" if used else "spec"


def apply_with(sink: ast.Call, spec: str, lines: List[str]) -> Optional[Edit]:
  """`opt.apply_gradients(a)` -> `spec.apply_gradients(opt, a)`, the
  arguments left as they were written."""
  func = sink.func
  if not isinstance(func, ast.Attribute) or not sink.args or (
      func.end_lineno is None or func.end_col_offset is None):
    return None
  line = lines[func.end_lineno - 1]
  if line[func.end_col_offset:func.end_col_offset + 1] != "(":
    return None
  receiver = text(func.value, lines)
  first = sink.args[0]
  joint = " " if first.lineno == func.end_lineno else ""
  return Edit(sink.lineno, sink.col_offset, func.end_lineno,
              func.end_col_offset + 1,
              f"{spec}.{func.attr}({receiver},{joint}")


def with_import(module: ast.Module, edits: List[Edit],
                numpy: bool = False, functools: bool = False
                ) -> Tuple[Edit, ...]:
  """`edits`, and `import tfpartial` (and NumPy, functools) if the module
  lacks it."""
  wanted = "".join(
      f"import {name}\n" for name, needed in (("numpy as np", numpy), (
          "functools", functools and not _imports(module, "functools")))
      if needed)
  extra = import_edit(module)
  if extra is not None and wanted:
    extra = Edit(extra.line, 0, extra.line, 0, wanted + extra.text)
  elif wanted:
    line = _last_import_line(module)
    extra = Edit(line, 0, line, 0, wanted)
  return tuple(edits + ([extra] if extra else []))


def _imports(module: ast.Module, name: str) -> bool:
  return any(isinstance(s, ast.Import) and any(
      a.name == name and a.asname is None for a in s.names)
             for s in module.body)


def _last_import_line(module: ast.Module) -> int:
  last = None
  for statement in module.body:
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
      last = statement
  return (last.end_lineno or last.lineno) + 1 if last else 1


def in_trace(scope: _scopes.Scope) -> bool:
  """Whether `scope` is a function that a decorator makes, or may make,
  a `tf.function` (`_traced.may_be_traced`): a spec made from values
  the function computes is then by hand."""
  return isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
      _traced.may_be_traced(scope.node, scope.parent))


def spec_site(statement: ast.stmt, scope: _scopes.Scope) -> ast.stmt:
  """Where the spec is made: before `statement`, or before the function
  `scope` is when a decorator makes it a `tf.function` (made once, not
  per trace; the decorator resolved, `_traced`)."""
  scope_node = scope.node
  if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
      _traced.traced(scope_node, scope.parent)):
    site = ast.Pass()
    first = scope_node.decorator_list[0]
    site.lineno, site.col_offset = first.lineno, scope_node.col_offset
    return site
  return statement
