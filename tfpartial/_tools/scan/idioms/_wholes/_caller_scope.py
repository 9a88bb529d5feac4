"""Whether a filter keeps the scope every caller opens around the model:
`with tf.variable_scope(name_or_scope=name_scope): Model(config,
name_scope=name_scope)`, whose constructor trains `[v for v in
tf.trainable_variables() if name_scope in v.name]`. Everything the
constructor makes lies under the scope its caller opened: the filter
keeps the whole model (a dialogue GAN's generator and discriminator, each
built by its own `create_model`). A filter that also tests a literal
(`and 'emb' not in v.name`), a model no caller builds inside the scope it
passes, or one a caller builds outside any scope, stays a candidate. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project


def opened_by_callers(project: Project, node: ast.AST,
                      home: _scopes.Scope) -> bool:
  """Whether `node` (a filter in `home`) tests only a parameter of its
  function, every call of which lies inside a variable scope, one of them
  opened on the expression it passes."""
  function = home.node
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  param = _tested_parameter(node, _parameters(function))
  if param is None:
    return False
  name = function.name
  if name == "__init__":
    if home.cls is None:
      return False
    name = home.cls.name  # Built as `Model(...)`.
  # The callers build the model in files that may train nothing.
  calls = list(project.calls_named(
      (name,), project.all_modules_with((name,))))
  opened = [_scopes_around(scope, call) for scope, call in calls]
  given = [_given(call, function, param) for _, call in calls]
  # A caller may build it under another scope (a file's own test `main`),
  # never under none: nothing would tie the names to the scope given.
  return all(opened) and any(
      g is not None and ast.unparse(g) in o for g, o in zip(given, opened))


def _parameters(function: ast.AST) -> List[str]:
  """The function's parameters by position (`self` aside), then by
  keyword only."""
  args = getattr(function, "args")
  names = [a.arg for a in (*args.posonlyargs, *args.args)]
  if names[:1] == ["self"]:
    names = names[1:]
  return names + [a.arg for a in args.kwonlyargs]


def _tested_parameter(node: ast.AST, params: List[str]) -> Optional[str]:
  """The one parameter the filter tests names against, if it tests no
  literal beside it."""
  if any(isinstance(n, ast.Constant) and isinstance(n.value, str)
         for n in ast.walk(node)):
    return None
  read = {n.id for n in ast.walk(node)
          if isinstance(n, ast.Name) and n.id in params}
  return read.pop() if len(read) == 1 else None


def _given(call: ast.Call, function: ast.AST, param: str
           ) -> Optional[ast.expr]:
  """What `call` passes for `function`'s parameter `param`."""
  for keyword in call.keywords:
    if keyword.arg == param:
      return keyword.value
  names = _parameters(function)
  index = names.index(param) if param in names else len(call.args)
  starred = any(isinstance(a, ast.Starred) for a in call.args)
  return call.args[index] if index < len(call.args) and not starred \
      else None


def _scopes_around(scope: _scopes.Scope, call: ast.Call) -> Tuple[str, ...]:
  """The expressions the variable scopes of `call`'s function around it
  are opened on."""
  return tuple(text for w in scope.nodes
               if isinstance(w, ast.With) and _spans(w, call)
               for text in _opened(w))


def _spans(statement: ast.With, call: ast.Call) -> bool:
  end = getattr(statement, "end_lineno", None) or statement.lineno
  return statement.lineno < call.lineno <= end


def _opened(statement: ast.With) -> Tuple[str, ...]:
  """The expressions a `with` opens variable scopes on."""
  # A name scope leaves `get_variable`'s names as they are: not counted.
  opened = (_opened_scopes.opened_on(i.context_expr, _VARIABLE_SCOPE, True)
            for i in statement.items)
  return tuple(ast.unparse(e) for e in opened if e is not None)


_VARIABLE_SCOPE = frozenset({"variable_scope"})
