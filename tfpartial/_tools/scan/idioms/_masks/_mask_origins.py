"""What made a mask, read from what its name or its `self.` attribute is
assigned: a random draw made once (a fixed random connectivity), a
comparison or a draw made anew, a triangle or a band, a pattern the code
builds from ones and zeros or from a MADE's degrees: the architecture's
shape (`architectural`, `shaped`), no part a freeze chose. Part of
`_masked_weights`."""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _cudnn_params

# What chooses a mask anew: a comparison, a draw.
_ANEW = {"greater", "less", "greater_equal", "less_equal", "equal",
         "not_equal", "top_k", "argsort", "sort", "percentile", "quantile"}


def bindings(name: str, scope: _scopes.Scope) -> Sequence[_scopes.Def]:
  """The assignments of `name` in the nearest scope that has any (the
  scope's own list: read it, never change it)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and name not in place.defs:
    place = place.parent
  return place.defs[name] if place is not None else ()


def _through_names(node: ast.AST, scope: _scopes.Scope,
                   here: Callable[[ast.AST], Optional[bool]], judge: object,
                   depth: int = 0) -> bool:
  """What `here` decides on the first node inside `node` it decides on
  (`None`: go on), or True where a local name `node` reads (two names
  deep) decides True; False when nothing decides. Each value and each
  name is judged once per scope and depth, under the judge's key: a name
  assigned from itself a hundred times (`x = f(x)`) is read a hundred
  times, not a hundred to the third."""
  return scope.once((judge, id(node), depth),
                    lambda: _walked(node, scope, here, judge, depth))


def _walked(node: ast.AST, scope: _scopes.Scope,
            here: Callable[[ast.AST], Optional[bool]], judge: object,
            depth: int) -> bool:
  known = scope.judged
  for item in ast.walk(node):
    decided = here(item)
    if decided is not None:
      return decided
    if not isinstance(item, ast.Name) or depth >= 2:
      continue
    key = (judge, item.id, depth)
    if key not in known:
      known[key] = any(
          _through_names(d.value, scope, here, judge, depth + 1)
          for d in scope.defs.get(item.id, []) if d.value is not None)
    if known[key]:
      return True
  return False


def _random(item: ast.AST) -> bool:
  return isinstance(item, ast.Call) and "random" in (
      _names.dotted(item.func) or "")


def drawn(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` (or a local name it reads) draws at random."""
  return _through_names(node, scope, lambda item: _random(item) or None,
                        drawn)


def drawn_connectivity(mask: ast.expr, scope: _scopes.Scope,
                        analysis: Analysis) -> bool:
  """Whether a mask (a name, or an attribute of `self`) is only ever
  assigned a random draw, made once where it is assigned (`W1_mask =
  tf.constant(np.random.binomial(1, 0.34, [100, 9]))`), and nothing
  writes it: a fixed random connectivity, the sparsity of an
  architecture, which neither training nor a pruning criterion chose."""
  values = assigned(mask, scope, analysis)[:8]
  return bool(values) and all(drawn(v, home) for v, home in values) and (
      not written_to(mask, scope, analysis))


def made_here(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a mask compares or draws values here (itself or through the
  local names it reads), unless all it reads is constant."""

  picked: Set[int] = set()

  def here(item: ast.AST) -> Optional[bool]:
    if isinstance(item, (ast.ListComp, ast.GeneratorExp)):
      picked.update(_positions_picked(item))
    if isinstance(item, ast.Compare) and id(item) in picked:
      return None
    if isinstance(item, ast.Compare) or isinstance(item, ast.Call) and (
        _names.call_name(item) in _ANEW or _random(item) or
        _names.call_name(item) in {"dropout", "bernoulli"}):
      return not _constants.is_constant(item, scope)
    return None

  return _through_names(node, scope, here, made_here)


def _positions_picked(comprehension: ast.AST) -> List[int]:
  """The comparisons of `[0 if i == 0 else 1 for i in range(n)]`: a
  position over `range` compared with a number spelled in the code (the
  padding row a person picked), not with another index (a triangle) or
  with data."""
  generators = getattr(comprehension, "generators", [])
  if len(generators) != 1 or generators[0].ifs or not isinstance(
      generators[0].target, ast.Name) or not isinstance(
          generators[0].iter, ast.Call) or _names.call_name(
              generators[0].iter) != "range":
    return []
  index = generators[0].target.id
  element = getattr(comprehension, "elt", None)
  if not isinstance(element, ast.IfExp) or not all(
      isinstance(e, ast.Constant) and isinstance(e.value, (int, float))
      for e in (element.body, element.orelse)):
    return []
  test = element.test
  sides = [test.left, *test.comparators] if isinstance(
      test, ast.Compare) else []
  if len(sides) == 2 and sorted(type(s).__name__ for s in sides) == [
      "Constant", "Name"] and index in {getattr(s, "id", None)
                                        for s in sides}:
    return [id(test)]
  return []


def structural(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a mask is a triangle or a band (`np.tril(ones, -1)` on an LU
  factor, a MADE or PixelCNN ordering): the shape of a parametrization,
  whose masked elements are no parameter of it."""
  return _through_names(node, scope, lambda item: isinstance(
      item, ast.Call) and _shape_named(_names.call_name(item)) or None,
                        structural)


def _shape_named(name: Optional[str]) -> bool:
  """Whether a call makes a triangle or a band: TensorFlow's and NumPy's
  own, or a helper named for one (a Clockwork RNN's `block_triu_mask`)."""
  return name is not None and (name in _SHAPES or bool(
      _SHAPE_WORDS & set(name.lower().split("_"))))


def shaped(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
           ) -> bool:
  """Whether a mask (a name, or an attribute of `self` through what its
  class assigns it) is a triangle or a band: `structural`."""
  if structural(mask, scope):
    return True
  spelled = _names.dotted(mask)
  owner: Optional[_scopes.Scope] = scope
  while owner is not None and owner.cls is None:
    owner = owner.parent
  if spelled is None or not spelled.startswith("self.") or owner is None or (
      owner.cls is None):
    return False
  return any(structural(value, home)
             for value, home in analysis.project.attribute(
                 owner.cls, spelled)[:8])


_SHAPES = {"tril", "triu", "band_part", "matrix_band_part", "eye",
           "tril_indices", "triu_indices"}


_SHAPE_WORDS = {"tril", "triu", "triangular", "band"}


def architectural(mask: ast.AST, scope: _scopes.Scope,
                  analysis: Analysis) -> bool:
  """Whether a mask is fixed by the architecture alone: a triangle or a
  band, or a pattern the code builds from ones and zeros or from a
  MADE's degrees (a constraint's as much as a forward product's)."""
  return isinstance(mask, ast.expr) and (structural(mask, scope) or (
      built_in_code(mask, scope, analysis)) and not _picked_rows(
          mask, scope, analysis))


def _picked_rows(mask: ast.expr, scope: _scopes.Scope,
                 analysis: Analysis) -> bool:
  """Whether a mask built from ones is zeroed at positions spelled as
  numbers (`m[0] = 0`, `m[:100] = 0`): rows a person picked (a padding
  row, a task's rows), not ones the shape places (`m[c - dw:c + dw + 1]
  = 0`, `m[center + 1:] = 0`)."""
  places = [(mask, scope)] + [(v, home) for v, home in assigned(
      mask, scope, analysis)[:8]]
  for value, home in places:
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    for node in home.nodes:
      if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
          isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
          and t.value.id in names and all(
              isinstance(n, (ast.Constant, ast.Slice, ast.Tuple, ast.List,
                             ast.UnaryOp, ast.USub, ast.Load))
              for n in ast.walk(t.slice))
          for t in getattr(node, "targets", [getattr(node, "target", None)])):
        return True
  return False


def built_in_code(mask: ast.expr, scope: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether a mask is a pattern the code builds from ones and zeros
  (`m = np.ones(k * k); m[center + 1:] = 0; self.mask = tf.constant(m)`:
  a PixelCNN's causal kernel, an architecture's shape), not one that
  training or data chose (a variable set between rounds, a placeholder
  fed, an array loaded from a file)."""
  values = assigned(mask, scope, analysis)
  built = False
  seen: Set[int] = set()
  while values and len(seen) < 24:
    value, home = values.pop(0)
    if id(value) in seen or not isinstance(value, ast.expr):
      continue
    seen.add(id(value))
    for packed in _cudnn_params.packed_lists(value):
      # Packed from the layer's own list (`self._masks`, appended
      # variables): what that list holds decides, not the padding.
      values += assigned(packed, home, analysis)[:4]
    for item in ast.walk(value):
      if isinstance(item, ast.Call):
        name = _names.call_name(item)
        made = _made_by(item, home, analysis)
        if name in _CHOSEN or made is False:
          return False
        built = built or name in _BUILT or made is True
      elif isinstance(item, ast.Compare):
        built = built or _outer_comparison(item)
      elif isinstance(item, ast.Name) and item.id not in home.params:
        values += [(d.value, home) for d in bindings(item.id, home)[:4]]
  return built


def _outer_comparison(node: ast.Compare) -> bool:
  """`d_out[None, :] >= d_in[:, None]`: two vectors broadcast against
  each other and ordered, a MADE's connectivity from its degrees (a
  threshold on values compares against a number, not this)."""
  sides = [node.left, *node.comparators]
  return len(sides) == 2 and all(isinstance(o, (
      ast.Gt, ast.GtE, ast.Lt, ast.LtE)) for o in node.ops) and all(
          isinstance(side, ast.Subscript) and any(
              isinstance(n, ast.Constant) and n.value is None
              for n in ast.walk(side.slice)) for side in sides)


def assigned(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
            ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """What a mask's name, or its attribute of `self` (an element of
  either: `self.w_mask[i]`), is assigned, with where."""
  while isinstance(mask, ast.Subscript):
    mask = mask.value
  spelled = _names.dotted(mask)
  if isinstance(mask, ast.Name):
    return [(d.value, scope) for d in bindings(mask.id, scope)
            if d.value is not None]
  if spelled is not None and spelled.count(".") == 1 and (
      spelled.startswith("self.")):
    owner: Optional[_scopes.Scope] = scope
    while owner is not None and owner.cls is None:
      owner = owner.parent
    if owner is not None and owner.cls is not None:
      return analysis.project.attribute(owner.cls, spelled)
  return []


def written_to(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
             ) -> bool:
  """Whether the project writes a mask variable (`layer.mask.assign(m)`,
  `tf.assign(mask, m)`) by the attribute or name it is kept under."""
  key = mask_key(mask, scope)
  if key is None and isinstance(mask, ast.Name):
    key = mask.id
  for place, call in analysis.calls_named(("assign",)):
    receiver = call.func.value if isinstance(call.func, ast.Attribute) and (
        _names.dotted(call.func.value) not in {"tf", "tf.compat.v1"}) else (
            call.args[0] if call.args else None)
    while isinstance(receiver, ast.Subscript):
      receiver = receiver.value
    if receiver is not None and (isinstance(receiver, ast.Attribute) and (
        receiver.attr == key) or isinstance(receiver, ast.Name) and (
            receiver.id == key)):
      return True
  return False


def _made_by(call: ast.Call, scope: _scopes.Scope, analysis: Analysis
             ) -> Optional[bool]:
  """For a call of a project function: True when it builds a mask by
  comparing what is no weight (a MADE's degrees: `d_out[:, None] >=
  d_in[None, :]`), False when it loads one, reads weights or prunes by
  magnitude; None for any other call."""
  function = analysis.flow.callee(call, scope)
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  compares = False
  for item in ast.walk(function):
    if isinstance(item, ast.Call) and _names.call_name(item) in (
        _CHOSEN | _MAGNITUDE):
      return False
    compares = compares or isinstance(item, ast.Compare) and any(
        isinstance(o, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) for o in item.ops)
  return True if compares else None


# What reads or ranks a weight's values: a pruning by magnitude.
_MAGNITUDE = {"abs", "absolute", "percentile", "quantile", "sort", "argsort",
              "top_k", "get_weights", "numpy", "get_variable", "eval", "run"}


# What makes a mask from ones and zeros in the code; what makes one that
# training or data chooses.
_BUILT = {"ones", "zeros", "ones_like", "zeros_like", "full"}


_CHOSEN = {"Variable", "VariableV1", "get_variable", "add_weight",
           "add_variable", "placeholder", "load", "loadtxt", "genfromtxt",
           "read_csv", "open", "fromfile"}


def mask_key(node: ast.expr, scope: _scopes.Scope) -> Optional[str]:
  """The attribute a mask is kept under: `layer.mask` -> mask,
  `self.masks[i]` -> masks, `mask` of `for g, mask in zip(grads,
  self.masks)` -> masks."""
  while isinstance(node, ast.Subscript):
    node = node.value
  if isinstance(node, ast.Attribute):
    return node.attr
  if not isinstance(node, ast.Name):
    return None
  for d in scope.defs.get(node.id, [])[:2]:
    value = d.value
    if isinstance(value, ast.Call) and _names.call_name(value) in {
        "zip", "enumerate"}:
      held = [a.attr for a in value.args if isinstance(a, ast.Attribute)
              and "mask" in a.attr.lower()]
      if len(held) == 1:
        return held[0]
    elif isinstance(value, ast.Attribute) and "mask" in value.attr.lower():
      return value.attr
  return None
