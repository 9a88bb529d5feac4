"""Whether a filter is a network's registry of its layers' variables:
the method a class calls to record each layer it builds (`def
_add_to_layers(self, name, op): self._layers[name] = op; scope =
'/'.join(op.name.split('/')[:-1]); variables = tf.get_collection(key,
scope=scope); self._variables_list.update(variables)`, called for every
layer of a stereo network) collects the variables under the scope of the
tensor it is handed, each time into one member, which the class only
returns (`get_trainable_variables()`: the member, kept by `trainable`).
The scope is the layer's own, read from its output's name, not one a
filter chooses; gathered over every layer the class records (no layer
made outside that method's calls), it is the network's variables,
whole, like `model.trainable_variables`. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow

# What adds variables to a member (`self.all.update(vs)`, `.extend`).
_ADDS = {"update", "extend", "append", "add"}
# How a tensor's name is read and cut into its scope.
_NAME_PARTS = {"name", "split", "join", "rsplit", "rpartition",
               "partition", "strip", "rstrip"}


def whole_registry(flow: Flow, node: ast.AST, home: _scopes.Scope,
                   listed: Optional[ast.AST], scope: _scopes.Scope) -> bool:
  """Whether `node` (a variable-list call) collects, in a method of a
  class, the variables under the scope of a tensor the method is given,
  into a member the class only returns whole, the method called for
  two layers at least; and the step's list `listed` (read in `scope`)
  is a method returning that member."""
  info = home.cls
  project = flow.project
  if info is None or not isinstance(node, ast.Call) or not isinstance(
      listed, ast.Call):
    return False
  chosen = _names.scope_argument(node)
  if chosen is None or not _from_a_tensor_name(chosen, home):
    return False
  members = _members_added(home)
  accessor = flow.callee(listed, flow.origin.get(id(listed), scope))
  if accessor is None and isinstance(listed.func, ast.Attribute):
    # An object a factory made: the registry's class's method of the name.
    method = project.method(info, listed.func.attr)
    accessor = method.node if method is not None else None
  returns = [n.value for n in ast.walk(accessor) if isinstance(
      n, ast.Return)] if accessor is not None else []
  return bool(members and returns) and all(
      value is not None and _whole(value) and any(
          _names.dotted(n) in members for n in ast.walk(value))
      for value in returns) and all(
          _only_returned(project, info, member) for member in members) and (
              _every_layer_recorded(project, info, home.name))


def _from_a_tensor_name(chosen: ast.AST, home: _scopes.Scope,
                        depth: int = 0) -> bool:
  """Whether a scope is cut from the name of a parameter of `home`
  (`op.name.split('/')`), through local names, and nothing else."""
  if depth > 3:
    return False
  names = [n for n in ast.walk(chosen) if isinstance(n, ast.Name)]
  attributes = {n.attr for n in ast.walk(chosen)
                if isinstance(n, ast.Attribute)}
  if "name" not in attributes and not names or not attributes <= (
      _NAME_PARTS):
    return False
  read_name = "name" in attributes
  for name in names:
    if name.id in home.params:
      continue
    defs = home.defs.get(name.id, [])
    if len(defs) != 1 or not _from_a_tensor_name(defs[0].value, home,
                                                 depth + 1):
      return False
    read_name = True
  return read_name and not any(
      isinstance(n, ast.Constant) and isinstance(n.value, str) and (
          n.value not in {"/", ""}) for n in ast.walk(chosen))


def _members_added(home: _scopes.Scope) -> List[str]:
  """The `self.` members a method adds its collected list to under no
  test (`self._variables_list.update(variables)`)."""
  found: List[str] = []
  for node in home.nodes:
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr in _ADDS:
      member = _names.dotted(node.func.value) or ""
      if member.startswith("self.") and member.count(".") == 1 and (
          id(node) not in home.guards):
        found.append(member)
  return found


def _only_returned(project: _project.Project, info: _scopes.ClassInfo,
                   member: str) -> bool:
  """Whether every method of the class family reads `member` only to
  add to it or to return it (whole, or kept by `trainable`)."""
  classes = [info, *project.base_classes(info), *project.subclasses(info)]
  for each in classes:
    for method in each.methods.values():
      for statement in ast.walk(method.node):
        if not _reads(statement, member):
          continue
        if isinstance(statement, ast.Return) and _whole(statement.value):
          continue
        if isinstance(statement, ast.Expr) and _adds_to(statement.value,
                                                        member):
          continue
        if isinstance(statement, ast.Assign) and not any(
            _names.dotted(n) == member for n in ast.walk(statement.value)):
          continue  # Made empty (`self.all = set()`), not read.
        if isinstance(statement, (ast.Return, ast.Expr, ast.Assign,
                                  ast.AugAssign, ast.If, ast.For)):
          return False
  return True


def _reads(statement: ast.AST, member: str) -> bool:
  return isinstance(statement, ast.stmt) and not isinstance(
      statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
          any(_names.dotted(n) == member for n in _own_nodes(statement)))


def _own_nodes(statement: ast.stmt) -> List[ast.AST]:
  """The nodes of a statement, not those of the statements inside it."""
  found: List[ast.AST] = []
  stack: List[ast.AST] = [statement]
  while stack:
    node = stack.pop()
    found.append(node)
    stack.extend(child for child in ast.iter_child_nodes(node)
                 if not isinstance(child, ast.stmt))
  return found


def _whole(value: Optional[ast.AST]) -> bool:
  """`list(self.all)`, `self.all`, `[x for x in self.all if
  x.trainable]`: every member, or those kept by their `trainable` flag."""
  while isinstance(value, ast.Call) and _names.call_name(value) in {
      "list", "set", "tuple", "sorted"} and len(value.args) == 1:
    value = value.args[0]
  if isinstance(value, ast.Attribute):
    return True
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and len(
      value.generators) == 1:
    tests = value.generators[0].ifs
    return _whole(value.generators[0].iter) and all(
        {n.attr for n in ast.walk(t) if isinstance(n, ast.Attribute)}
        <= {"trainable"} and not any(isinstance(n, ast.Call)
                                     for n in ast.walk(t)) for t in tests)
  return False


def _adds_to(value: ast.AST, member: str) -> bool:
  return isinstance(value, ast.Call) and isinstance(
      value.func, ast.Attribute) and value.func.attr in _ADDS and (
          _names.dotted(value.func.value) == member)


# Calls that make a layer's variables, by name.
_LAYERS = {"conv1d", "conv2d", "conv3d", "conv2d_transpose", "dense",
           "fully_connected", "separable_conv2d", "depthwise_conv2d",
           "batch_normalization", "batch_norm", "get_variable",
           "embedding", "deconv2d", "conv", "deconv", "linear"}


def _every_layer_recorded(project: _project.Project,
                          info: _scopes.ClassInfo, name: str) -> bool:
  """Whether the class family records two layers at least through
  `self.name(...)`, and makes no layer outside such a call (a head
  recorded apart from a backbone made plainly is a part)."""
  seen: Set[int] = set()
  recorded: Set[int] = set()
  made: List[int] = []
  count = 0
  for each in [info, *project.base_classes(info), *project.subclasses(info)]:
    if id(each.node) in seen:
      continue
    seen.add(id(each.node))
    for node in ast.walk(each.node):
      if isinstance(node, ast.Call) and isinstance(
          node.func, ast.Attribute) and node.func.attr == name and (
              _names.dotted(node.func.value) == "self"):
        count += 1
        recorded.update(id(n) for a in node.args for n in ast.walk(a))
      elif isinstance(node, ast.Call) and _names.call_name(node) in _LAYERS:
        made.append(id(node))
  return count >= 2 and all(n in recorded for n in made)
