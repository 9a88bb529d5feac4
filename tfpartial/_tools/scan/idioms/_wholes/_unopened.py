"""Whether a filter excludes a scope that no code which runs opens:
`tf.trainable_variables(scope='(?!.*image_feature_extractor).*')` where
the only `variable_scope(scope or 'image_feature_extractor')` is in a
function nobody calls, and the function called with
`scope='image_feature_extractor'` never reads its `scope` (its layers
sit in scopes of their own). No variable is left out: the list is the
whole model. A scope opened anywhere else (a layer's `scope=`, a library
call, a name kept in a variable) counts as opened. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project

# A regular expression keeping every name but those under one scope.
_EXCLUDING = re.compile(r"\(\?!\.\*([\w/]+)\)\.\*")
# The calls that list every variable.
_EVERY = {"trainable_variables", "global_variables", "all_variables"}
# The calls that open a scope.
_OPENERS = {"variable_scope", "name_scope", "VariableScope"}


def excludes_none(project: _project.Project, node: ast.AST) -> bool:
  """Whether every scope the filter `node` excludes is opened by no code
  of the project that runs."""
  names = _excluded(node)
  inside = {id(n) for n in ast.walk(node)}
  return bool(names) and not any(
      _opened(project, name, inside) for name in names)


def _excluded(node: ast.AST) -> List[str]:
  """The scopes a filter of every variable leaves out, where that is all
  it does: `trainable_variables(scope='(?!.*x).*')`, or `[v for v in
  tf.trainable_variables() if 'x' not in v.name]`; else []."""
  if isinstance(node, ast.Call) and _names.call_name(node) in _EVERY:
    texts = [a.value for a in [*node.args, *(k.value for k in node.keywords)]
             if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    found = [m.group(1) for m in map(_EXCLUDING.fullmatch, texts) if m]
    return found if len(found) == len(texts) == 1 else []
  if not isinstance(node, ast.ListComp) or len(node.generators) != 1:
    return []
  loop = node.generators[0]
  if not (isinstance(loop.iter, ast.Call) and _names.call_name(
      loop.iter) in _EVERY and not loop.iter.args and loop.ifs):
    return []
  names = [t.left.value for t in loop.ifs if isinstance(t, ast.Compare) and (
      isinstance(t.left, ast.Constant)) and isinstance(t.left.value, str) and (
          all(isinstance(o, ast.NotIn) for o in t.ops))]
  return names if len(names) == len(loop.ifs) else []


def _opened(project: _project.Project, name: str, inside: Set[int]) -> bool:
  """Whether a string `name` in the project, out of the filter, may open
  a scope in code that runs."""
  for module in project.modules:
    if name not in module.source.text or project.parsed(module) is None:
      continue
    tree = module.tree
    if tree is None:
      return True
    parents: Dict[int, ast.AST] = {id(c): p for p in ast.walk(tree)
                                   for c in ast.iter_child_nodes(p)}
    for each in ast.walk(tree):
      if isinstance(each, ast.Constant) and isinstance(
          each.value, str) and each.value.strip("/") == name and id(
              each) not in inside and _may_open(project, each, parents):
        return True
  return False


def _may_open(project: _project.Project, string: ast.Constant,
              parents: Dict[int, ast.AST]) -> bool:
  """Whether `string` may be a scope's name where code opens it; a
  name under it (`'m/scope/x:0'`, read by name) or an item of a list of
  values (`[..., 'scope', str(flags.scope)]`, a folder's name) is not."""
  parent = parents.get(id(string))
  if isinstance(parent, (ast.List, ast.Tuple)) and not all(
      isinstance(e, ast.Constant) for e in parent.elts):
    return False
  if isinstance(parent, ast.arguments):  # A parameter's default.
    function = parents.get(id(parent))
    param = _param_of(parent, string)
    return not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)
                          ) or param is None or _reads(function, param)
  if isinstance(parent, ast.keyword) and parent.arg is not None:
    call = parents.get(id(parent))
    callee = _names.call_name(call) if isinstance(call, ast.Call) else ""
    defs = [s.node for s in project.functions_named((callee,))] if (
        callee) else []
    return not defs or any(_reads(d, parent.arg) for d in defs)
  if isinstance(parent, ast.BoolOp):
    parent = parents.get(id(parent))
  if isinstance(parent, ast.Call) and _names.call_name(parent) in _OPENERS:
    function = _enclosing(parents, parent)
    return function is None or bool(project.callers(function.name)) or (
        len(project.modules_with((function.name,))) > 1)
  return True


def _param_of(arguments: ast.arguments, default: ast.AST) -> Optional[str]:
  every = [*arguments.posonlyargs, *arguments.args]
  pairs = list(zip(every[len(every) - len(arguments.defaults):],
                   arguments.defaults)) + list(zip(arguments.kwonlyargs,
                                                   arguments.kw_defaults))
  return next((a.arg for a, d in pairs if d is default), None)


def _reads(function: ast.AST, param: str) -> bool:
  """Whether `function` reads its parameter `param` (or may forward it
  in its `**kwargs`)."""
  if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
      function.args.kwarg is not None):
    return True
  return any(isinstance(n, ast.Name) and n.id == param and isinstance(
      n.ctx, ast.Load) for n in ast.walk(function))


def _enclosing(parents: Dict[int, ast.AST], node: ast.AST
               ) -> Optional[ast.FunctionDef]:
  here: Optional[ast.AST] = node
  while here is not None and not isinstance(here, ast.FunctionDef):
    here = parents.get(id(here))
  return here if isinstance(here, ast.FunctionDef) else None
