"""Edits of the original text: replace a node, insert a line, add the
import; the helpers the ports share."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple, Union

from tfpartial._tools.scan._finding import Edit

Port = Union[Tuple[Edit, ...], str]  # The edits, or why it is by hand.


def text(node: ast.AST, lines: List[str]) -> str:
  return ast.get_source_segment("".join(lines), node) or ast.unparse(node)


def replace(node: ast.AST, text: str) -> Edit:
  return Edit(node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
              node.end_col_offset or 0, text)  # type: ignore[attr-defined]


def statement_of(node: ast.AST, module: ast.Module) -> Optional[ast.stmt]:
  best = None
  for statement in ast.walk(module):
    if isinstance(statement, ast.stmt) and not isinstance(
        statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                    ast.For, ast.While, ast.If, ast.With, ast.Try)) and (
        statement.lineno <= node.lineno <=  # type: ignore[attr-defined]
        (statement.end_lineno or 0)):
      best = statement
  return best


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


def frozen_where_zero(mask: str, tf: str) -> str:
  return f"{tf}.get_static_value({tf}.convert_to_tensor({mask})) == 0"


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


def with_import(module: ast.Module, edits: List[Edit]) -> Tuple[Edit, ...]:
  """`edits`, and `import tfpartial` if the module lacks it."""
  extra = import_edit(module)
  return tuple(edits + ([extra] if extra else []))


def spec_site(statement: ast.stmt, scope_node: ast.AST) -> ast.stmt:
  """Where the spec is made: before `statement`, or before the function
  it is in when that is a `tf.function` (made once, not per trace)."""
  if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
      "function" in ast.unparse(d) for d in scope_node.decorator_list):
    site = ast.Pass()
    first = scope_node.decorator_list[0]
    site.lineno, site.col_offset = first.lineno, scope_node.col_offset
    return site
  return statement
