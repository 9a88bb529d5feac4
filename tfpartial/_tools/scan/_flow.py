"""What an expression is made of: gradients, variables, masks, copies.

`Flow.labels(expr, scope)` answers with a `Labels` dict, kind -> the node
where that kind arose (the masking op for "masked", the mix for "mix"):

- "grad": a gradient; "masked": a gradient through a mask;
- "var": a variable itself (or a list of them); "vararith": arithmetic on
  one; "shadow": a non-trainable variable; "copy:R": a snapshot of the
  variable R (its text); "filtered": variables filtered by name or scope;
- "mask": a 0/1 or boolean mask; "const": literals and NumPy only;
- "sg": `stop_gradient` of a variable; "mix": a stop-gradient mix of one;
  "varmask:R": the variable R times a mask;
- "train": a train step; "write": a write into a variable;
- "param": a parameter of the function, unknown here.

Data is followed through names (and module or enclosing helper functions,
evaluated with their arguments' labels), never through imports.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _calls
from tfpartial._tools.scan._labels import Labels, union

_MAX_DEPTH = 40


class Flow:
  """The labels of expressions in one module, memoised.

  >>> module = _scopes.collect(ast.parse(
  ...     "g = opt.compute_gradients(loss)\\nm = [0., 1.]\\nh = g[0] * m\\n"))
  >>> sorted(Flow().labels(module.defs["h"][0], module))
  ['grad', 'masked', 'timesmask']
  """

  def __init__(self) -> None:
    self._memo: Dict[Tuple[int, int, object], Labels] = {}
    # A helper's parameters while it is evaluated with its arguments.
    self._bound: Dict[int, Dict[str, Labels]] = {}
    self._token: object = None
    self._active: Set[Tuple[int, str]] = set()
    self._partial: Dict[Tuple[int, str], Labels] = {}
    self._helpers: Dict[Tuple[int, FrozenSet[str]], Labels] = {}
    self.depth = 0

  def labels(self, node: Optional[ast.AST], scope: _scopes.Scope,
             env: Optional[Dict[str, Labels]] = None) -> Labels:
    """The labels of `node` in `scope`; `env` binds names first."""
    if node is None or self.depth > _MAX_DEPTH:
      return {}
    key = (id(node), id(scope), self._token)
    if not env and key in self._memo:
      return self._memo[key]
    self.depth += 1
    try:
      result = self._labels(node, scope, env or {})
    finally:
      self.depth -= 1
    if not env:
      self._memo[key] = result
    return result

  def _labels(self, node: ast.AST, scope: _scopes.Scope,
              env: Dict[str, Labels]) -> Labels:
    if isinstance(node, ast.Name):
      return self.name(node.id, node, scope, env)
    if isinstance(node, ast.Attribute):
      return self._attribute(node, scope, env)
    if isinstance(node, ast.Subscript):
      return self.labels(node.value, scope, env)
    if isinstance(node, ast.Constant):
      return {"const": node}
    if isinstance(node, ast.BinOp):
      return _calls.binop(self, node, node.left, node.right, scope, env)
    if isinstance(node, ast.UnaryOp):
      return self.labels(node.operand, scope, env)
    if isinstance(node, ast.Compare):
      return {"mask": node}
    if isinstance(node, ast.Call):
      return _calls.call(self, node, scope, env)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
      found = union(self.labels(e, scope, env) for e in node.elts)
      if _names.literal_mask(node):
        found.update({"mask": node, "const": node})
      elif found and any(isinstance(e, ast.Constant) for e in node.elts) \
          and set(found) == {"const"}:
        found = {"const": node}
      return found
    if isinstance(node, ast.Dict):
      return union(self.labels(v, scope, env) for v in node.values)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
      return self._comprehension(node, node.elt, scope, env)
    if isinstance(node, ast.DictComp):
      return self._comprehension(node, node.value, scope, env)
    if isinstance(node, ast.IfExp):
      return union([self.labels(node.body, scope, env),
                    self.labels(node.orelse, scope, env)])
    if isinstance(node, (ast.Starred, ast.NamedExpr, ast.Await)):
      return self.labels(node.value, scope, env)
    return {}

  def name(self, name: str, node: ast.AST, scope: _scopes.Scope,
           env: Dict[str, Labels]) -> Labels:
    """The labels of a name (or `self.attr`) seen from `scope`."""
    if name in env:
      return env[name]
    found: Labels = {}
    if _names.is_mask_name(name):
      found["mask"] = node
    place: Optional[_scopes.Scope] = scope
    while place is not None:
      values = (place.attributes.get(name) if name.startswith("self.")
                else place.defs.get(name))
      if values is not None or name in place.params:
        found.update(self._values(name, place, values or []))
        bound = self._bound.get(id(place), {})
        if name in bound:
          found.update(bound[name])
        elif name in place.params:
          found.setdefault("param", node)
        if name in place.stored and any(
            isinstance(v, ast.Call) and _names.call_name(v) in {
                "ones", "zeros", "ones_like", "zeros_like"} for v in values
            or []):
          found["mask"] = node
        return found
      place = place.parent
    return found

  def _values(self, name: str, place: _scopes.Scope,
              values: List[ast.expr]) -> Labels:
    key = (id(place), name)
    if key in self._active:  # A name defined from itself: what is known.
      return self._partial.get(key, {})
    self._active.add(key)
    found: Labels = {}
    self._partial[key] = found
    try:
      for value in values:
        for kind, where in self.labels(value, place).items():
          found.setdefault(kind, where)
      return found
    finally:
      self._active.discard(key)
      del self._partial[key]

  def _attribute(self, node: ast.Attribute, scope: _scopes.Scope,
                 env: Dict[str, Labels]) -> Labels:
    name = _names.dotted(node)
    if node.attr in _names.VARIABLE_ATTRIBUTES:
      return {"var": node}
    if name is not None and name.startswith("self."):
      return self.name(name, node, scope, env)
    found = self.labels(node.value, scope, env)
    if node.attr in {"values", "indices", "dense_shape", "T"}:
      return found
    found = {k: v for k, v in found.items()
             if k not in {"var", "shadow", "mask", "const"}}
    if _names.is_mask_name(node.attr):
      found["mask"] = node
    return found

  def _comprehension(self, node: ast.AST, element: ast.AST,
                     scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
    inner = dict(env)
    filtered = False
    for generator in node.generators:  # type: ignore[attr-defined]
      found = self.labels(generator.iter, scope, inner)
      target, source = generator.target, generator.iter
      if isinstance(target, ast.Tuple) and isinstance(source, ast.Call) and (
          _names.call_name(source) == "zip") and len(source.args) == len(
              target.elts):  # `for m, (g, v) in zip(masks, pairs)`.
        for each, part in zip(target.elts, source.args):
          _bind_names(each, self.labels(part, scope, inner), inner)
      else:
        _bind_names(target, found, inner)
      if generator.ifs and "var" in found and any(
          _names.mentions_a_name_test(test) for test in generator.ifs):
        filtered = True
    result = dict(self.labels(element, scope, inner))
    if filtered:
      result["filtered"] = node
    return result

  def helper(self, function: _scopes.FunctionNode, home: _scopes.Scope,
             arguments: List[Labels]) -> Labels:
    """What a helper returns, given its arguments' labels."""
    key = (id(function), frozenset(
        f"{i}:{k}" for i, a in enumerate(arguments) for k in a))
    if key in self._helpers:
      return self._helpers[key]
    self._helpers[key] = {}  # A recursive helper adds nothing.
    scope = next((s for s in home.children if s.node is function), None)
    if scope is None:
      return {}
    body = ([function.body] if isinstance(function, ast.Lambda) else
            [n.value for n in scope.nodes if isinstance(n, ast.Return)])
    saved = self._bound.get(id(scope)), self._token
    self._bound[id(scope)] = dict(zip(scope.params, arguments))
    self._token = key
    try:
      result = union(self.labels(value, scope) for value in body)
    finally:
      self._token = saved[1]
      if saved[0] is None:
        del self._bound[id(scope)]
      else:
        self._bound[id(scope)] = saved[0]
    self._helpers[key] = result
    return result


def _bind_names(target: ast.AST, found: Labels,
                env: Dict[str, Labels]) -> None:
  if isinstance(target, ast.Name):
    env[target.id] = found
  elif isinstance(target, (ast.Tuple, ast.List)):
    for element in target.elts:
      _bind_names(element, found, env)


def has_var(labels: Labels) -> bool:
  """Whether the labels say "a variable, or arithmetic on one"."""
  return "var" in labels or "vararith" in labels
