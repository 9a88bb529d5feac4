"""A variable dropped from a list by its name and trained beside it, taken
back from the same list by position: `var1 = [v for v in
tf.trainable_variables() if v.name != 'feature_bias:0']` and `var2 =
[tf.trainable_variables()[1]]`, the gradients of `var1 + var2` applied by
two optimizers (a wide part at its own rate). The name test drops one
variable; the list beside it takes one of the same collection, so the
two hold as many variables as the collection does: the one dropped, or
a variable trained twice. Part of `var-list-filter`: the filter's rest
is trained beside it, not left fixed."""

from __future__ import annotations

import ast
from typing import Iterable, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# How many names or attributes a list is followed through.
_DEPTH = 4


def taken_back(node: ast.AST, scope: _scopes.Scope,
               lists: Iterable[Optional[ast.AST]]) -> bool:
  """Whether the filter `node` drops one variable of a collection by its
  name and one of `lists` (the lists the steps of `scope` train, sums
  read part by part) takes one variable of that collection by position,
  or `node` takes one and a list drops one.

  >>> module = _scopes.collect(ast.parse(
  ...     "def f(loss):\\n"
  ...     "  a = [v for v in tf.trainable_variables() if v.name != 'b:0']\\n"
  ...     "  b = [tf.trainable_variables()[1]]\\n"
  ...     "  return tf.gradients(loss, a + b)\\n"))
  >>> home = module.children[0]
  >>> a = home.defs['a'][0].value
  >>> listed = ast.parse("a + b", mode="eval").body
  >>> taken_back(a, home, [listed])
  True
  >>> taken_back(a, home, [ast.parse("a", mode="eval").body])
  False
  """
  value = _value(node, scope)
  dropped, picked = _drops_one(value), _picks_one(value)
  if dropped is None and picked is None:
    return False
  for each in _candidates(lists, scope):
    if dropped is not None and _picks_one(each) == dropped or (
        picked is not None and _drops_one(each) == picked):
      return True
  return False


def _candidates(lists: Iterable[Optional[ast.AST]], scope: _scopes.Scope
                ) -> List[ast.AST]:
  """The lists as made, and the parts of each sum (`a + b`)."""
  found: List[ast.AST] = []
  for each in lists:
    if each is None:
      continue
    value = _value(each, scope)
    found.append(value)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
      found += [_value(value.left, scope), _value(value.right, scope)]
  return found


def _value(node: ast.AST, scope: _scopes.Scope) -> ast.AST:
  """What a local name or an attribute of `self` bound once in the
  function holds (followed a few times), else `node`."""
  for _ in range(_DEPTH):
    if isinstance(node, ast.Name):
      defs = scope.defs.get(node.id, [])
      made = defs[0].value if len(defs) == 1 else None
    elif isinstance(node, ast.Attribute):
      made = _assigned_once(_names.dotted(node), scope)
    else:
      made = None
    if not isinstance(made, ast.expr):
      return node
    node = made
  return node


def _assigned_once(name: Optional[str], scope: _scopes.Scope
                   ) -> Optional[ast.expr]:
  """The value of the one assignment to `self.x` in the function."""
  if name is None or not name.startswith("self."):
    return None
  values = [each.value for each in ast.walk(scope.node)
            if isinstance(each, ast.Assign) and len(each.targets) == 1
            and _names.dotted(each.targets[0]) == name]
  return values[0] if len(values) == 1 else None


def _drops_one(node: ast.AST) -> Optional[str]:
  """The collection (as text) a comprehension walks, keeping every item
  whose name differs from one literal (`v.name != 'x:0'`), else None."""
  if not isinstance(node, ast.ListComp) or len(node.generators) != 1:
    return None
  generator = node.generators[0]
  if not isinstance(generator.target, ast.Name) or len(generator.ifs) != 1:
    return None
  test = generator.ifs[0]
  if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not (
      isinstance(test.ops[0], ast.NotEq)):
    return None
  sides = [test.left, test.comparators[0]]
  named = any(isinstance(s, ast.Attribute) and s.attr == "name" and (
      isinstance(s.value, ast.Name)) and s.value.id == generator.target.id
              for s in sides)
  literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str)
                for s in sides)
  if not (named and literal) or not isinstance(node.elt, ast.Name) or (
      node.elt.id != generator.target.id):
    return None
  return ast.unparse(generator.iter)


def _picks_one(node: ast.AST) -> Optional[str]:
  """The collection (as text) a one-item list takes its item from by a
  literal position (`[tf.trainable_variables()[1]]`), else None."""
  if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) != 1:
    return None
  item = node.elts[0]
  if isinstance(item, ast.Subscript) and isinstance(
      item.slice, ast.Constant) and isinstance(item.slice.value, int):
    return ast.unparse(item.value)
  return None
