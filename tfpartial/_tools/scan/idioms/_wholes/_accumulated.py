"""Whether a gradient is only accumulated into other variables: `sal_b
= [s for s in tf.gradients(loss, masks)]` read only by
`[acc.assign_add(g) for acc, g in zip(saliency, sal_b)]`, accumulators
that no step applies (a pruning saliency, SNIP's connection
sensitivity, a Fisher estimate). The gradient measures; it trains
nothing, so its list freezes nothing.
"""

from __future__ import annotations

import ast
from typing import Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_ADDS = {"assign_add", "assign", "assign_sub"}
_APPLIES = {"apply_gradients", "apply", "minimize"}


def only_accumulated(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether the gradients `call` computes are read only as the values
  added to accumulators (the other half of a `zip`) that no apply
  reads."""
  if _names.call_name(call) not in {"gradients", "gradient"}:
    return False
  held = {name for name, defs in scope.defs.items() if len(defs) == 1 and (
      defs[0].value is call or isinstance(defs[0].value, (
          ast.ListComp, ast.GeneratorExp)) and defs[0].value.generators[
              0].iter is call)}
  # The comprehension's own element (`s` of `[s for s in grads]`) aside.
  held -= {n.id for defs in scope.defs.values() for d in defs if isinstance(
      d.value, (ast.ListComp, ast.GeneratorExp))
           for g in d.value.generators for n in ast.walk(g.target)
           if isinstance(n, ast.Name)}
  if not held:
    return False
  added: Set[int] = set()
  accumulators: Set[str] = set()
  for node in scope.nodes:
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(
        node.generators) == 1 and _adds_pairs(node, held):
      source = node.generators[0].iter
      assert isinstance(source, ast.Call)
      added.update(id(a) for a in source.args)
      accumulators.update(a.id for a in source.args if isinstance(
          a, ast.Name) and a.id not in held)
  reads = [n for n in scope.nodes if isinstance(n, ast.Name) and (
      n.id in held) and isinstance(n.ctx, ast.Load)]
  return bool(reads) and all(id(n) in added for n in reads) and not any(
      isinstance(n, ast.Call) and _names.call_name(n) in _APPLIES and any(
          isinstance(m, ast.Name) and m.id in accumulators | held
          for m in ast.walk(n)) for n in scope.nodes)


def _adds_pairs(node: ast.ListComp | ast.GeneratorExp, held: Set[str]
                ) -> bool:
  """`[acc.assign_add(g) for acc, g in zip(accs, grads)]`, `grads` held."""
  generator = node.generators[0]
  source, target = generator.iter, generator.target
  if not (isinstance(source, ast.Call) and _names.call_name(source) == "zip"
          and isinstance(target, ast.Tuple) and len(target.elts) == len(
              source.args) == 2):
    return False
  names = [t.id if isinstance(t, ast.Name) else "" for t in target.elts]
  given = [a.id if isinstance(a, ast.Name) else "" for a in source.args]
  if not any(g in held for g in given):
    return False
  gradient = names[given.index(next(g for g in given if g in held))]
  element = node.elt
  return isinstance(element, ast.Call) and _names.call_name(
      element) in _ADDS and isinstance(element.func, ast.Attribute) and (
          isinstance(element.func.value, ast.Name)) and (
              element.func.value.id in names) and (
                  element.func.value.id != gradient) and any(
                      isinstance(a, ast.Name) and a.id == gradient
                      for a in element.args)
