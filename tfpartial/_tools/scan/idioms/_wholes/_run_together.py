"""Whether a filtered list's complement is trained by another step of the
same loss whose op every run of the filtered one runs too (`rest = [v for
v in tvars if v not in grid]` or `list(set(every) - set(grid))` minimised
beside `grid`, the two ops run in one `sess.run([op_rest, op_grid])`, one
after the other, or grouped into one op by `tf.group` that is what runs
or what a step builder returns, and the only reader of the two): between
them the two steps train every variable at every step. `tvars` and
`every` must not be provably one part (a scoped collection, or a filtered
list), and a rest step at a learning rate of 0 trains nothing."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step


def trained_together(step: Step, steps: List[Step]) -> bool:
  """Whether another step of the function minimises the same loss over
  the complement of the step's list (or the step over the complement of
  the other's), and every block of statements that
  runs either step's op runs both."""
  if not isinstance(step.var_list, ast.Name) or step.loss is None:
    return False
  mine = _op_of(step)
  rest = _rest_of(step.var_list, step.scope)
  for other in steps:
    if other is step or other.scope is not step.scope or (
        other.loss != step.loss) or not (_rest_of(
            other.var_list, step.scope) == step.var_list.id or isinstance(
                other.var_list, ast.Name) and rest == other.var_list.id):
      continue
    rest_step = step if rest is not None and isinstance(
        other.var_list, ast.Name) and rest == other.var_list.id else other
    theirs = _op_of(other)
    if mine and theirs and mine != theirs and not _rate_zero(
        rest_step) and _run_together(step.scope, {mine, theirs}):
      return True
  return False


def _rate_zero(step: Step) -> bool:
  """Whether the step's optimizer is made with a learning rate of 0
  (`GradientDescentOptimizer(0.0).minimize(loss, var_list=rest)`): it
  trains nothing."""
  made = step.call.func.value if isinstance(
      step.call.func, ast.Attribute) else None
  if isinstance(made, ast.Name):
    defs = step.scope.defs.get(made.id, [])
    made = defs[0].value if len(defs) == 1 else None
  if not isinstance(made, ast.Call):
    return False
  rate = made.args[:1] + [k.value for k in made.keywords
                          if k.arg in {"learning_rate", "lr"}]
  return bool(rate) and _calls.zero(rate[0], step.scope)


def _rest_of(var_list: Optional[ast.AST], scope: _scopes.Scope
             ) -> Optional[str]:
  """`name` when `var_list` is (or names) `[v for v in every if v not in
  name]` or `list(set(every) - set(name))`: everything but the members
  of `name`; read once per list."""
  if var_list is None:
    return None
  return scope.once((_rest_of, var_list, 0),
                    lambda: _read_rest(var_list, scope))


def _read_rest(var_list: ast.AST, scope: _scopes.Scope) -> Optional[str]:
  """`_rest_of`, read; the list taken from is not provably one part
(`_one_part`): `[v for v in enc_vars if v not in last]` with `enc_vars`
a scoped collection leaves out the variables of neither."""
  values = [var_list] if isinstance(var_list, ast.ListComp) else (
      _assigned(scope).get(var_list.id, []) if isinstance(
          var_list, ast.Name) else [])
  if len(values) != 1:
    return None
  taken = _taken_from(values[0], scope)
  if taken is not None:
    return taken
  if isinstance(values[0], ast.ListComp) and len(
      values[0].generators) == 1 and not _one_part(
          values[0].generators[0].iter, scope):
    tests = [_excluded(test) for test in values[0].generators[0].ifs]
    return tests[0] if len(tests) == 1 else None
  return None


def _taken_from(value: ast.expr, scope: _scopes.Scope) -> Optional[str]:
  """`name` of `list(set(every) - set(name))` (or without `list`), where
  `every` is not provably one part (`_one_part`): `set(enc_vars) -
  set(last)` with `enc_vars` a scoped collection leaves out the variables
  of neither."""
  while isinstance(value, ast.Call) and _names.call_name(value) in {
      "list", "set"} and len(value.args) == 1 and not isinstance(
          value.args[0], ast.Name):
    value = value.args[0]
  if not isinstance(value, ast.BinOp) or not isinstance(
      value.op, ast.Sub) or _one_part(value.left, scope):
    return None
  right = value.right
  if isinstance(right, ast.Call) and _names.call_name(right) == "set" and (
      len(right.args) == 1):
    right = right.args[0]
  return right.id if isinstance(right, ast.Name) else None


# The calls that list variables, one scope's when given one.
_LISTING = {"global_variables", "trainable_variables", "all_variables",
            "get_collection", "get_trainable_variables"}


def _one_part(value: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `value` (`set(...)` or `list(...)` of it, or a name every
  plain assignment of which is such) is provably one part of the
  variables: a listing call given a scope
  (`tf.get_collection(key, scope='enc')`, `trainable_variables('enc')`)
  or a filtered comprehension (`[v for v in tvars if 'enc' in v.name]`).
  Anything else (`tf.trainable_variables()`, `self.tvars`,
  `model.trainable_variables`) may be every variable, as before."""
  while isinstance(value, ast.Call) and _names.call_name(value) in {
      "list", "set"} and len(value.args) == 1:
    value = value.args[0]
  if isinstance(value, ast.Name):
    values = _assigned(scope).get(value.id, [])
    return bool(values) and all(
        not isinstance(v, ast.Name) and _one_part(v, scope) for v in values)
  if isinstance(value, ast.ListComp):
    return any(generator.ifs for generator in value.generators)
  if not isinstance(value, ast.Call) or _names.call_name(
      value) not in _LISTING:
    return False
  given = len(value.args) > (1 if _names.call_name(
      value) == "get_collection" else 0)
  return given or any(k.arg == "scope" for k in value.keywords)


def _assigned(scope: _scopes.Scope) -> Dict[str, List[ast.expr]]:
  """Each name of `scope` -> the values of its plain assignments
  (`name = value`), in order; read once per scope."""
  return scope.once((_assigned, None, 0), lambda: _read_assigned(scope))


def _read_assigned(scope: _scopes.Scope) -> Dict[str, List[ast.expr]]:
  found: Dict[str, List[ast.expr]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)):
      found.setdefault(node.targets[0].id, []).append(node.value)
  return found


def _excluded(test: ast.expr) -> Optional[str]:
  """`name` of a test `v not in name`."""
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.NotIn) and isinstance(test.comparators[0], ast.Name):
    return test.comparators[0].id
  return None


def _op_of(step: Step) -> Optional[str]:
  """The one name the step's op is assigned to (`train_op = ...`)."""
  names = _ops(step.scope).get(id(step.call), [])
  return names[0] if len(names) == 1 else None


def _ops(scope: _scopes.Scope) -> Dict[int, List[str]]:
  """The id of each value of `scope`'s plain assignments -> the names
  it is assigned to; read once per scope."""
  return scope.once((_ops, None, 0), lambda: _read_ops(scope))


def _read_ops(scope: _scopes.Scope) -> Dict[int, List[str]]:
  found: Dict[int, List[str]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)):
      found.setdefault(id(node.value), []).append(node.targets[0].id)
  return found


def _run_together(scope: _scopes.Scope, ops: Set[str]) -> bool:
  """Whether some block runs the ops, and each block that runs one of
  them (in its own simple statements) runs all of them."""
  found = False
  for names in _run_names(scope):
    run = names & ops
    if run and run != ops:
      return False
    found = found or bool(run)
  if found:
    return True
  # `train_op = tf.group(op_rest, op_head)`, then `sess.run(train_op)`
  # (or `return train_op`, or `return tf.group(op_rest, op_head)`, for
  # the caller to run): one op runs both, when neither is read but by the
  # group.
  loads = _loads(scope)
  return all(loads.get(op, 0) == 1 for op in ops) and any(
      ops <= joined and (name is None or name in _returned(scope) or any(
          name in names for names in _run_names(scope)))
      for joined, name in _groups(scope))


def _returned(scope: _scopes.Scope) -> FrozenSet[str]:
  """The names `scope`'s `return` statements hand back; read once per
  scope."""
  return scope.once((_returned, None, 0), lambda: frozenset(
      n.id for node in scope.nodes if isinstance(node, ast.Return)
      and node.value is not None for n in ast.walk(node.value)
      if isinstance(n, ast.Name)))


def _groups(scope: _scopes.Scope
            ) -> List[Tuple[FrozenSet[str], Optional[str]]]:
  """The names each `group(...)` call of `scope` joins, with the one
  name it is assigned to, or None for a group `return`ed as it is built
  (`return tf.group(op_a, op_b)`); read once per scope."""
  def read() -> List[Tuple[FrozenSet[str], Optional[str]]]:
    ops = _ops(scope)
    returned = {id(node.value) for node in scope.nodes
                if isinstance(node, ast.Return) and node.value is not None}
    return [(frozenset(a.id for a in node.args if isinstance(a, ast.Name)),
             None if id(node) in returned else ops[id(node)][0])
            for node in scope.nodes if isinstance(node, ast.Call)
            and _names.call_name(node) == "group" and (
                len(ops.get(id(node), [])) == 1 or id(node) in returned)]
  return scope.once((_groups, None, 0), read)


def _loads(scope: _scopes.Scope) -> Dict[str, int]:
  """Each name of `scope` -> how many times it is read; read once per
  scope."""
  def count() -> Dict[str, int]:
    found: Dict[str, int] = {}
    for node in scope.nodes:
      if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        found[node.id] = found.get(node.id, 0) + 1
    return found
  return scope.once((_loads, None, 0), count)


def _run_names(scope: _scopes.Scope) -> List[FrozenSet[str]]:
  """For each block of `scope`'s function, in order, the names its own
  simple statements hand to `run` calls; read once per scope."""
  return scope.once((_run_names, None, 0), lambda: [
      frozenset(n.id for statement in block
                if not any(_scopes.blocks(statement))
                for call in ast.walk(statement) if isinstance(call, ast.Call)
                and _names.call_name(call) == "run"
                for n in ast.walk(call) if isinstance(n, ast.Name))
      for block in _blocks(scope.node)])


def _blocks(node: ast.AST) -> Iterator[List[ast.stmt]]:
  """Every statement list under `node`, its own body first."""
  body = getattr(node, "body", None)
  if isinstance(body, list):
    yield [s for s in body if isinstance(s, ast.stmt)]
  for statement in ast.walk(node):
    if isinstance(statement, ast.stmt) and statement is not node:
      yield from _scopes.blocks(statement)
