"""A trained input (an attack's perturbation, modifier or patch) multiplied
in the forward pass by a mask fixed while it trains: `newimg =
tanh(modifier + simg) / 2 * canchange + (1 - canchange) * original` with
`minimize(loss, var_list=[modifier])` (Carlini's L0 attack), `perturb *
l0_mask` with a placeholder fed a task's mask. Where the mask is 0 the
variable's elements reach neither the model nor the loss: their gradient
is exactly 0 and they never train while the rest of the variable does.

Which variables train is read from the steps themselves (the list given
to `minimize`, `compute_gradients` or a tape's `gradient`); the mask by
what makes it (a placeholder of a fixed, non-scalar shape that no random
draw feeds, a variable no step trains whose writes are fed or assigned,
an array or image loaded from a file) and by what says it is one (its
name, its complement `1 - m` beside it, an `if` on a mask flag).

Not this: a variable no listed step trains (a model's activations, an
attention, padding or sequence mask on them), a mask with a batch axis
(`None` in its shape), drawn at random or compared anew (dropout), a
triangle or a pattern built from the shape, a trained gate (`sigmoid(g) *
w` with `g` trained too), a product only reduced into a loss (a loss
mask), read as a layer's weight (`_masked_weights`), written back or
stopped."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _masked_weights
from tfpartial._tools.scan.idioms._masks._mask_kept import fed_anew
from tfpartial._tools.scan.idioms._masks._mask_origins import (
    drawn, made_here, structural)

Hit = Tuple[ast.expr, _scopes.Scope, ast.expr]
# A list given to a step (or assigned), its scope and line.
_Listed = Tuple[ast.expr, _scopes.Scope, int]

_STEPS = {"minimize", "compute_gradients", "gradient"}
_MAKERS = {"Variable", "VariableV1", "get_variable"}
_PLACEHOLDERS = {"placeholder", "placeholder_with_default"}
_LOADS = {"load", "loadtxt", "genfromtxt", "fromfile", "open", "imread",
          "read_file", "load_img"}
# What passes a value on element by element (or reshaped, stacked).
_ELEMENTWISE = {"tanh", "sigmoid", "clip_by_value", "identity", "reshape",
                "cast", "abs", "exp", "sqrt", "square", "add", "subtract",
                "divide", "truediv", "expand_dims", "squeeze", "tile",
                "stack", "to_float", "convert_to_tensor", "constant",
                "maximum", "minimum", "sin", "cos", "atan", "multiply"}
# What ends a value's way into a scalar (a loss mask), a summary or a
# print: no forward pass.
_NOT_FORWARD = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                "norm", "l2_loss", "nn.l2_loss", "print", "Print", "image",
                "histogram", "scalar", "assign", "assign_add", "assign_sub",
                "stop_gradient", "gradients", "gradient", "run", "eval"}


def masked_inputs(analysis: Analysis) -> List[Hit]:
  """(the product, its scope, the variable) of each trained input
  multiplied by a fixed mask on its way into the model."""
  found: List[Hit] = []
  project = analysis.project
  for module in project.modules:
    text = module.source.text
    if module.is_test or "*" not in text and "multiply(" not in text or (
        "var_list" not in text and ".gradient(" not in text) or not (
            "Variable(" in text or "get_variable(" in text):
      continue
    root = project.parsed(module)
    if root is None:
      continue
    scopes = list(root.all())
    trained = _trained(scopes)
    if not trained:
      continue
    made = _made_variables(scopes)
    lines: Set[int] = set()
    for scope in scopes:
      for node in scope.nodes:
        pair = _masked_weights.product(node)
        if pair is None or getattr(node, "lineno", 0) in lines:
          continue
        hit = _judged(analysis, node, pair, scope, trained, made, scopes)
        if hit is not None:
          lines.add(hit[0].lineno)
          found.append(hit)
  return found


def _judged(analysis: Analysis, node: ast.AST,
            pair: Tuple[ast.expr, ast.expr], scope: _scopes.Scope,
            trained: Set[str], made: Set[str], scopes: List[_scopes.Scope]
            ) -> Optional[Hit]:
  if not isinstance(node, ast.expr):
    return None  # `x *= m` writes in place: no forward product.
  for side, mask in (pair, pair[::-1]):
    variable = _trained_variable(side, scope, trained, made, node.lineno, 0)
    if variable is None:
      continue
    if not _fixed_mask(analysis, mask, node, scope, trained, scopes):
      continue
    if not _forward(analysis, node, scope, scopes, 0):
      continue
    if _masked_weights._written_or_stopped(node, scope, analysis) or (
        _masked_weights.evaluation_only(node, scope, analysis)):
      return None
    return node, scope, variable
  return None


def _trained(scopes: List[_scopes.Scope]) -> Set[str]:
  """The dotted names of the variables the module's steps list (`var_list
  =[modifier]`, `self.var_list = [self.w]`, `[tensors['pert']]` of a dict
  `{'pert': perturb}`)."""
  listed: List[_Listed] = []
  assigned: Dict[str, List[_Listed]] = {}
  keyed: Dict[str, List[str]] = {}
  for scope in scopes:
    for node in scope.nodes:
      if isinstance(node, ast.Assign) and len(node.targets) == 1:
        name = _names.dotted(node.targets[0])
        if name is not None:
          assigned.setdefault(name, []).append((node.value, scope,
                                                node.lineno))
      elif isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values):
          spelled = _names.dotted(value) if value is not None else None
          if isinstance(key, ast.Constant) and isinstance(
              key.value, str) and spelled is not None:
            keyed.setdefault(key.value, []).append(spelled)
      elif isinstance(node, ast.Call) and _names.call_name(node) in _STEPS:
        given = next((k.value for k in node.keywords
                      if k.arg == "var_list"), None)
        if given is None and _names.call_name(node) != "minimize" and len(
            node.args) > 1:
          given = node.args[1]
        if given is not None:
          listed.append((given, scope, node.lineno))
  found: Set[str] = set()
  for given, home, line in listed:
    values = [(given, home, line)]
    spelled = _names.dotted(given)
    if spelled is not None and spelled in assigned:
      values = assigned[spelled]
    for value, place, at in values:
      elements = value.elts if isinstance(value, (ast.List, ast.Tuple)) \
          else [value]
      if len(elements) > 4:
        continue
      for element in elements:
        name = _names.dotted(element)
        bound = _values(name, place, at) if name is not None else []
        if name is not None and not (bound and not (isinstance(
            bound[-1], ast.Call) and _names.call_name(bound[-1]) in (
                _MAKERS))):
          found.add(name)  # Not a value bound to the name since.
        elif isinstance(element, ast.Subscript) and isinstance(
            element.slice, ast.Constant) and isinstance(
                element.slice.value, str):
          found.update(keyed.get(element.slice.value, []))
  return found


def _made_variables(scopes: List[_scopes.Scope]) -> Set[str]:
  """The dotted names the module assigns a new variable."""
  made: Set[str] = set()
  for scope in scopes:
    for node in scope.nodes:
      if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
          isinstance(node.value, ast.Call)) and _names.call_name(
              node.value) in _MAKERS:
        name = _names.dotted(node.targets[0])
        if name is not None:
          made.add(name)
  return made


def _values(name: str, scope: _scopes.Scope, before: int) -> List[ast.expr]:
  """What `name` (a local name or `self.x`) is assigned in `scope` before
  the line `before`."""
  return [n.value for n in scope.nodes if isinstance(n, ast.Assign) and (
      len(n.targets) == 1) and _names.dotted(n.targets[0]) == name and (
          n.lineno < before)]


def _trained_variable(node: ast.expr, scope: _scopes.Scope,
                      trained: Set[str], made: Set[str], before: int,
                      depth: int) -> Optional[ast.expr]:
  """The listed variable `node` is made of, element by element (`tanh(
  modifier + simg) / 2`, `0.5 * (tanh(w) + 1) - x`), else None."""
  if depth > 3:
    return None
  if isinstance(node, (ast.Name, ast.Attribute)):
    name = _names.dotted(node)
    if name is None:
      return None
    values = _values(name, scope, before)
    if name in trained and name in made and (not values or isinstance(
        values[-1], ast.Call) and _names.call_name(values[-1]) in _MAKERS):
      return node  # The variable itself, not a value since bound to it.
    for value in values[-1:]:
      return _trained_variable(value, scope, trained, made,
                               getattr(value, "lineno", before), depth + 1)
    return None
  if isinstance(node, ast.BinOp) and isinstance(node.op, (
      ast.Add, ast.Sub, ast.Mult, ast.Div)):
    return _trained_variable(node.left, scope, trained, made, before,
                             depth) or _trained_variable(
                                 node.right, scope, trained, made, before,
                                 depth)
  if isinstance(node, ast.UnaryOp):
    return _trained_variable(node.operand, scope, trained, made, before,
                             depth)
  if isinstance(node, ast.Call) and _names.call_name(node) in _ELEMENTWISE \
      and node.args:
    return _trained_variable(node.args[0], scope, trained, made, before,
                             depth)
  return None


def _peeled(mask: ast.expr) -> Tuple[ast.expr, bool]:
  """(what a mask factor reads, whether it is the complement `1 - m`)."""
  complement = False
  for _ in range(4):
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.Sub) and (
        isinstance(mask.left, ast.Constant)) and mask.left.value in (1, 1.0):
      mask, complement = mask.right, True
    elif isinstance(mask, ast.Call) and _names.call_name(mask) in (
        _ELEMENTWISE) and mask.args:
      mask = mask.args[0]
    elif isinstance(mask, (ast.List, ast.Tuple)) and mask.elts:
      mask = mask.elts[0]
    elif isinstance(mask, ast.BinOp) and isinstance(
        mask.op, ast.Mult) and isinstance(mask.left, ast.List):
      mask = mask.left  # `[m] * 3` stacked.
    elif isinstance(mask, ast.Subscript):
      mask = mask.value
  return mask, complement


def _fixed_mask(analysis: Analysis, mask: ast.expr, node: ast.expr,
                scope: _scopes.Scope, trained: Set[str],
                scopes: List[_scopes.Scope]) -> bool:
  """Whether a factor is a mask fixed while the variable trains, and the
  code says it is a mask (the statement's structure read last: most
  products are no mask's)."""
  root, complement = _peeled(mask)
  name = _names.dotted(root)
  if name is None or isinstance(root, ast.Name) and (
      root.id in scope.params) or name in trained:
    return False
  if drawn(mask, scope) or made_here(mask, scope) or structural(
      mask, scope) or not _fixed_origin(analysis, root, name, scope,
                                        trained, scopes, 0):
    return False
  if complement or "mask" in name.lower():
    return True
  statement = analysis.order(scope).statement_of(node)
  return statement is not None and (_complemented(statement, name) or (
      _under_mask_flag(analysis, statement, scope)))


def _complemented(statement: ast.stmt, name: str) -> bool:
  """Whether the statement also reads `1 - name` (`(1 - m) * original`)."""
  return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and (
      isinstance(n.left, ast.Constant)) and _names.dotted(n.right) == name
             for n in ast.walk(statement))


def _under_mask_flag(analysis: Analysis, node: ast.AST,
                     scope: _scopes.Scope) -> bool:
  """Whether `node` is inside `if self.use_mask:`."""
  order = analysis.order(scope)
  parent = order.parent(node)
  while parent is not None and not isinstance(parent, (
      ast.FunctionDef, ast.AsyncFunctionDef)):
    if isinstance(parent, ast.If) and "mask" in ast.unparse(
        parent.test).lower():
      return True
    parent = order.parent(parent)
  return False


def _fixed_origin(analysis: Analysis, root: ast.expr, name: str,
                  scope: _scopes.Scope, trained: Set[str],
                  scopes: List[_scopes.Scope], depth: int) -> bool:
  """Whether every value `name` is assigned is a fixed mask's: a
  placeholder of a fixed non-scalar shape no draw feeds, a variable no
  step trains that a placeholder or an array is assigned, an array or an
  image loaded from a file."""
  places = [scope] if isinstance(root, ast.Name) else scopes
  values = [(v, place) for place in places for v in _values(
      name, place, 10 ** 9) if not name.startswith("self.") or (
          place.cls is scope.cls)]
  if not values or depth > 2:
    return False
  for value, place in values:
    peeled, _ = _peeled(value)
    if isinstance(peeled, (ast.Name, ast.Attribute)) and peeled is not value:
      inner = _names.dotted(peeled)
      if inner is None or inner in trained or not _fixed_origin(
          analysis, peeled, inner, place, trained, scopes, depth + 1):
        return False
      continue
    if not isinstance(value, ast.Call):
      return False
    called = _names.call_name(value)
    if called in _PLACEHOLDERS:
      if not _fixed_shape(value) or isinstance(root, ast.Name) and fed_anew(
          root, place, analysis):
        return False
    elif called in _MAKERS:
      if not _assigned_elsewhere(name, scopes):
        return False
    elif not _loaded(analysis, value, place):
      return False
  return True


def _fixed_shape(call: ast.Call) -> bool:
  """Whether a placeholder's shape has no batch axis (`None`) and is no
  scalar (`[]`): one mask for the whole run, of the input's shape."""
  shape = next((k.value for k in call.keywords if k.arg == "shape"),
               call.args[1] if len(call.args) > 1 else None)
  if shape is None:
    return False
  if isinstance(shape, (ast.List, ast.Tuple)) and not shape.elts:
    return False
  return not any(isinstance(n, ast.Constant) and n.value is None
                 for n in ast.walk(shape))


def _assigned_elsewhere(name: str, scopes: List[_scopes.Scope]) -> bool:
  """Whether the module assigns the variable a value (`tf.assign(canchange,
  assign_canchange)`) that is no random draw: a mask set for each run."""
  for scope in scopes:
    for node in scope.nodes:
      if isinstance(node, ast.Call) and _names.call_name(node) == "assign":
        receiver = node.func.value if isinstance(node.func, ast.Attribute) \
            and _names.dotted(node.func.value) not in {
                "tf", "tf.compat.v1"} else (node.args[0] if node.args
                                            else None)
        if receiver is not None and _names.dotted(receiver) == name and (
            node.args) and not drawn(node.args[-1], scope):
          return True
  return False


def _loaded(analysis: Analysis, call: ast.Call, scope: _scopes.Scope
            ) -> bool:
  """Whether a call loads an array or an image (`np.load`, a project
  function that opens a file)."""
  if _names.call_name(call) in _LOADS:
    return True
  function = analysis.flow.callee(call, scope)
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _LOADS
             for n in ast.walk(function)) and not any(
                 isinstance(n, ast.Call) and "random" in (
                     _names.dotted(n.func) or "") for n in ast.walk(function))


def _forward(analysis: Analysis, node: ast.AST, scope: _scopes.Scope,
             scopes: List[_scopes.Scope], depth: int) -> bool:
  """Whether a value goes on into a model or an op of the forward pass
  (`model.predict(newimg)`, `tf.math.add(cloud, perturb_masked)`), not only
  into a reduction (a loss mask), a summary, or a weight's reader."""
  order = analysis.order(scope)
  current: ast.AST = node
  parent = order.parent(current)
  while isinstance(parent, (ast.BinOp, ast.UnaryOp)) or isinstance(
      parent, ast.Call) and _names.call_name(parent) in _ELEMENTWISE and (
          parent.func is not current):
    current, parent = parent, order.parent(parent)
  if isinstance(parent, ast.Call) and parent.func is not current:
    called = _names.call_name(parent)
    return not (called in _NOT_FORWARD or called in _masked_weights._READERS
                or "loss" in called.lower() or "summary" in (
                    _names.dotted(parent.func) or ""))
  if isinstance(parent, ast.keyword):
    return False
  if not isinstance(parent, ast.Assign) or len(parent.targets) != 1 or (
      depth > 3):
    return False
  name = _names.dotted(parent.targets[0])
  if name is None:
    return False
  places = scopes if name.startswith("self.") else [scope]
  for place in places:
    if name.startswith("self.") and place.cls is not scope.cls:
      continue
    for read in place.nodes:
      if isinstance(read, (ast.Name, ast.Attribute)) and isinstance(
          read.ctx, ast.Load) and _names.dotted(read) == name and (
              place is not scope or read.lineno > parent.lineno) and (
                  _forward(analysis, read, place, scopes, depth + 1)):
        return True
  return False
