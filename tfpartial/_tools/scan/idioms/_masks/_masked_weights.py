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
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _cudnn_params
from tfpartial._tools.scan.idioms._masks import _evaluated
from tfpartial._tools.scan.idioms._masks import _pruning_masks
from tfpartial._tools.scan.idioms._masks import _whole_writes

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
# Methods that run with each step: a mask written there is made anew.
_PER_STEP = re.compile(r"^(call|__call__|train_step|_?update\w*|step|"
                       r"on_(train_)?batch_\w+)$")
# What chooses a mask anew: a comparison, a draw.
_ANEW = {"greater", "less", "greater_equal", "less_equal", "equal",
         "not_equal", "top_k", "argsort", "sort", "percentile", "quantile"}


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
        _spelled(mask, scope) or _kept(mask, scope, analysis)) or (
            _ones_unwritten(mask, scope, analysis)):
      continue
    once = _evaluated.once(mask, weight, scope)
    if not once and (_made_here(mask, scope) or _drawn_connectivity(
        mask, scope, analysis)) or _structural(
            mask, scope) or _built_in_code(mask, scope, analysis):
      continue  # Read before any flow: most products are activations.
    labels = flow.labels(weight, scope)
    if "var" not in labels and not once or "shadow" in labels or (
        "grad" in labels or "mask" in labels):
      continue
    if not once and (not _fixed(mask, scope, analysis) or _trained(
        mask, scope, analysis) or _fed_anew(mask, scope, analysis) or (
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
  values = [d.value for d in _defs(weight.id, scope)]
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
  return isinstance(mask, ast.Name) and _fed(mask.id, scope)


def _fed(name: str, scope: _scopes.Scope) -> bool:
  """Whether a name is made by a placeholder (once per scope and name)."""
  return scope.once((_fed, name, 0), lambda: any(
      isinstance(d.value, ast.Call) and _names.call_name(d.value) == (
          "placeholder") for d in _defs(name, scope)))


def _defs(name: str, scope: _scopes.Scope) -> Sequence[_scopes.Def]:
  """The assignments of `name` in the nearest scope that has any (the
  scope's own list: read it, never change it)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and name not in place.defs:
    place = place.parent
  return place.defs[name] if place is not None else ()


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


def _fixed(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether `mask` is a 0/1 mask fixed while the model trains: named for
  a mask (a non-trainable variable, an attribute, a loaded array) or a
  constant made of ones and zeros, or a placeholder of a weight's shape;
  not drawn at random, not compared here, not a trainable gate, not
  written by a method that runs with each step."""
  if _evaluated.fed(mask, scope, analysis):
    return True  # Its shape may read the function's parameters.
  if _evaluated.fed_otherwise(mask, scope, analysis):
    return False
  flow = analysis.flow
  labels = flow.labels(mask, scope)
  if "random" in labels or "grad" in labels or "param" in labels or (
      "var" in labels and "shadow" not in labels):
    return False  # A draw, a gradient, the batch's mask, a trainable gate.
  if "mask" in labels or _kept(mask, scope, analysis):
    return not _rewritten_each_step(mask, scope) and not (
        regrown(mask, scope, analysis))
  return _placeholder_mask(mask, scope)


def _trained(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis,
             depth: int = 0) -> bool:
  """Whether a mask is computed from a trainable variable (itself or
  through the local names it reads): a learned gate (`sigmoid(self.
  mask_logits)`), the top-k of trainable scores passed straight through
  (movement pruning)."""
  flow = analysis.flow
  for item in _data(mask):
    if not isinstance(item, (ast.Name, ast.Attribute)) or isinstance(
        item, ast.Name) and item.id in scope.params:
      continue
    labels = flow.labels(item, scope)
    if ("var" in labels or "vararith" in labels or "sg" in labels) and (
        "shadow" not in labels):
      return True
    if isinstance(item, ast.Name) and depth < 2 and any(
        _trained(d.value, scope, analysis, depth + 1)
        for d in scope.defs.get(item.id, []) if d.value is not None):
      return True
  return False


def _reader(analysis: Analysis) -> _cudnn_params.Values:
  """`_values` over this analysis."""
  return lambda mask, scope: _values(mask, scope, analysis)


def _made_of(value: ast.expr, scope: _scopes.Scope) -> List[ast.expr]:
  """What makes a value: a name's assignments, else itself."""
  return [value] if not isinstance(value, ast.Name) else [
      d.value for d in _defs(value.id, scope)[:4] if d.value is not None]


def _fed_anew(mask: ast.expr, scope: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether a placeholder mask is fed a random draw (`feed_dict={drop_mask:
  np.random.binomial(1, p, shape)}`): DropConnect from NumPy, a new mask
  each step."""
  if not isinstance(mask, ast.Name) or not _fed(mask.id, scope):
    return False
  module = analysis.module(scope)
  root = analysis.project.parsed(module)
  if root is None:
    return False
  for place in root.all():
    for node in place.nodes:
      if not isinstance(node, ast.Dict):
        continue
      for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Name) and key.id == mask.id and _drawn(
            value, place):
          return True
  return False


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


def _drawn(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` (or a local name it reads) draws at random."""
  return _through_names(node, scope, lambda item: _random(item) or None,
                        _drawn)


def _drawn_connectivity(mask: ast.expr, scope: _scopes.Scope,
                        analysis: Analysis) -> bool:
  """Whether a mask (a name, or an attribute of `self`) is only ever
  assigned a random draw, made once where it is assigned (`W1_mask =
  tf.constant(np.random.binomial(1, 0.34, [100, 9]))`), and nothing
  writes it: a fixed random connectivity, the sparsity of an
  architecture, which neither training nor a pruning criterion chose."""
  values = _values(mask, scope, analysis)[:8]
  return bool(values) and all(_drawn(v, home) for v, home in values) and (
      not _written(mask, scope, analysis))


def _made_here(node: ast.AST, scope: _scopes.Scope) -> bool:
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

  return _through_names(node, scope, here, _made_here)


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


def _structural(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a mask is a triangle or a band (`np.tril(ones, -1)` on an LU
  factor, a MADE or PixelCNN ordering): the shape of a parametrization,
  whose masked elements are no parameter of it."""
  return _through_names(node, scope, lambda item: isinstance(
      item, ast.Call) and _shape_named(_names.call_name(item)) or None,
                        _structural)


def _shape_named(name: Optional[str]) -> bool:
  """Whether a call makes a triangle or a band: TensorFlow's and NumPy's
  own, or a helper named for one (a Clockwork RNN's `block_triu_mask`)."""
  return name is not None and (name in _SHAPES or bool(
      _SHAPE_WORDS & set(name.lower().split("_"))))


def shaped(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
           ) -> bool:
  """Whether a mask (a name, or an attribute of `self` through what its
  class assigns it) is a triangle or a band: `_structural`."""
  if _structural(mask, scope):
    return True
  spelled = _names.dotted(mask)
  owner: Optional[_scopes.Scope] = scope
  while owner is not None and owner.cls is None:
    owner = owner.parent
  if spelled is None or not spelled.startswith("self.") or owner is None or (
      owner.cls is None):
    return False
  return any(_structural(value, home)
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
  return isinstance(mask, ast.expr) and (_structural(mask, scope) or (
      _built_in_code(mask, scope, analysis)) and not _picked_rows(
          mask, scope, analysis))


def _picked_rows(mask: ast.expr, scope: _scopes.Scope,
                 analysis: Analysis) -> bool:
  """Whether a mask built from ones is zeroed at positions spelled as
  numbers (`m[0] = 0`, `m[:100] = 0`): rows a person picked (a padding
  row, a task's rows), not ones the shape places (`m[c - dw:c + dw + 1]
  = 0`, `m[center + 1:] = 0`)."""
  places = [(mask, scope)] + [(v, home) for v, home in _values(
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


def _built_in_code(mask: ast.expr, scope: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether a mask is a pattern the code builds from ones and zeros
  (`m = np.ones(k * k); m[center + 1:] = 0; self.mask = tf.constant(m)`:
  a PixelCNN's causal kernel, an architecture's shape), not one that
  training or data chose (a variable set between rounds, a placeholder
  fed, an array loaded from a file)."""
  values = _values(mask, scope, analysis)
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
      values += _values(packed, home, analysis)[:4]
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
        values += [(d.value, home) for d in _defs(item.id, home)[:4]]
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


def _values(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
            ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """What a mask's name, or its attribute of `self` (an element of
  either: `self.w_mask[i]`), is assigned, with where."""
  while isinstance(mask, ast.Subscript):
    mask = mask.value
  spelled = _names.dotted(mask)
  if isinstance(mask, ast.Name):
    return [(d.value, scope) for d in _defs(mask.id, scope)
            if d.value is not None]
  if spelled is not None and spelled.count(".") == 1 and (
      spelled.startswith("self.")):
    owner: Optional[_scopes.Scope] = scope
    while owner is not None and owner.cls is None:
      owner = owner.parent
    if owner is not None and owner.cls is not None:
      return analysis.project.attribute(owner.cls, spelled)
  return []


def _kept(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether a mask is, whatever its name, a 0/1 tensor data or training
  chose: an array loaded from a file (`np.load`), or a non-trainable
  variable made of ones (`add_weight(..., initializer="ones",
  trainable=False)`) that the code writes somewhere (a pruning round); not
  a scalar, not a variable of ones nothing writes (it masks nothing)."""
  values = _values(mask, scope, analysis)[:8]
  if not values:
    return False
  for value, _ in values:
    if isinstance(value, ast.Call) and _names.call_name(value) in _LOADS and (
        (_names.dotted(value.func) or "").startswith(("np.", "numpy."))):
      continue
    if not (isinstance(value, ast.Call) and _names.call_name(value) in (
        _VARIABLES) and _ones_kept(value)):
      return False
  return all(isinstance(v, ast.Call) and _names.call_name(v) in _LOADS
             for v, _ in values) or _written(mask, scope, analysis) or (
                 _whole_writes.written_whole(
                     scope, analysis, _whole_writes.MADE, run=True))


def _ones_unwritten(mask: ast.expr, scope: _scopes.Scope,
                    analysis: Analysis) -> bool:
  """Whether a mask, whatever its name, is a non-trainable variable of
  ones kept in a notebook that nothing writes (by name, by a whole
  model's `set_weights` or a restore): all ones, it masks nothing. Only
  in a notebook: nothing imports one, so every write of its layers is in
  sight; a module's layer may be pruned by code that imports it."""
  if not analysis.module(scope).path.endswith(".ipynb"):
    return False
  values = _values(mask, scope, analysis)[:8]
  return bool(values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _VARIABLES and (
          _ones_kept(v)) for v, _ in values) and not _written(
              mask, scope, analysis) and not _whole_writes.written_whole(
                  scope, analysis, _whole_writes.ANY)


_LOADS = {"load", "loadtxt", "genfromtxt", "fromfile"}
_VARIABLES = {"Variable", "VariableV1", "get_variable", "add_weight",
              "add_variable"}


def _ones_kept(call: ast.Call) -> bool:
  """`Variable(tf.ones(shape), trainable=False)`, `add_weight(shape=s,
  initializer="ones", trainable=False)`, `get_variable(name, shape,
  initializer=constant_initializer(1.0), trainable=False)`."""
  keywords = {k.arg: k.value for k in call.keywords if k.arg}
  trainable = keywords.get("trainable")
  if not (isinstance(trainable, ast.Constant) and trainable.value is False):
    return False
  first = keywords.get("initial_value", keywords.get("initializer"))
  if first is None and _names.call_name(call) in {"Variable", "VariableV1"}:
    first = call.args[0] if call.args else None
  if isinstance(first, ast.Constant):
    return first.value in ("ones", "Ones")
  if not isinstance(first, ast.Call):
    return False
  name = _names.call_name(first)
  if name in {"ones", "ones_initializer", "Ones"}:
    return True
  value = first.args[0] if first.args else None
  return name in {"Constant", "constant_initializer"} and isinstance(
      value, ast.Constant) and value.value == 1


def _written(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
             ) -> bool:
  """Whether the project writes a mask variable (`layer.mask.assign(m)`,
  `tf.assign(mask, m)`) by the attribute or name it is kept under."""
  key = _mask_key(mask, scope)
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


def _data(node: ast.AST) -> List[ast.AST]:
  """The nodes of an expression its values come from: not an index
  (`masks[i]`), not a length or a range (`range(len(outputs))`)."""
  found: List[ast.AST] = []
  stack: List[ast.AST] = [node]
  while stack:
    item = stack.pop()
    found.append(item)
    if isinstance(item, ast.Subscript):
      stack.append(item.value)
    elif not (isinstance(item, ast.Call) and _names.call_name(item) in {
        "len", "range", "shape", "enumerate"}):
      stack.extend(ast.iter_child_nodes(item))
  return found


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


def _rewritten_each_step(mask: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether a mask attribute (`self.mask`) is written by a method of its
  class that runs with each step (`call`, `train_step`, a batch hook):
  pruning recomputed as the model trains."""
  spelled = _names.dotted(mask)
  owner = scope
  while owner.parent is not None and owner.cls is None:
    owner = owner.parent
  if spelled is None or not spelled.startswith("self.") or owner.cls is None:
    return False
  root = owner
  while root.parent is not None:
    root = root.parent
  for method in root.all():
    if method.cls is not owner.cls or not _PER_STEP.match(method.name):
      continue
    for node in method.nodes:
      if isinstance(node, ast.Call) and _names.call_name(node) in {
          "assign", "assign_sub", "assign_add"} and any(
              n is not None and _names.dotted(n) == spelled for n in (
                  getattr(node.func, "value", None), *node.args[:1])):
        return True
  return False


def regrown(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis,
            steps: Tuple[str, ...] = ()) -> bool:
  """Whether a mask (`layer.mask`, an element of `self.masks`) is set anew
  from values it compares or ranks (`top_k`, a percentile, a draw) while
  the model trains: in a callback's epoch or batch hook (SET's
  evolution), in a `train_step` or a function it calls, or in a loop that
  also applies the steps (RigL's drop and regrowth every n steps; `steps`
  names the project's functions that apply one). A mask pruned between
  whole runs of `fit` (a lottery ticket's round) is fixed within each."""
  key = _mask_key(mask, scope)
  if key is None:
    return False
  for place, call in analysis.calls_named(("assign",)):
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else (
        call.args[0] if call.args else None)
    value = call.args[-1] if call.args else None
    if receiver is None or value is None or _mask_key(
        receiver, place) != key or not _made_here(value, place):
      continue
    if place.cls is not None and _HOOK.match(place.name) and any(
        b.endswith("Callback") for b in place.cls.bases):
      return True
    callers = analysis.project.callers(place.name)[:12] if isinstance(
        place.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    if _STEP_FUNCTION.match(place.name) or any(
        _STEP_FUNCTION.match(s.name) for s, _ in callers):
      return True
    if _in_step_loop(call, place, analysis, steps) or any(
        _in_step_loop(c, s, analysis, steps) for s, c in callers):
      return True
  return False


def _mask_key(node: ast.expr, scope: _scopes.Scope) -> Optional[str]:
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


# A callback's hooks that run while `fit` trains.
_HOOK = re.compile(r"^on_(epoch|train_batch|batch)_(begin|end)$")
# Functions that run with each step of `fit`.
_STEP_FUNCTION = re.compile(r"^(train_step|_?train_on_batch|call|__call__)$")
# What applies one step of training.
_STEPS = {"apply_gradients", "train_on_batch", "minimize", "train_step",
          "apply_updates"}


def _in_step_loop(node: ast.AST, scope: _scopes.Scope,
                  analysis: Analysis, steps: Tuple[str, ...] = ()) -> bool:
  """Whether `node` is in a loop whose own body (not a nested loop's)
  applies a step of training."""
  order = analysis.order(scope)
  current: Optional[ast.AST] = order.parent(node)
  while current is not None:
    if isinstance(current, (ast.For, ast.While)):
      stack: List[ast.AST] = list(current.body)
      while stack:
        item = stack.pop()
        if isinstance(item, ast.Call) and (_names.call_name(
            item) in _STEPS or _names.call_name(item) in steps):
          return True
        if not isinstance(item, (ast.For, ast.While, ast.FunctionDef)):
          stack.extend(ast.iter_child_nodes(item))
      return False
    current = order.parent(current)
  return False


def _placeholder_mask(mask: ast.expr, scope: _scopes.Scope) -> bool:
  """`prune_1 = tf.placeholder(tf.float32, shape=[784, 300])`: a feed of
  a weight's full, static shape (not a batch, not a scalar rate)."""
  if not isinstance(mask, ast.Name):
    return False
  values = [d.value for d in _defs(mask.id, scope)]
  if not values:
    return False
  for value in values:
    if not (isinstance(value, ast.Call) and _names.call_name(value) == (
        "placeholder")):
      return False
    shape = next((k.value for k in value.keywords if k.arg == "shape"),
                 value.args[1] if len(value.args) > 1 else None)
    if not isinstance(shape, (ast.List, ast.Tuple)) or not shape.elts or (
        not all(isinstance(e, ast.Constant) and isinstance(e.value, int)
                for e in shape.elts)):
      return False
  return True


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
