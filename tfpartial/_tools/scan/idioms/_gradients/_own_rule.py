"""Whether the variables a test zeroes the gradients of are updated by a
rule of their own: the same test picks their gradients out of the same
list (`pert_grad = [g for g, v in grads if 'perturbation' in v.name]`)
and an `assign` writes a value made from them (`tf.assign(model.pert,
model.pert + eps * tf.sign(pert_grad[0]))`), while the step gets zeros
for them (`(tf.zeros_like(v), v) if 'perturbation' in v.name else (g,
v)`). Free adversarial training's input perturbation ascends its own
gradient; nothing is frozen. A saved copy written back, gradients only
summarised, or another test's gradients written, are no such rule. Part
of `grads-mask`."""

from __future__ import annotations

import ast
from typing import List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_WRITES = {"assign", "assign_add", "assign_sub"}
_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp)


def updated_by_own_rule(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node`, a `zeros if test else g` over a list of pairs,
  zeroes variables whose gradients the same test picks from that list
  into a value an `assign` of `scope` writes."""
  if not isinstance(node, ast.IfExp):
    return False
  walked = list({id(n): n for s in scope.nodes for n in ast.walk(s)
                 }.values())
  home = [c for c in walked if isinstance(c, _COMPREHENSIONS) and any(
      n is node for n in ast.walk(c.elt))]
  if len(home) != 1 or len(home[0].generators) != 1:
    return False
  source = ast.dump(home[0].generators[0].iter)
  test = ast.dump(node.test)
  picked = [c for c in walked if isinstance(c, _COMPREHENSIONS) and (
      c is not home[0]) and len(c.generators) == 1 and ast.dump(
          c.generators[0].iter) == source and any(
              ast.dump(i) == test for i in c.generators[0].ifs) and (
                  _gradient_of_pair(c))]
  names = {t.id for s in walked if isinstance(s, ast.Assign) and any(
      s.value is c for c in picked) for t in s.targets
           if isinstance(t, ast.Name)}
  if not names:
    return False
  reading = _reading(walked, names)
  return any(isinstance(c, ast.Call) and _names.call_name(c) in _WRITES
             and _reads(c.args[1:] if _assigned(c) else c.args, reading)
             for c in walked)


def _gradient_of_pair(comprehension: ast.AST) -> bool:
  """`[g for g, v in grads ...]`: each pair's gradient, not its variable."""
  target = getattr(comprehension, "generators")[0].target
  element = getattr(comprehension, "elt", None)
  return isinstance(target, ast.Tuple) and len(target.elts) == 2 and (
      isinstance(element, ast.Name)) and isinstance(
          target.elts[0], ast.Name) and element.id == target.elts[0].id


def _assigned(call: ast.Call) -> bool:
  """`tf.assign(ref, value)` (the value second), not `ref.assign(value)`."""
  return isinstance(call.func, ast.Attribute) and _names.root(
      call.func) in {"tf", "tf1", "v1", "compat", "tensorflow"} or (
          isinstance(call.func, ast.Name))


def _reading(walked: List[ast.AST], names: Set[str]) -> Set[str]:
  """`names` and the local names assigned from them (three deep)."""
  found = set(names)
  for _ in range(3):
    found |= {t.id for s in walked if isinstance(s, ast.Assign) and _reads(
        [s.value], found) for t in s.targets if isinstance(t, ast.Name)}
  return found


def _reads(values: List[ast.expr], names: Set[str]) -> bool:
  return any(isinstance(n, ast.Name) and n.id in names
             for v in values for n in ast.walk(v))
