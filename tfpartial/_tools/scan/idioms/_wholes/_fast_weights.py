"""Whether a gradient is a meta-learning inner update: `grads =
tf.gradients(inner_loss, params)` read only to make fast weights (`[v -
lr * g for v, g in zip(params, grads)]`) that the model is run on again,
never applied to a variable or assigned to one. Its list is the
parameters the outer step adapts (MAML), not a freeze: the outer step
trains the variables through the fast weights. An inner list chosen by
literal names (`get_trainable_variables(['conditional_decoder'])`, ANIL's
head) adapts a part only: that choice is left to the other gates.
"""

from __future__ import annotations

import ast
from typing import Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Calls that write variables, or hand gradients to what does.
_WRITES = {"apply_gradients", "apply", "minimize", "assign", "assign_sub",
           "assign_add", "scatter_sub", "scatter_update", "scatter_add"}


def inner_update(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether the gradients `call` computes are only taken from the
  parameters they differentiate (`v - lr * g`) and never written."""
  if _names.call_name(call) not in {"gradients", "gradient"}:
    return False
  held = _held(call, scope)
  if not held:
    return False
  for node in scope.nodes:
    if isinstance(node, ast.Call) and _names.call_name(node) in _WRITES and (
        any(isinstance(n, ast.Name) and n.id in held for arg in [
            *node.args, *(k.value for k in node.keywords)]
            for n in _scopes.made_from(arg, scope))):
      return False
  return any(_steps_down(node, held) for node in scope.nodes)


def named_part(var_list: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether the list `var_list` is made from a variable list narrowed
  by literal names (`get_trainable_variables(['decoder'])`,
  `tf.trainable_variables('head')`, `[v for v in tvars if 'head' in
  v.name]`): an inner loop over those names adapts a part."""
  for node in _scopes.made_from(var_list, scope):
    if isinstance(node, ast.Call) and _names.literal_names(
        _names.scope_argument(node)):
      return True
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and any(
        _name_test(test) for g in node.generators for test in g.ifs):
      return True
  return False


def beside_other_networks(var_list: ast.AST, scope: _scopes.Scope
                          ) -> bool:
  """Whether the function of an inner update over literal names runs, on
  `self`, a network one of those names names (`self.conditional_decoder(
  x, z)` for `['conditional_decoder']`) and another the names leave out
  (`self.sample_encoder(...)`, `self.aggregator(...)`), each an attribute
  the class binds to a network, not a method of its own: the inner loop
  adapts one network of several; over the only network it runs
  (`self.mlp` for `['mlp']`) it adapts the whole model."""
  kept = {str(c.value) for node in _scopes.made_from(var_list, scope)
          if isinstance(node, ast.Call)
          for c in ast.walk(_names.scope_argument(node) or ast.Tuple(elts=[]))
          if isinstance(c, ast.Constant) and isinstance(c.value, str)}
  networks = _networks(scope)
  run = {node.func.attr for node in _scopes.walk(scope.node)
         if isinstance(node, ast.Call) and isinstance(
             node.func, ast.Attribute) and _names.dotted(
                 node.func.value) == "self" and node.func.attr in networks}
  return bool(kept & run) and any(
      "loss" not in name for name in run - kept)


def _networks(scope: _scopes.Scope) -> Set[str]:
  """The attributes the class of `scope` binds to a network (`self.x =
  x`, a parameter, or `self.x = Dense(...)`, a call), none of its own
  methods (`self._summarize(...)` runs no other network)."""
  cls = _scopes.enclosing_class(scope)
  if cls is None:
    return set()
  return {target.attr for node in ast.walk(cls.node)
          if isinstance(node, ast.Assign) and isinstance(
              node.value, (ast.Name, ast.Call))
          for target in node.targets
          if isinstance(target, ast.Attribute) and _names.dotted(
              target.value) == "self"} - set(cls.methods) - {
                  each.name for each in cls.node.body
                  if isinstance(each, ast.FunctionDef)}


def _name_test(test: ast.expr) -> bool:
  """`'head' in v.name`, `v.name.startswith('head')`."""
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.In):
    return isinstance(test.left, ast.Constant) and isinstance(
        test.left.value, str) and isinstance(
            test.comparators[0], ast.Attribute) and (
                test.comparators[0].attr == "name")
  return isinstance(test, ast.Call) and isinstance(
      test.func, ast.Attribute) and test.func.attr == "startswith" and (
          isinstance(test.func.value, ast.Attribute)) and (
              test.func.value.attr == "name") and _names.literal_names(
                  test.args[0] if test.args else None)


def _held(call: ast.Call, scope: _scopes.Scope) -> Set[str]:
  """The names the gradients are bound to (`grads`, and `grads` again
  when it is rebound from itself: `grads = [tf.stop_gradient(g) for g in
  grads]`)."""
  held = {name for name, defs in scope.defs.items()
          if any(d.value is call for d in defs)}
  return held if all(all(
      d.value is call or any(isinstance(n, ast.Name) and n.id in held
                             for n in ast.walk(d.value))
      for d in scope.defs[name]) for name in held) else set()


def _steps_down(node: ast.AST, held: Set[str]) -> bool:
  """Whether `node` is a comprehension over `zip(params, grads)` making
  `v - lr * g` (or `v + ...`) of each pair."""
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(
      node.generators) != 1:
    return False
  generator = node.generators[0]
  source = generator.iter
  if not (isinstance(source, ast.Call) and _names.call_name(source) == "zip"
          and any(isinstance(a, ast.Name) and a.id in held
                  for a in source.args)) or not isinstance(
                      generator.target, ast.Tuple):
    return False
  pair = {n.id for n in generator.target.elts if isinstance(n, ast.Name)}
  element = node.elt
  return isinstance(element, ast.BinOp) and isinstance(
      element.op, (ast.Sub, ast.Add)) and isinstance(
          element.left, ast.Name) and element.left.id in pair and any(
              isinstance(n, ast.Name) and n.id in pair and n.id != (
                  element.left.id) for n in ast.walk(element.right))
