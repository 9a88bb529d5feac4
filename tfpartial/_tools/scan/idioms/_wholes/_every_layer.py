"""Whether a name filter keeps the whole model: every layer the model is
built with under its root scope is named with the filter's text
(`with tf.variable_scope('CTRL_Model'): fc('v2s_lt', ...); fc('s2s_lt',
...); vs_multilayer(x, 'vs_multilayer_lt')`, trained as
`get_variables_by_name(['lt'])`): a filter every variable passes leaves
nothing out. The names are the literal strings a call in a root scope's
`with` block is given (positional, or as `name=` / `scope=`); a scope a
function opens under a name its caller gives is a layer's, not a root;
fewer than two names tell nothing. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
import re
from typing import FrozenSet, Iterator, List, Sequence, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_NAMING = {"name", "scope"}
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def keeps_all(analysis: Analysis, node: ast.AST,
              tests: Sequence[ast.AST]) -> bool:
  """Whether each literal string `node` (a filter, or the list it keeps)
  and the `tests` that choose it read is part of every layer name built
  under a root scope, and none is a whole layer name; the tests only
  keep names that hold a text (`name in v.name`), never negated."""
  read = [n for each in (node, *tests) for n in _scopes.walk(each)]
  compared = [n for n in read if isinstance(n, ast.Compare)]
  if not compared or any(not all(isinstance(op, ast.In) for op in n.ops)
                         for n in compared) or any(
      isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)
      for n in read):
    return False
  texts = {n.value for n in read if isinstance(n, ast.Constant) and (
      isinstance(n.value, str)) and n.value}
  if not texts:
    return False
  layers = analysis.once("layer names", lambda: set(
      _layer_names(analysis.project)))  # Once per scan, not per list.
  assert isinstance(layers, set)
  return len(layers) >= 2 and all(
      text not in layers and all(text in layer for layer in layers)
      for text in texts)


def _layer_names(project: _project.Project) -> Iterator[str]:
  """The literal names given to calls inside each root scope's block."""
  for module in project.modules:
    if "_scope(" not in module.source.text or not project.parsed(
        module) or module.tree is None:
      continue
    for block in _root_blocks(module.tree.body):
      for statement in block:
        for call in _scopes.walk(statement):
          if isinstance(call, ast.Call):
            yield from _given_names(call)


def _root_blocks(body: List[ast.stmt], params: FrozenSet[str] = frozenset()
                 ) -> Iterator[List[ast.stmt]]:
  """The bodies of the `with variable_scope(...)` blocks not inside
  another scope, but for a scope named by the function's caller (`def
  fc(name, x): with tf.variable_scope(name):`, a layer's own)."""
  for statement in body:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
      names = frozenset(a.arg for a in ast.walk(statement.args)
                        if isinstance(a, ast.arg))
      yield from _root_blocks(statement.body, names)
      continue
    opened = [i.context_expr for i in getattr(statement, "items", [])
              if isinstance(i.context_expr, ast.Call) and _names.call_name(
                  i.context_expr) in _names.TF_SCOPES]
    if isinstance(statement, ast.With) and opened:
      if not any(o.args and isinstance(o.args[0], ast.Name) and (
          o.args[0].id in params) for o in opened):
        yield statement.body
      continue
    for block in _scopes.blocks(statement):
      yield from _root_blocks(block, params)


def _given_names(call: ast.Call) -> Set[str]:
  values = [*call.args, *(k.value for k in call.keywords
                          if k.arg in _NAMING)]
  return {v.value for v in values if isinstance(v, ast.Constant) and (
      isinstance(v.value, str)) and _IDENTIFIER.match(v.value)}
