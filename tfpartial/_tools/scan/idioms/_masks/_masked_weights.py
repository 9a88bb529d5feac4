"""A trainable variable multiplied in the forward pass by a fixed 0/1 mask
(`masked_kernel = self.kernel * self.mask` in a layer's `call`, `W *
prune` with a placeholder fed the same array each step, `table *=
pe_mask` on an embedding table): where the mask is 0 the element is
replaced by the constant 0, its gradient is exactly 0 (d(k*m)/dk = m) and
it never trains while the rest of the variable does. The settled
"tables joined from constants" case of `stop-gradient-mix`
(`k * m == m * k + (1 - m) * 0`).

Not this: a mask on activations (dropout, attention, sequence or loss
masks: no variable is multiplied), a mask drawn at random or compared
anew (DropConnect, magnitude pruning recomputed from the weights in the
step), a trainable gate or scale, a product inside `stop_gradient` (a
straight-through estimator) or written back into the variable
(`weight-remask`); a mask computed from a trainable variable, fed a
random draw, compared from a MADE's degrees or re-ranked while the model
trains (RigL, SET, slimming); a scalar variable; a product read only to
evaluate or serve."""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _cudnn_params
from tfpartial._tools.scan.idioms._masks import _evaluated
from tfpartial._tools.scan.idioms._masks import _pruning_masks
from tfpartial._tools.scan.idioms._masks._mask_kept import (
    fed, fed_anew, fixed, kept_as_made, ones_unwritten, trained)
from tfpartial._tools.scan.idioms._masks._mask_origins import (
    assigned, bindings, built_in_code, drawn_connectivity, made_here,
    structural)

# A product with a factor named for a mask or a pruning, by its line.
_LINE = re.compile(r"(\*=?[ \t]*\(?[ \t]*[\w.\[\]'\"]*(?:mask|prune)|"
                   r"(?:mask|prune)\w*\]?[ \t]*\*|multiply\()", re.I)


# What makes a mask known by what it is, not by its name: a variable kept
# from training (`trainable=False`), an array loaded from a file.
_KEPT = re.compile(r"trainable\s*=\s*False")


# Searched where a word starts (`_project.at_word_start`).
_LOADED = re.compile(r"(?:np|numpy)\.(?:load|loadtxt|genfromtxt|fromfile)\(")


_ANY_PRODUCT = re.compile(r"[\w\])][ \t]*\*=?[ \t]*[\w(]|multiply\(")


# Where a product is written back into its variable, not read forward.
_WRITES = {"assign", "assign_sub", "assign_add", "set_weights", "set_value",
           "scatter_update", "stop_gradient", "load"}


def masked_weights(analysis: Analysis
                   ) -> List[Tuple[ast.expr, _scopes.Scope, ast.expr]]:
  """(the product, its scope, the variable) of each variable multiplied
  by a fixed mask in the forward pass."""
  found: List[Tuple[ast.expr, _scopes.Scope, ast.expr]] = []
  project = analysis.project
  for module in project.modules:  # A layer's module may hold no step.
    text = module.source.text
    kept = _KEPT.search(text) is not None or _project.at_word_start(
        _LOADED, text)  # A mask by what it is.
    if not kept and "mask" not in text and "prune" not in text and (
        "Mask" not in text):
      continue
    lines = [number for number, line in enumerate(text.splitlines(), 1)
             if "*" in line or "multiply(" in line
             if kept and _ANY_PRODUCT.search(line) or _LINE.search(line)]
    if not lines or module.is_test or project.parsed(module) is None:
      continue
    wanted = set(lines)
    for scope in project.scopes_at(module, lines):
      for node in scope.nodes:
        if getattr(node, "lineno", 0) not in wanted:
          continue
        pair = product(node)
        if pair is None:
          continue
        hit = _judged(analysis, node, pair, scope)
        if hit is not None and not any(_pruning_masks.recomputed(
            analysis, module, factor, scope, _reader(analysis))
                                       for factor in pair):
          found.append((hit, scope, _variable_of(pair, analysis, scope)))
  return found


def product(node: ast.AST) -> Optional[Tuple[ast.expr, ast.expr]]:
  """The two factors of `a * b`, `multiply(a, b)`, `a *= b`."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
    return node.left, node.right
  if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Mult):
    return node.target, node.value
  if isinstance(node, ast.Call) and _names.call_name(node) in {
      "multiply", "mul"} and len(node.args) + len(node.keywords) in (2, 3) and (
          len(node.args) >= 2) and all(k.arg == "name" for k in node.keywords):
    third = node.args[2:]  # The op's name; NumPy's `out` (a write) not.
    if not third or isinstance(third[0], ast.Constant) and isinstance(
        third[0].value, str) or (_names.dotted(node.func) or "").startswith(
            "tf."):
      return node.args[0], node.args[1]
  return None


def _judged(analysis: Analysis, node: ast.AST,
            pair: Tuple[ast.expr, ast.expr], scope: _scopes.Scope
            ) -> Optional[ast.expr]:
  """The node to report when `node` multiplies a trainable variable by a
  fixed mask and the product is read forward, else None."""
  flow = analysis.flow
  for weight, mask in (pair, pair[::-1]):
    if not _plain(weight, scope) or not _plain(mask, scope) or not (
        _spelled(mask, scope) or kept_as_made(mask, scope, analysis)) or (
            ones_unwritten(mask, scope, analysis)):
      continue
    once = _evaluated.once(mask, weight, scope)
    if not once and (made_here(mask, scope) or drawn_connectivity(
        mask, scope, analysis)) or structural(
            mask, scope) or built_in_code(mask, scope, analysis):
      continue  # Read before any flow: most products are activations.
    labels = flow.labels(weight, scope)
    if "var" not in labels and not once or "shadow" in labels or (
        "grad" in labels or "mask" in labels):
      continue
    if not once and (not fixed(mask, scope, analysis) or trained(
        mask, scope, analysis) or fed_anew(mask, scope, analysis) or (
            _cudnn_params.packs_gates(mask, scope, _reader(analysis),
                                      _made_of))):
      continue
    if _written_or_stopped(node, scope, analysis) or not (
        once or _read_as_weight(node, scope, analysis)) or _scalar(
            weight, scope) or evaluation_only(node, scope, analysis):
      return None
    target = node.target if isinstance(node, ast.AugAssign) else node
    assert isinstance(target, ast.expr)
    return target
  return None


def _scalar(weight: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether the variable is made a scalar (`get_variable("K", shape=())`,
  `tf.Variable(1.0)`): it scales the mask; none of its elements is
  replaced."""
  if not isinstance(weight, ast.Name):
    return False
  values = [d.value for d in bindings(weight.id, scope)]
  for value in values:
    if not isinstance(value, ast.Call):
      return False
    shape = next((k.value for k in value.keywords if k.arg == "shape"),
                 None)
    first = value.args[0] if value.args else None
    if not (isinstance(shape, (ast.Tuple, ast.List)) and not shape.elts or (
        _names.call_name(value) == "Variable" and isinstance(
            first, ast.Constant) and isinstance(first.value, (int, float)))):
      return False
  return bool(values)


def evaluation_only(node: ast.AST, scope: _scopes.Scope,
                    analysis: Analysis) -> bool:
  """Whether `node` runs only to evaluate or serve: in a function named
  so (`evaluate_pruned`, `build_serving`) or in the branch of `if
  training:` that does not train."""
  words = set(scope.name.lower().split("_"))
  if words & _EVALUATION and "train" not in words:
    return True
  order = analysis.order(scope)
  child: ast.AST = node
  parent = order.parent(node)
  while parent is not None and not isinstance(parent, (
      ast.FunctionDef, ast.AsyncFunctionDef)):
    if isinstance(parent, ast.If) and "train" in ast.unparse(
        parent.test).lower():
      negated = isinstance(parent.test, ast.UnaryOp) and isinstance(
          parent.test.op, ast.Not)
      if (child in parent.orelse) != negated:
        return True
    child, parent = parent, order.parent(parent)
  for statement in (scope.node.body if isinstance(scope.node, (
      ast.FunctionDef, ast.AsyncFunctionDef)) else []):
    if statement.lineno >= getattr(node, "lineno", 0):
      break
    if isinstance(statement, ast.If) and "train" in ast.unparse(
        statement.test).lower() and statement.body and isinstance(
            statement.body[-1], ast.Return) and not statement.orelse:
      return not (isinstance(statement.test, ast.UnaryOp))
  return False


# Words of a function's name that say it evaluates or serves.
_EVALUATION = {"eval", "evaluate", "evaluation", "test", "predict",
               "prediction", "infer", "inference", "valid", "validate",
               "validation", "serve", "serving", "export"}


def _plain(node: ast.expr, scope: _scopes.Scope) -> bool:
  """A name or attribute (or an element of one) that is no parameter of
  the function: a mask passed in is the batch's (a sequence's, an
  attention's), a weight passed in is a helper's."""
  while isinstance(node, ast.Subscript):
    node = node.value
  if not isinstance(node, (ast.Name, ast.Attribute)):
    return False
  return not (isinstance(node, ast.Name) and node.id in scope.params)


def _spelled(mask: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether a factor is spelled as a mask or a pruning, or is a name
  made by a placeholder."""
  text = ast.unparse(mask).lower()
  if "mask" in text or "prune" in text:
    return True
  return isinstance(mask, ast.Name) and fed(mask.id, scope)


def _read_as_weight(node: ast.AST, scope: _scopes.Scope,
                    analysis: Analysis) -> bool:
  """Whether the product is read as a weight: a matmul's, a convolution's
  or a lookup's operand, itself or through the name (or attribute) it is
  kept under in its function or its class; not added to an input (a
  patch pasted into an image: an attack's perturbation, no model's
  weight)."""
  order = analysis.order(scope)
  current: ast.AST = node
  parent = order.parent(current)
  while isinstance(parent, ast.Call) and _names.call_name(parent) in (
      _THROUGH):
    current, parent = parent, order.parent(parent)
  if _reads(parent, current):
    return True
  kept: Optional[str] = None
  if isinstance(node, ast.AugAssign):
    kept = _names.dotted(node.target)
  elif isinstance(parent, ast.Assign) and len(parent.targets) == 1:
    kept = _names.dotted(parent.targets[0])
  if kept is None:
    return False
  places = [scope]
  if kept.startswith("self.") and scope.parent is not None:
    places += [s for s in scope.parent.all() if s is not scope]
  cudnn = scope.cls is not None and _cudnn_params.cudnn_layer(scope.cls)
  return any(_reads(n, n, kept) or cudnn and _cudnn_params.run_as_params(
      n, kept)
             for place in places for n in place.nodes
             if isinstance(n, (ast.Call, ast.BinOp)))


def _reads(reader: Optional[ast.AST], operand: ast.AST,
           name: Optional[str] = None) -> bool:
  """Whether `reader` reads `operand` (or the name `name`) as a weight."""
  if isinstance(reader, ast.BinOp) and isinstance(reader.op, ast.MatMult):
    operands = [reader.left, reader.right]
  elif isinstance(reader, ast.Call) and _names.call_name(reader) in _READERS:
    operands = [*reader.args, *(k.value for k in reader.keywords)]
  else:
    return False
  if name is None:
    return any(o is operand for o in operands)
  return any(_names.dotted(o) == name or isinstance(o, ast.Subscript) and (
      _names.dotted(o.value) == name) for o in operands)


# What reads a weight: a product, a convolution, a lookup.
_READERS = {"matmul", "tensordot", "einsum", "dot", "conv1d", "conv2d",
            "conv3d", "depthwise_conv2d", "atrous_conv2d", "conv2d_transpose",
            "embedding_lookup", "embedding_lookup_sparse", "gather",
            "safe_embedding_lookup_sparse", "nce_loss", "sampled_softmax_loss",
            "xw_plus_b", "batch_matmul", "sparse_matmul", "bias_add",
            # The generated ops' spellings (`gen_math_ops.mat_mul`).
            "mat_mul", "batch_mat_mul", "batch_mat_mul_v2"}


# What passes a weight on unchanged in kind.
_THROUGH = {"transpose", "cast", "identity", "reshape", "expand_dims",
            "convert_to_tensor"}


def _variable_of(pair: Tuple[ast.expr, ast.expr], analysis: Analysis,
                 scope: _scopes.Scope) -> ast.expr:
  first, second = pair
  return first if "var" in analysis.flow.labels(first, scope) else second


def _reader(analysis: Analysis) -> _cudnn_params.Values:
  """`assigned` over this analysis."""
  return lambda mask, scope: assigned(mask, scope, analysis)


def _made_of(value: ast.expr, scope: _scopes.Scope) -> List[ast.expr]:
  """What makes a value: a name's assignments, else itself."""
  return [value] if not isinstance(value, ast.Name) else [
      d.value for d in bindings(value.id, scope)[:4] if d.value is not None]


def _written_or_stopped(node: ast.AST, scope: _scopes.Scope,
                        analysis: Analysis) -> bool:
  """Whether the product is written back into a variable (a re-mask), is
  in a `stop_gradient` (a straight-through estimator), a constraint, or a
  statement that also stops a gradient."""
  order = analysis.order(scope)
  current: Optional[ast.AST] = node
  while current is not None and not isinstance(current, ast.stmt):
    parent = order.parent(current)
    if isinstance(parent, ast.Call) and _names.call_name(parent) in _WRITES:
      return True
    if isinstance(parent, ast.keyword) and (parent.arg or "").endswith(
        "constraint"):
      return True
    current = parent
  statement = current
  if statement is not None and any(
      isinstance(n, ast.Call) and _names.call_name(n) == "stop_gradient"
      for n in ast.walk(statement)):
    return True
  info = scope.cls
  return info is not None and any(
      b.endswith(("Constraint", "Callback", "Optimizer")) for b in info.bases)
