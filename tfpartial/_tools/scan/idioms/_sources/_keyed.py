"""Variables picked from a dict by keys a name test chose: `for key in
keys: if 'latent' not in key: net_keys.append(key) else:
latent_keys.append(key)`, then a step on `[params[key] for key in
latent_keys]`. The keys are the filter (rllab-style policies keep their
variables in `all_params` by name); the other group, trained by no step
of the function, stays fixed (a meta-learner adapting only its latents).

And a dict of some of a model's weights adapted while the rest run as
they are (`merged_subset`): `subset[k] = weights[k]` for chosen keys, the
step's list `list(subset.values())`, and the weights the model runs on
merged back from the two (`for k in weights: if k in subset: fast[k] =
adapted[k] else: fast[k] = weights[k]`), a MAML inner loop over the last
layers only. The merge says what the code does: the entries left out of
the subset are used, unadapted. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _joined_keys

_STEPS = {"gradients", "gradient", "minimize", "compute_gradients"}


def chosen_keys(chosen: ast.AST, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The step's `[d[k] for k in keys]` where its keys are chosen by a
  name test, when the keys the test sends elsewhere reach no step of the
  function; else None. The list is the finding's place: the step shows
  which keys it takes."""
  if not isinstance(chosen, ast.ListComp) or len(chosen.generators) != 1:
    return None
  generator = chosen.generators[0]
  element, target = chosen.elt, generator.target
  if not isinstance(element, ast.Subscript) or not isinstance(
      target, ast.Name) or not isinstance(element.slice, ast.Name) or (
          element.slice.id != target.id) or not isinstance(
              generator.iter, ast.Name):
    return None
  name = _alias(generator.iter.id, scope)
  found = _split(name, scope)
  if found is None:
    return None
  test, others = found
  others |= {other for other in scope.defs if _alias(other, scope) in others}
  if any(_trains(call, others) for call in scope.nodes if isinstance(
      call, ast.Call) and _names.call_name(call) in _STEPS):
    return None
  return chosen if test is not None else None


def _alias(name: str, scope: _scopes.Scope) -> str:
  """The list a name copies (`update_keys = keys`), else the name."""
  defs = scope.defs.get(name, [])
  if len(defs) == 1 and isinstance(defs[0].value, ast.Name):
    return defs[0].value.id
  return name


def _split(name: str, scope: _scopes.Scope
           ) -> Optional[Tuple[ast.expr, Set[str]]]:
  """The name test under which a loop appends keys to `name`, and the
  lists its other arm appends to: `if 'latent' not in key: a.append(key)
  else: name.append(key)`."""
  for node in scope.nodes:
    if not isinstance(node, ast.If) or not _names_a_key(node.test) and (
        not _joined_keys.joined(node.test, _names_a_key)):
      continue
    mine = _appended(node.body)
    theirs = _appended(node.orelse)
    if name in mine and theirs - {name}:
      return node.test, theirs - {name}
    if name in theirs and mine - {name}:
      return node.test, mine - {name}
  return None


def _names_a_key(test: ast.expr) -> bool:
  """A test of a key's text: `'latent' in key`, `'latent' not in key`."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], (ast.In, ast.NotIn))) and isinstance(
          test.left, ast.Constant) and isinstance(test.left.value, str) and (
              isinstance(test.comparators[0], ast.Name))


def _appended(body: List[ast.stmt]) -> Set[str]:
  """The lists a branch appends to."""
  return {_names.dotted(s.value.func.value) or "" for s in body
          if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
          and isinstance(s.value.func, ast.Attribute)
          and s.value.func.attr == "append"}


def _trains(call: ast.Call, lists: Set[str]) -> bool:
  """Whether a step's arguments read one of `lists`."""
  return any(isinstance(n, ast.Name) and n.id in lists
             for arg in [*call.args, *(k.value for k in call.keywords)]
             for n in _scopes.walk(arg))


def merged_subset(chosen: ast.AST, scope: _scopes.Scope
                  ) -> Optional[ast.expr]:
  """Where a step's list, a dict of entries copied from another dict,
  takes its first entry, when the function merges the other dict's
  remaining entries back unchanged beside it; else None.

  >>> text = ("def f(w, lr):\\n"
  ...         "  sub = {}\\n"
  ...         "  for l in range(10, 13):\\n"
  ...         "    sub['w' + str(l)] = w['w' + str(l)]\\n"
  ...         "  grads = tf.gradients(loss, list(sub.values()))\\n"
  ...         "  fast = {}\\n"
  ...         "  for k in w.keys():\\n"
  ...         "    if k in sub:\\n"
  ...         "      fast[k] = sub[k] - lr * grads[0]\\n"
  ...         "    else:\\n"
  ...         "      fast[k] = w[k]\\n")
  >>> tree = ast.parse(text)
  >>> scope = _scopes.collect(tree).scope_of(tree.body[0])
  >>> step = tree.body[0].body[2].value
  >>> merged_subset(step.args[1], scope).lineno
  4
  """
  subset = _dict_read(chosen)
  if subset is None:
    return None
  sources = set()
  first: Optional[ast.expr] = None
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Subscript)) and isinstance(
            node.targets[0].value, ast.Name) and (
                node.targets[0].value.id == subset):
      value = node.value
      if not isinstance(value, ast.Subscript) or not isinstance(
          value.value, ast.Name):
        return None  # An entry made, not taken from a model's dict.
      sources.add(value.value.id)
      first = first or value
  if len(sources) != 1 or first is None:
    return None
  whole = sources.pop()
  return first if _merged_back(scope, subset, whole) else None


def _dict_read(node: ast.AST) -> Optional[str]:
  """`d` of `list(d.values())`, `d.values()`."""
  while isinstance(node, ast.Call) and _names.call_name(node) in {
      "list", "tuple"} and len(node.args) == 1:
    node = node.args[0]
  if isinstance(node, ast.Call) and _names.call_name(node) == "values" and (
      not node.args) and isinstance(node.func, ast.Attribute) and (
          isinstance(node.func.value, ast.Name)):
    return node.func.value.id
  return None


def _merged_back(scope: _scopes.Scope, subset: str, whole: str) -> bool:
  """Whether a loop over `whole`'s keys tests each against `subset` and,
  for the keys outside it, takes `whole`'s own entry."""
  for node in scope.nodes:
    if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
      continue
    source = node.iter
    if isinstance(source, ast.Call) and _names.call_name(source) == "keys":
      source = source.func.value if isinstance(
          source.func, ast.Attribute) else source
    if not isinstance(source, ast.Name) or source.id != whole:
      continue
    key = node.target.id
    for test in ast.walk(node):
      if isinstance(test, ast.If) and _tests_member(test.test, key, subset) \
          and any(_reads_entry(s, whole, key) for s in test.orelse):
        return True
  return False


def _tests_member(test: ast.expr, key: str, subset: str) -> bool:
  """`key in subset`."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], ast.In)) and isinstance(
          test.left, ast.Name) and test.left.id == key and isinstance(
              test.comparators[0], ast.Name) and (
                  test.comparators[0].id == subset)


def _reads_entry(statement: ast.stmt, whole: str, key: str) -> bool:
  """`fast[k] = whole[k]`: the entry, unchanged."""
  return isinstance(statement, ast.Assign) and isinstance(
      statement.value, ast.Subscript) and isinstance(
          statement.value.value, ast.Name) and (
              statement.value.value.id == whole) and isinstance(
                  statement.value.slice, ast.Name) and (
                      statement.value.slice.id == key)
