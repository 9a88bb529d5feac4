"""`stop-gradient-mix`: `m * x + (1 - m) * tf.stop_gradient(x)` (or a
function of the project doing it) in place of a variable."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _drift
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._masks import _masked_inputs
from tfpartial._tools.scan.idioms._masks import _masked_weights
from tfpartial._tools.scan.idioms._masks import _pruning_masks
from tfpartial._tools.scan.idioms._masks import _row_masks
from tfpartial._tools.scan.idioms._masks import _rows


@dataclasses.dataclass
class MixHit(_idiom.Hit):
  """A mix, in place (`helper` empty) or by a function of the project."""

  helper: str = ""


class StopGradientMix(_idiom.Idiom):
  """A variable rebuilt from itself and its `stop_gradient` under a mask."""

  id = "stop-gradient-mix"
  order = 2
  entry = _idiom.Entry(
      "a variable rebuilt as `m * x + (1 - m) * tf.stop_gradient(x)` in "
      "the forward pass", "tfstop_gradient-mixing",
      "use the variable itself; `tfpartial.train_only(x, mask)` and "
      "`spec.minimize(optimizer, loss)` (or a wrapped optimizer)")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    hits: List[_idiom.Hit] = []
    mixers = _mixers(analysis)
    project = analysis.project
    stopping = {id(m) for m in project.modules_with(("stop_gradient",))}
    words = {"stop_gradient", *mixers}
    modules = project.modules_with(words) if not mixers else (
        project.all_modules_with(words))
    for module in modules:
      cache: Dict[int, Set[str]] = {}
      for scope in analysis.scopes_with(module, words):
        hits += _scope_hits(analysis, scope, mixers,
                            id(module) in stopping, cache)
    hits += _split_tables(analysis)
    joined = {id(h.node) for h in hits}
    hits += [MixHit(node, scope, None, {"mix": node, "rows": variable})
             for node, scope, variable in _rows.replaced_rows(analysis)
             if id(node) not in joined]
    hits += _initial_mixes(analysis)
    hits += [MixHit(node, scope, None, {"mix": node, "forward": variable})
             for node, scope, variable in _masked_weights.masked_weights(
                 analysis) if id(node) not in joined]
    hits += [MixHit(node, scope, None, {"mix": node, "forward": variable})
             for node, scope, variable in _pruning_masks.masked(analysis)
             if id(node) not in joined]
    taken = {(id(h.scope), h.node.lineno) for h in hits}
    hits += [MixHit(node, scope, None, {"mix": node, "input": variable})
             for node, scope, variable in _masked_inputs.masked_inputs(
                 analysis) if id(node) not in joined and (
                     id(scope), node.lineno) not in taken]
    hits += [MixHit(node, scope, None, {"mix": node, "forward": variable})
             for node, scope, variable in _row_masks.row_masks(analysis)
             if id(node) not in joined]
    hits += _lambda_layers(analysis, mixers)
    # A helper's mix is reported where it is applied to a variable.
    applied = {id(h.labels.get("mix")) for h in hits
               if isinstance(h, MixHit) and h.helper}
    return [h for h in hits if isinstance(h, MixHit) and h.helper
            or id(h.node) not in applied]

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    helper = hit.helper if isinstance(hit, MixHit) else ""
    message = ("a variable mixed with its `tf.stop_gradient` copy under a "
               "mask" + (f", by the helper `{helper}`" if helper else ""))
    if isinstance(hit.node, ast.Call) and _names.call_name(hit.node) in {
        "concat", "concat_v2"} and "stop_gradient" not in ast.unparse(
            hit.node):
      message = ("one table's rows split between a variable and a constant "
                 "joined by `concat`: the constant rows never train")
    if "layer" in hit.labels:
      message = (f"a layer's output mixed with its `tf.stop_gradient` copy "
                 f"under a fixed mask, by the helper `{helper}` in a "
                 "`Lambda` layer: the weights that make the masked "
                 "channels never train")
    if "initial" in hit.labels:
      message = ("a layer's weight mixed under a mask with a non-trainable "
                 "copy of its initial values: the masked-out elements never "
                 "train")
    if "rows" in hit.labels:
      return _rows_explained(hit)
    if "input" in hit.labels:
      return _input_explained(hit)
    if "forward" in hit.labels:
      return _forward_explained(hit)
    if "summed" in hit.labels:
      message = ("masked terms of one variable summed, some through "
                 "`tf.stop_gradient`: the elements their masks keep never "
                 "train")
    reasons = _drift.optimizer_drift(context.optimizer, nan=True)
    if context.regularizers:
      first = context.regularizers[0]
      reasons.append(f"the regularizer `{_idiom.short(first)}` (line "
                     f"{_idiom.line(first)}) reads the variable itself, not "
                     "the mix, so its gradient reaches the frozen elements")
    return message, reasons

  def advice(self, hit: _idiom.Hit) -> Tuple[str, str]:
    if "input" in hit.labels:
      return f"{_idiom.GUIDE}#{_INPUT_ANCHOR}", _INPUT_PORT
    return super().advice(hit)

  def port(self, hit: _idiom.Hit, analysis: Analysis) -> _edits.Port:
    assert isinstance(hit, MixHit)
    return _port(hit, analysis)


def _rows_explained(hit: _idiom.Hit) -> Tuple[str, List[str]]:
  """A variable's rows replaced by constants in the table the model reads:
  exact as written; the variable keeps rows nothing reads."""
  variable = _idiom.short(hit.labels["rows"])
  joined = _names.call_name(hit.node) if isinstance(hit.node, ast.Call) \
      else "concat"
  return (f"rows of the variable `{variable}` replaced by constants in the "
          f"table the model reads (`{joined}`): those rows of the variable "
          "never train"), [
              "none in what the model computes: the replaced rows are exact "
              "as written; but the variable keeps those rows, unused and "
              "trained-looking: a regularizer or weight decay and the "
              "optimizer's slots may still move them, and a checkpoint or "
              "export of the variable holds them, not the constants the "
              "model uses"]


def _forward_explained(hit: _idiom.Hit) -> Tuple[str, List[str]]:
  """A variable times a fixed 0/1 mask in the forward pass: exact as
  written for what the model computes; the variable keeps the masked
  elements, which nothing but the optimizer's extras moves."""
  variable = _idiom.short(hit.labels["forward"])
  return (f"the variable `{variable}` multiplied by a fixed mask in the "
          "forward pass: where the mask is 0 its elements are replaced by "
          "0 and their gradient is exactly 0, so they never train"), [
              "none in what the model computes: the masked elements are "
              "read as 0; but the variable keeps its own values there: "
              "weight decay or a regularizer on the variable and an "
              "optimizer's momentum carried from before the mask still "
              "move them, and a checkpoint or export of the variable holds "
              "them, not the zeros the model uses"]


def _input_explained(hit: _idiom.Hit) -> Tuple[str, List[str]]:
  """A trained input (a perturbation, a patch) times a mask fixed for the
  run on its way into the model: the masked elements never train; the
  variable keeps them."""
  variable = _idiom.short(hit.labels["input"])
  return (f"the trained input `{variable}` multiplied by a mask fixed for "
          "the run on its way into the model (every other read of it only "
          "writes, fetches or lists it, or goes through the same mask): "
          "where the mask is 0 its elements reach neither the model nor "
          "the loss, their gradient is exactly 0, so they never train"), [
              "none in what the model computes: the masked elements are "
              "not read; but the variable keeps its own values there: "
              "an optimizer's momentum carried from an earlier mask (a "
              "mask shrunk between rounds) or a decoupled weight decay "
              "still moves them, and what the variable holds there is not "
              "what the model was given"]


def _mixers(analysis: Analysis) -> Dict[str, Set[int]]:
  """The project's functions that return what they stop a gradient of (a
  helper that may mix), by name: name -> their nodes."""
  found: Dict[str, Set[int]] = {}
  cache: Dict[int, Set[str]] = {}
  checked: Set[int] = set()
  for scope, _ in analysis.calls_named(("stop_gradient",)):
    if scope.parent is None or scope.name in _DISPATCHED or id(
        scope) in checked:
      continue
    checked.add(id(scope))
    stopped = _stopped_names(scope, cache)
    returned = _returned(scope)
    if any(_mix_shape(c, stopped, scope, set(scope.params))
           for value in returned for c in _stopping(value, stopped)):
      found.setdefault(scope.name, set()).add(id(scope.node))
  return found


def _returned(scope: _scopes.Scope) -> List[ast.expr]:
  """What a function returns, a local name's values for the name (`ret =
  tf.stop_gradient(mask_h * x) + mask * x; return ret`; not a parameter
  mixed in place, which is reported where it is mixed)."""
  returned: List[ast.expr] = []
  for node in scope.nodes:
    if isinstance(node, ast.Return) and node.value is not None:
      value = node.value
      returned.append(value)
      if isinstance(value, ast.Name) and value.id not in scope.params:
        returned += [d.value for d in scope.defs.get(value.id, [])]
  return returned


def _lambda_layers(analysis: Analysis, mixers: Dict[str, Set[int]]
                   ) -> List[_idiom.Hit]:
  """`Lambda(stop_backprop, arguments={...})(layer_output)`: a helper of
  the project that mixes its input with its `stop_gradient` under a mask
  it makes from constants (`np.ones(x.shape[1:])`, some channels set to
  0), put as a layer after the one whose channels it stops."""
  hits: List[_idiom.Hit] = []
  if not mixers:
    return hits
  flow = analysis.flow
  for scope, call in analysis.calls_named(("Lambda",)):
    first = call.args[0] if call.args else None
    if not isinstance(first, ast.Name) or first.id not in mixers:
      continue
    function = flow.labels(first, scope).get("fn")
    known = flow.functions.get(id(function))
    if known is None or id(known[0]) not in mixers[first.id] or not (
        _masks_from_constants(known[1].scope_of(known[0]))):
      continue
    order = analysis.order(scope)
    applied = order.parent(call)
    if isinstance(applied, ast.Call) and applied.func is call:
      hits.append(MixHit(call, scope, None, {"mix": call, "layer": call},
                         first.id))
  return hits


def _masks_from_constants(scope: Optional[_scopes.Scope]) -> bool:
  """Whether a helper builds a NumPy mask of ones or zeros and sets some
  of its elements (`mask = np.ones(...); mask[:, :, f] = 0`)."""
  if scope is None:
    return False
  built = {name for name, defs in scope.defs.items() for d in defs
           if isinstance(d.value, ast.Call) and _names.call_name(d.value) in {
               "ones", "zeros", "ones_like", "zeros_like"}}
  return any(isinstance(node, ast.Assign) and any(
      isinstance(t, ast.Subscript) and _names.root(t) in built
      for t in node.targets) and _constants.is_constant(node.value, scope)
             for node in scope.nodes)


def _initial_mixes(analysis: Analysis) -> List[_idiom.Hit]:
  """`self.kernel = self._kernel * self.mask + self.mask_rev *
  self.kernel_init` in a layer's method: the weight used in the forward
  pass mixes the trainable weight under a mask with a non-trainable copy
  of its initial values (the masked-out elements never train)."""
  hits: List[_idiom.Hit] = []
  words = ("_non_trainable_weights", "trainable")
  for module in analysis.project.modules_with(words):
    for scope in analysis.scopes_with(module, words):
      if scope.cls is None:
        continue
      bound = _attributes_bound(scope)
      for node in scope.nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and _self_attribute(node.targets[0])):
          continue
        value = node.value
        if not (isinstance(value, ast.BinOp) and isinstance(
            value.op, ast.Add)):
          continue
        products = [_factors(value.left), _factors(value.right)]
        if not all(len(p) == 2 for p in products):
          continue
        kinds = [[_weight_kind(f, bound, scope) for f in p]
                 for p in products]
        for live, frozen in ((0, 1), (1, 0)):
          if sorted(kinds[live]) == ["fixed", "trainable"] and (
              kinds[frozen] == ["fixed", "fixed"]) and any(
                  bound.get(_self_attribute(f) or "", (None, ""))[1] == (
                      "variable") for f in products[frozen]):
            hits.append(MixHit(value, scope, None, {"mix": value,
                                                    "initial": value}))
            break
  return hits


def _self_attribute(node: ast.AST) -> Optional[str]:
  """`x` of `self.x`."""
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self":
    return node.attr
  return None


def _factors(node: ast.AST) -> List[ast.expr]:
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
    return [node.left, node.right]
  return []


def _attributes_bound(scope: _scopes.Scope
                      ) -> Dict[str, Tuple[ast.expr, str]]:
  """The attributes of `self` a method binds: name -> (value, "weight"
  for the layer's own trainable weight, "variable" for a variable kept
  out of training, else "")."""
  hidden: Set[str] = set()
  for node in scope.nodes:
    if isinstance(node, ast.Call) and _names.call_name(node) == "append" \
        and isinstance(node.func, ast.Attribute) and (
            _self_attribute(node.func.value) == "_non_trainable_weights"
        ) and node.args:
      hidden.add(_self_attribute(node.args[0]) or "")
  bound: Dict[str, Tuple[ast.expr, str]] = {}
  for node in scope.nodes:
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
      continue
    name = _self_attribute(node.targets[0])
    if name is None:
      continue
    value = node.value
    kind = ""
    if _self_attribute(value) in {"kernel", "bias", "embeddings"}:
      kind = "weight"  # The weight the parent's `build` made.
    elif isinstance(value, ast.Call) and _names.call_name(value) in {
        "variable", "Variable", "add_weight", "get_variable"}:
      off = any(k.arg == "trainable" and isinstance(
          k.value, ast.Constant) and k.value.value is False
                for k in value.keywords)
      kind = "variable" if off or name in hidden else ""
    bound[name] = (value, kind)
  return bound


def _weight_kind(node: ast.AST, bound: Dict[str, Tuple[ast.expr, str]],
                 scope: _scopes.Scope) -> str:
  """"trainable" (the layer's weight), "fixed" (a variable kept out of
  training, a constant), or ""."""
  name = _self_attribute(node)
  if name is not None and name in bound:
    kind = bound[name][1]
    return {"weight": "trainable", "variable": "fixed"}.get(kind, "")
  return "fixed" if _constants.is_constant(node, scope) else ""


def _split_tables(analysis: Analysis) -> List[_idiom.Hit]:
  """`concat([Variable(table[:n]), constant(table[n:])])`: the rows past
  `n` are a constant, the first a variable (no `stop_gradient` spelled)."""
  hits: List[_idiom.Hit] = []
  for module in analysis.project.modules_with(("concat",)):
    text = module.source.text
    if "constant(" not in text and "array(" not in text or (
        "Variable(" not in text and "get_variable(" not in text):
      continue
    for scope in analysis.scopes_with(module, ("concat",)):
      for node in scope.nodes:
        if not isinstance(node, ast.Call) or _names.call_name(node) not in {
            "concat", "concat_v2"}:
          continue
        parts = _calls.joined_parts(node) or _listed_parts(node, scope)
        if parts and (_calls.variable_and_constant(parts, scope) or (
            _rows_of_variables_and_constants(node, parts, scope))):
          hits.append(MixHit(node, scope, None, {"mix": node}))
  return hits


def _listed_parts(node: ast.Call, scope: _scopes.Scope) -> List[ast.expr]:
  """The parts of `concat(parts, axis=0)` where `parts` is a local list:
  its literal's elements and what is appended to it."""
  first = node.args[0] if node.args else None
  if not isinstance(first, ast.Name):
    return []
  found: List[ast.expr] = []
  for each in scope.defs.get(first.id, []):
    if isinstance(each.value, (ast.List, ast.Tuple)):
      found += each.value.elts
    elif not each.replaces:
      found.append(each.value)
  return found


def _rows_of_variables_and_constants(node: ast.Call, parts: List[ast.expr],
                                     scope: _scopes.Scope) -> bool:
  """`concat([unk, tokens, constant(pretrained)], axis=0)`: a table whose
  first rows are variables and the others a constant made from data."""
  axis = next((k.value for k in node.keywords if k.arg == "axis"),
              node.args[1] if len(node.args) > 1 else None)
  if not (isinstance(axis, ast.Constant) and axis.value == 0):
    return False
  made = []
  for part in parts:
    value = _calls.maker(part, scope)
    if value is not None:
      made.append((_names.call_name(value), value))
  variables = [c for name, c in made if name in _names.VARIABLES and not any(
      k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
          k.value.value is False) for k in c.keywords)]
  data = [c for name, c in made if name in {"constant", "convert_to_tensor"}
          and (c.args or c.keywords) and not isinstance(
              (c.args[0] if c.args else c.keywords[0].value), (
                  ast.Constant, ast.List, ast.Tuple))]
  return bool(variables and data)


# Methods the framework calls, not the code by name.
_DISPATCHED = {"call", "__call__", "forward", "build", "apply", "<lambda>"}


def _scope_hits(analysis: Analysis, scope: _scopes.Scope,
                mixers: Dict[str, Set[int]], here: bool,
                cache: Dict[int, Set[str]]) -> List[_idiom.Hit]:
  """The mixes of one scope: only the sums and `where`s that stop a
  gradient (or read a name holding a stopped value) are evaluated, and
  the calls of a function that may mix."""
  flow = analysis.flow
  hits: List[_idiom.Hit] = []
  stopped = _stopped_names(scope, cache) if here else set()
  read: _Read = {}
  for node in scope.nodes:
    if here and isinstance(node, ast.stmt) and not isinstance(
        node, _COMPOUND):
      for candidate in _stopping(node, stopped):
        if not _mix_shape(candidate, stopped, scope, read=read):
          continue
        found = flow.labels(candidate, scope)
        if found.get("mix") is candidate:
          hits.append(MixHit(candidate, scope, None, found))
    elif isinstance(node, ast.Call) and _names.call_name(node) in mixers:
      callee = flow.callee(node, scope)
      if id(callee) not in mixers[_names.call_name(node)]:
        continue
      found = flow.labels(node, scope)
      mix = found.get("mix")
      if mix is not None and _mixes(analysis, node, scope, mix):
        hits.append(MixHit(node, scope, None, found,
                           _names.call_name(node)))
  return hits + (_summed(analysis, scope) if here else [])


def _summed(analysis: Analysis, scope: _scopes.Scope) -> List[_idiom.Hit]:
  """`acc += sg(w * old_mask)` and `acc += w * new_mask` (Conure's
  per-task masks summed over a loop, the earlier tasks' stopped): a mix
  spread over statements, one variable in a stopped and a live product."""
  added: Dict[str, List[ast.expr]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) \
        and isinstance(node.target, ast.Name):
      added.setdefault(node.target.id, []).append(node.value)
  hits: List[_idiom.Hit] = []
  for terms in added.values():
    values: List[ast.expr] = []
    for value in terms if len(terms) > 1 else []:
      values += [d.value for d in scope.defs.get(value.id, []) if d.replaces
                 ] if isinstance(value, ast.Name) else [value]
    held = [v for v in values if isinstance(v, ast.Call) and (
        _names.call_name(v) == "stop_gradient") and v.args and (
            _product(v.args[0]))]
    live = [v for v in values if _product(v) and not any(
        isinstance(n, ast.Call) and _names.call_name(n) == "stop_gradient"
        for n in ast.walk(v))]
    for each in held:
      stopped = _calls.variables_in(analysis.flow, each, scope, {},
                                    stopped=True, trainable=True)
      if any(stopped & _calls.variables_in(analysis.flow, v, scope, {},
                                           trainable=True) for v in live):
        hits.append(MixHit(each, scope, None, {"mix": each, "summed": each}))
        break
  return hits


def _product(node: ast.AST) -> bool:
  return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) or (
      isinstance(node, ast.Call) and _names.call_name(node) in {
          "multiply", "mul"})


# Calls that sum two terms: `tf.add`, `tf.add_n`.
_SUMS = {"add", "add_v2", "add_n", "accumulate_n"}


def _stopping(statement: ast.AST, stopped: Set[str]) -> List[ast.expr]:
  """The sums and `where`s of a statement with a `stop_gradient` (or a
  name in `stopped`) inside them, in one walk of the statement."""
  parents: Dict[int, ast.AST] = {}
  marked: Set[int] = set()
  candidates: List[ast.expr] = []
  stack: List[ast.AST] = [statement]
  while stack:
    node = stack.pop()
    if isinstance(node, ast.BinOp) and isinstance(node.op, (
        ast.Add, ast.Sub)) or isinstance(node, ast.Call) and (
            _names.call_name(node) in _WHERE):
      candidates.append(node)
    if isinstance(node, ast.Call) and _names.call_name(node) == (
        "stop_gradient") or isinstance(node, ast.Name) and (
            node.id in stopped):
      current: Optional[ast.AST] = node
      while current is not None and id(current) not in marked:
        marked.add(id(current))
        current = parents.get(id(current))
    for child in _scopes.children(node):
      if not isinstance(child, ast.Lambda):
        parents[id(child)] = node
        stack.append(child)
  return [c for c in candidates if id(c) in marked]


_WHERE = {"where", "where_v2", "select", "concat", "concatenate",
          *_calls.REBUILDS, *_SUMS}
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
             ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef,
             ast.ClassDef)


def _mix_shape(node: ast.AST, stopped: Set[str], scope: _scopes.Scope,
               among: Optional[Set[str]] = None,
               read: Optional[_Read] = None) -> bool:
  """Whether a sum or `where` has the shape of a mix, checked before any
  flow: a name read both inside a `stop_gradient` (or a name holding
  one) and outside it (one of `among`, if given), and for a sum a product
  on each side (`m * x + (1 - m) * tf.stop_gradient(x)`)."""
  terms = _calls.summed_terms(node) if isinstance(node, ast.Call) and (
      _names.call_name(node) in _SUMS) else None
  if isinstance(node, ast.BinOp):
    terms = [node.left, node.right]
  if terms is not None:
    parts = terms
    if not all(_has_product(p, scope) for p in parts) and not (
        _stopped_plus_difference(parts)):
      return False  # `x + sg(y - x)`: a straight-through estimator.
  elif isinstance(node, ast.Call) and _names.call_name(node) in {
      "concat", "concatenate"}:
    first = node.args[0] if node.args else None
    parts = list(getattr(first, "elts", []))
  elif isinstance(node, ast.Call) and _names.call_name(node) in (
      _calls.REBUILDS):
    parts = _calls.rebuilt_parts(node) or []
  else:
    parts = list(getattr(node, "args", []))[1:3]
  inside: Set[str] = set()
  outside: Set[str] = set()
  read = {} if read is None else read
  for part in parts:
    _reads(part, stopped, scope, inside, outside, 0, read)
  common = inside & outside
  return bool(common if among is None else common & among)


def _stopped_plus_difference(parts: List[ast.expr]) -> bool:
  """`sg(x) + m * (x - sg(x))`: a stopped value plus a product of a
  difference (the flow then checks it is one variable under a mask)."""
  for mine, other in ((parts[0], parts[1]), (parts[1], parts[0])):
    if isinstance(mine, ast.Call) and _names.call_name(mine) == (
        "stop_gradient") and isinstance(other, ast.BinOp) and isinstance(
            other.op, ast.Mult) and any(
                isinstance(f, ast.BinOp) and isinstance(f.op, ast.Sub)
                for f in (other.left, other.right)):
      return True
  return False


def _has_product(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` multiplies (directly or in a local name's value)."""
  return _scopes.found_through_names(node, scope, _multiplies, _scopes.walk)


def _multiplies(item: ast.AST) -> bool:
  return isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mult) or (
      isinstance(item, ast.Call) and _names.call_name(item) in {
          "multiply", "mul", "where", "where_v2"})


# What the value of a stopped name reads inside stopped values, by (value,
# depth): worked out once per scope (the same names recur in its sums).
_Read = Dict[Tuple[object, int], Set[str]]


def _reads(node: ast.AST, stopped: Set[str], scope: _scopes.Scope,
           inside: Set[str], outside: Set[str], depth: int,
           read: _Read) -> None:
  """The names `node` reads inside stopped values and outside them."""
  stack: List[Tuple[ast.AST, bool]] = [(node, False)]
  while stack:
    item, stopping = stack.pop()
    if isinstance(item, ast.Call) and _names.call_name(item) == (
        "stop_gradient"):
      stack.extend((a, True) for a in item.args)
      continue
    name = _names.dotted(item) if isinstance(item, (ast.Name, ast.Attribute)
                                             ) else None
    if name is not None:
      (inside if stopping else outside).add(name)
      if isinstance(item, ast.Name) and item.id in stopped and depth < 2:
        inside |= _reads_of_name(item.id, stopped, scope, depth + 1, read)
      part = _calls.split_part(item, scope) if isinstance(
          item, ast.Name) else None
      if part is not None:
        stack.append((part, stopping))  # `a, b = split(x)`: x's parts.
      if isinstance(item, ast.Name):
        continue
    stack.extend((c, stopping) for c in _scopes.children(item))


def _reads_of_name(name: str, stopped: Set[str], scope: _scopes.Scope,
                   depth: int, read: _Read) -> Set[str]:
  """What the values of `name` read inside stopped values: each value
  once, and the name once, per depth."""
  found = read.get((name, depth))
  if found is None:
    found = read[(name, depth)] = set()
    for each in scope.defs.get(name, []):
      mine = read.get((id(each.value), depth))
      if mine is None:
        mine = read[(id(each.value), depth)] = set()
        _reads(each.value, stopped, scope, mine, set(), depth, read)
      found |= mine
  return found


def _stopped_names(scope: _scopes.Scope, cache: Dict[int, Set[str]]
                   ) -> Set[str]:
  """The names of `scope` assigned a value that stops a gradient (or
  reads such a name), and those of the scopes around it: one walk of each
  assignment, then along what reads what."""
  if id(scope) in cache:
    return cache[id(scope)]
  stopped = set(_stopped_names(scope.parent, cache)) if (
      scope.parent is not None) else set()
  readers: Dict[str, Set[str]] = {}  # name -> the names assigned from it.
  queue: List[str] = []
  for name, defs in scope.defs.items():
    for each in defs:
      for item in _scopes.walk(each.value):
        if isinstance(item, ast.Call) and _names.call_name(item) == (
            "stop_gradient") and name not in stopped:
          stopped.add(name)
          queue.append(name)
        elif isinstance(item, ast.Name) and item.id != name:
          readers.setdefault(item.id, set()).add(name)
  queue += [n for n in list(stopped) if n in readers]
  while queue:
    for reader in readers.get(queue.pop(), ()):
      if reader not in stopped:
        stopped.add(reader)
        queue.append(reader)
  cache[id(scope)] = stopped
  return stopped


def _mixes(analysis: Analysis, call: ast.Call, scope: _scopes.Scope,
           mix: ast.AST) -> bool:
  """Whether the function `call` calls is the one that mixes."""
  callee = analysis.flow.callee(call, scope)
  function = analysis.flow.functions.get(id(callee))
  inner = function[1].scope_of(function[0]) if function else None
  return inner is not None and any(n is mix for n in inner.nodes)


def _live_term(flow: Flow, mix: ast.AST, scope: _scopes.Scope
               ) -> Optional[Tuple[ast.expr, ast.expr]]:
  """(mask, variable) of the term of `mix` that the gradient flows through."""
  if not isinstance(mix, ast.BinOp):
    return None  # A `tf.where`: which branch is live is in the condition.
  for term in (mix.left, mix.right):
    if any(isinstance(n, ast.Call) and _names.call_name(n) == "stop_gradient"
           for n in ast.walk(term)):
      continue
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
      for mask, variable in ((term.left, term.right),
                             (term.right, term.left)):
        known = flow.labels(variable, scope)
        if ("var" in known or "param" in known) and "mask" in flow.labels(
            mask, scope):
          return mask, variable
  return None


def _helper_arguments(hit: MixHit, analysis: Analysis
                      ) -> "Tuple[ast.expr, ast.expr] | str":
  """The call's (mask, variable) arguments, from the helper's live term."""
  node = hit.node
  callee = analysis.flow.labels(node.func, hit.scope) if isinstance(
      node, ast.Call) else {}
  function = analysis.flow.functions.get(id(callee.get("fn")))
  if function is None or not isinstance(node, ast.Call):
    return "the helper is not a plain function of the project"
  scope = function[1].scope_of(function[0])
  returned = [n.value for n in scope.nodes if isinstance(n, ast.Return)] \
      if scope is not None else []
  live = (_live_term(analysis.flow, returned[0], scope)
          if scope is not None and len(returned) == 1 and returned[0]
          is not None else None)
  if live is None or scope is None or not all(
      isinstance(t, ast.Name) and t.id in scope.params for t in live):
    return "the helper does not read as `m * x + sg((1 - m) * x)` of its " \
           "parameters"
  names = [t.id for t in live if isinstance(t, ast.Name)]
  positions = [scope.params.index(name) for name in names]
  if max(positions) >= len(node.args):
    return "the helper's arguments are not given by position"
  return node.args[positions[0]], node.args[positions[1]]


def _port(hit: MixHit, analysis: Analysis) -> _edits.Port:
  """`used = m * x + (1 - m) * tf.stop_gradient(x)` -> `used = x`, and the
  train step through `tfpartial.train_only(x, m != 0)`."""
  module = analysis.module(hit.scope)
  assert module.tree is not None
  lines = analysis.lines(hit.scope)
  tf = _edits.tf_alias(module.tree)
  frozen: Optional[str] = None  # The index frozen (a concat's part).
  for label, reason in _BY_LABEL.items():
    if label in hit.labels:
      return reason
  if hit.helper:
    pair = _helper_arguments(hit, analysis)
    if isinstance(pair, str):
      return pair
    mask, variable = pair
  elif isinstance(hit.node, ast.Call) and _names.call_name(hit.node) in {
      "concat", "concatenate"}:
    part = _stopped_part(hit.node, lines)
    if isinstance(part, str):
      return part
    variable, frozen = part
    frozen = f"{_edits.numpy_alias(module.tree) or 'np'}.{frozen}"
    mask = variable
  else:
    live = _live_term(analysis.flow, hit.node, hit.scope)
    if live is None:
      return _unported(hit.node)
    mask, variable = live
  if tf is None or frozen is None and not _constants.is_constant(
      mask, hit.scope, imported=analysis.project.imported_values):
    return f"the mask `{_edits.text(mask, lines)}` is not a constant"
  sink = _one_step(hit.scope)
  order = analysis.order(hit.scope)
  statement = order.statement_of(sink) if sink is not None else None
  if sink is None or statement is None:
    return "no single `minimize`/`apply_gradients` in this function: " \
           "put `spec.wrap(optimizer)` where the optimizer is built"
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(sink, name, lines)
  if apply is None or statement.lineno <= hit.node.lineno:
    return "the train step is not a plain statement after the mix"
  spec = (f"{name} = tfpartial.train_only({_edits.text(variable, lines)}, "
          f"{tf}.get_static_value({tf}.convert_to_tensor("
          f"{_edits.text(mask, lines)})) != 0)") if frozen is None else (
              f"{name} = tfpartial.freeze({_edits.text(variable, lines)}, "
              f"{frozen})")
  site = _edits.spec_site(statement, hit.scope)
  return _edits.with_import(module.tree, [
      _edits.replace(hit.node, _edits.text(variable, lines)),
      _edits.before(site, lines, spec), apply], numpy=frozen is not None and (
          _edits.numpy_alias(module.tree) is None))


# Why the port of a hit so labelled is by hand (or not needed).
# A masked trained input keeps its product: the guide's own subsection.
_INPUT_ANCHOR = "a-masked-trained-input"
_INPUT_PORT = ("keep the masked product; where the mask is set, freeze "
               "the variable's masked elements with `tfpartial.freeze("
               "variable, mask == 0)` on the optimizer, one spec per mask")

_BY_LABEL = {
    "initial": ("the masked-out elements are a non-trainable copy of the "
                "initial values: use the weight itself, with those values "
                "assigned once, and `tfpartial.train_only(weight, mask)` on "
                "the optimizer"),
    "rows": ("none needed: the table the model reads is exact as written; "
             "for the variable to hold the constants too, assign them once "
             "and keep those rows with `tfpartial.freeze`"),
    "input": ("not the variable itself: the masked elements must still "
              "read the constant (`(1 - m) * original`, or 0), so the "
              "product stays; the mask is fed or set for each run, no "
              "constant a spec can hold: where it is set, freeze the "
              "variable's masked elements with `tfpartial.freeze(variable, "
              "mask == 0)` on the optimizer, one spec per mask (its "
              "elements then keep their values whatever the optimizer's "
              "state)"),
    "forward": ("use the variable itself, with the masked elements set "
                "to 0 once, and `tfpartial.freeze(variable, mask == 0)` on "
                "the optimizer (a mask that changes between rounds: one "
                "spec per round)"),
    "summed": ("the masked terms of one variable are summed, some stopped: "
               "say which elements train in a `tfpartial.train_only` and use "
               "the variable itself"),
    "layer": ("the mask stops channels of a layer's output: say which "
              "elements of that layer's kernel and bias train in a "
              "`tfpartial.train_only` and drop the `Lambda` layer"),
}


def _unported(node: ast.AST) -> str:
  """Why a mix that is no `m * x + (1 - m) * sg(x)` is ported by hand."""
  name = _names.call_name(node) if isinstance(node, ast.Call) else ""
  if name in _calls.REBUILDS:
    return (f"which elements train is in the indices `{name}` is given: "
            "say them in a `tfpartial.train_only`")
  if name in _SUMS:
    return (f"which elements train is in the masks `{name}` sums: say "
            "them in a `tfpartial.train_only`")
  return "which term trains is in a `tf.where` condition: say it in " \
         "a `tfpartial.train_only`"


def _stopped_part(node: ast.Call, lines: List[str]
                  ) -> "Tuple[ast.expr, str] | str":
  """For `concat([stop_gradient(x[a:b]), x[b:]], axis=k)`: (x, the index
  of the stopped part, `(slice(None),) * k + (slice(a, b),)`)."""
  axis_node = next((k.value for k in node.keywords if k.arg == "axis"),
                   node.args[1] if len(node.args) > 1 else None)
  if axis_node is not None and not (isinstance(axis_node, ast.Constant)
                                    and isinstance(axis_node.value, int)
                                    and axis_node.value >= 0):
    return "the parts are joined along an axis not written as a number"
  axis = axis_node.value if isinstance(axis_node, ast.Constant) else 0
  parts = getattr(node.args[0], "elts", [])
  stopped = [p for p in parts if isinstance(p, ast.Call) and (
      _names.call_name(p) == "stop_gradient") and p.args]
  if len(stopped) != 1 or not isinstance(stopped[0].args[0], ast.Subscript):
    return "the stopped part is not one slice of the variable"
  piece = stopped[0].args[0]
  index = piece.slice
  if not isinstance(index, ast.Slice) or axis:
    return "the stopped part is not a slice of the first axis"
  variable = piece.value
  others = [p for p in parts if p is not stopped[0]]
  if not all(isinstance(p, ast.Subscript) and _edits.text(
      p.value, lines) == _edits.text(variable, lines) for p in others):
    return "the parts are not slices of one variable"
  return variable, f"s_[{_edits.text(index, lines)}]"


def _one_step(scope: _scopes.Scope) -> Optional[ast.Call]:
  steps = [n for n in scope.nodes if isinstance(n, ast.Call) and
           _names.call_name(n) in _names.TRAIN_STEPS]
  return steps[0] if len(steps) == 1 else None


IDIOM = StopGradientMix()
