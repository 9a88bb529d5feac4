"""A variable's own rows (or columns) replaced by constants in the table
the forward pass reads: a slice of the variable that drops rows at one
edge, joined along that axis with constants (`tf.concat((tf.zeros([1, E]),
table[1:, :]), 0)`, Kyubyong's `zero_pad`; `tf.pad(w[1:], [[1, 0], [0,
0]])`; `tf.concat([k[:, :-1], tf.ones([d, 1])], 1)`), the result looked up
or multiplied: the dropped rows of the variable never train. Counted only
where that branch runs (`if zero_pad:` with the parameter's default or a
call turning it on; a constructor's parameter, a construction of its
class). Constant rows joined to a whole variable leave none
of it out and are not this (a padding row appended). The same rows set by
a scatter (`tensor_scatter_nd_update(table, [[0]], zeros)`) are this too
(`_scattered_rows`)."""

from __future__ import annotations

import ast
import itertools
import os
import re
from typing import FrozenSet, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._calls import joined_parts
from tfpartial._tools.scan.idioms._masks import _own_weights
from tfpartial._tools.scan.idioms._masks import _scattered_rows

_JOINS = {"concat", "concat_v2", "concatenate", "pad"}
_FILLS = {"zeros", "ones", "fill", "constant", "zeros_like", "ones_like"}
# What reads a table: a lookup, a product, a convolution.
_READERS = {"embedding_lookup", "embedding_lookup_sparse", "gather",
            "safe_embedding_lookup_sparse", "matmul", "tensordot", "einsum",
            "dot", "conv1d", "conv2d", "atrous_conv2d", "nce_loss",
            "sampled_softmax_loss", "Embedding"}
# What passes a table on unchanged in kind.
_THROUGH = {"transpose", "cast", "identity", "reshape", "expand_dims"}
# Searched where a word starts (`_project.at_word_start`).
_TEXT = re.compile(r"(?:concat|concat_v2|concatenate|pad|"
                   r"tensor_scatter_nd_update|tensor_scatter_update)\s*\(")
# Methods the framework calls: their parameters take their defaults.
_DISPATCHED = {"call", "__call__", "forward", "build"}


def replaced_rows(analysis: Analysis
                  ) -> List[Tuple[ast.Call, _scopes.Scope, ast.expr]]:
  """(the join, its scope, the variable sliced) of each table whose rows
  of a variable are replaced by constants, where its branch runs; in the
  helper modules too (an embedding built where nothing trains)."""
  found: List[Tuple[ast.Call, _scopes.Scope, ast.expr]] = []
  project = analysis.project
  for module in project.modules:
    text = module.source.text
    if not _joins(text) or not any(
        w in text for w in ("zeros", "ones", "fill", "constant", "pad(")) or (
            project.parsed(module) is None):
      continue
    for scope in analysis.scopes_with(module, _REPLACERS):
      for node in scope.nodes:
        if not isinstance(node, ast.Call) or _names.call_name(
            node) not in _REPLACERS:
          continue
        variable = _replaced(node, scope)
        if variable is None or not trained_variable(analysis, variable,
                                                     scope):
          continue
        if _read_as_table(analysis, node, scope) and branch_runs(
            analysis, node, scope) and not _read_whole(
                analysis, node, scope, variable) and not (
                    _never_stepped(project, module) and not (
                        _own_weights.own_weight(variable, scope))):
          found.append((node, scope, variable))
  return found


def _joins(text: str) -> bool:
  """Whether `text` calls a join or a scatter (`_TEXT`, where a word
  starts); the words it must hold looked for first."""
  return ("concat" in text or "pad" in text or "tensor_scatter_" in text) \
      and _project.at_word_start(_TEXT, text)


# The calls that replace a table's rows: a join, or a scatter.
_REPLACERS = _JOINS | _scattered_rows.SCATTERS


def _replaced(node: ast.Call, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The variable whose rows `node` replaces by constants, if any."""
  if _names.call_name(node) in _scattered_rows.SCATTERS:
    return _scattered_rows.scattered(node, scope, filled)
  sliced = _dropping_slice(node, scope)
  return None if sliced is None else sliced.value


# Words of a module that trains (a step, a loss's gradients, a fit).
_STEPS = frozenset({"minimize", "apply_gradients", "compute_gradients",
                    "gradients", "gradient", "GradientTape", "fit",
                    "fit_generator", "train_on_batch", "train", "train_step",
                    "train_op", "compile", "backward"})


def _never_stepped(project: _project.Project,
                   module: _project.Module) -> bool:
  """Whether nothing trains the graph `module` builds: no step nor
  gradient nor optimizer in its text, and no other module names it (an
  export or serving script, a notebook that rebuilds the model only to
  save it for serving)."""
  words = module.words
  if words & _STEPS or any("ptimizer" in w for w in words):
    return False
  if module.path.endswith(".ipynb"):
    return True  # A notebook: nothing imports it.
  stem = os.path.basename(module.path).rsplit(".", 1)[0]
  imports = re.compile(
      rf"^[ \t]*(?:from|import)[ \t]+[\w., \t]*\b{re.escape(stem)}\b", re.M)
  return not any(m is not module and imports.search(m.source.text)
                 for m in project.all_modules_with((stem,)))


def _read_whole(analysis: Analysis, node: ast.Call, scope: _scopes.Scope,
                variable: ast.expr) -> bool:
  """Whether the variable itself (not the join) is also looked up or
  multiplied in the scope, before the join when the join rebinds its
  name: every row of it still trains through that read."""
  spelled = _names.dotted(variable)
  if spelled is None:
    return False
  statement = analysis.order(scope).statement_of(node)
  rebinds = isinstance(statement, ast.Assign) and any(
      _names.dotted(t) == spelled for t in statement.targets)
  inside = {id(n) for n in ast.walk(node)}
  for each in scope.nodes:
    if not isinstance(each, ast.Call) or _names.call_name(
        each) not in _READERS or id(each) in inside or rebinds and (
            each.lineno >= node.lineno):
      continue
    if any(_names.dotted(a) == spelled for a in [
        *each.args, *(k.value for k in each.keywords)]):
      return True
  return False


def edge_slice(node: ast.Call, scope: _scopes.Scope
               ) -> Optional[ast.Subscript]:
  """The slice of a variable that a join (or a pad) with constants drops
  edge rows of (`emb[1:]` in `tf.concat([tf.zeros([1, E]), emb[1:]],
  0)`), or None."""
  if _names.call_name(node) not in _JOINS:
    return None
  return _dropping_slice(node, scope)


def _dropping_slice(node: ast.Call, scope: _scopes.Scope
                    ) -> Optional[ast.Subscript]:
  """The one slice of a join that drops rows at an edge along the axis
  the join adds constants on, the other parts all constants."""
  if _names.call_name(node) == "pad":
    return _padded_slice(node)
  parts = joined_parts(node)
  if not parts:
    return None
  sliced = [p for p in parts if isinstance(p, ast.Subscript)]
  others = [p for p in parts if not isinstance(p, ast.Subscript)]
  if len(sliced) != 1 or not others or not all(
      filled(p, scope) for p in others):
    return None
  axis = next((k.value for k in node.keywords if k.arg in {"axis", "dim"}),
              None)
  if axis is None:
    positional = [a for a in node.args[:2]
                  if not isinstance(a, (ast.List, ast.Tuple))]
    axis = positional[0] if positional else (
        ast.Constant(0) if _names.call_name(node) == "concatenate" else None)
  number = _integer(axis)
  if number is None:
    return None
  return sliced[0] if _drops_along(sliced[0], number) else None


def _padded_slice(node: ast.Call) -> Optional[ast.Subscript]:
  """`tf.pad(w[1:], [[1, 0], [0, 0]])`: the slice, when the only axis
  padded (with the default constant mode) is the one it drops rows of."""
  args = list(node.args)
  paddings = args[1] if len(args) > 1 else next(
      (k.value for k in node.keywords if k.arg == "paddings"), None)
  mode = args[2] if len(args) > 2 else next(
      (k.value for k in node.keywords if k.arg == "mode"), None)
  if not args or not isinstance(args[0], ast.Subscript) or not isinstance(
      paddings, (ast.List, ast.Tuple)) or mode is not None and not (
          isinstance(mode, ast.Constant) and str(mode.value).upper() == (
              "CONSTANT")):
    return None
  padded = []
  for axis, pair in enumerate(paddings.elts):
    amounts = [_integer(e) for e in getattr(pair, "elts", [])]
    if len(amounts) != 2 or None in amounts:
      return None
    if any(amounts):
      padded.append(axis)
  if len(padded) != 1 or not _drops_along(args[0], padded[0]):
    return None
  return args[0]


def _integer(node: Optional[ast.AST]) -> Optional[int]:
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
    inner = _integer(node.operand)
    return None if inner is None else -inner
  if isinstance(node, ast.Constant) and isinstance(node.value, int) and (
      not isinstance(node.value, bool)):
    return node.value
  return None


def _drops_along(part: ast.Subscript, axis: int) -> bool:
  """`t[1:]`, `t[1:, :]`, `t[:, :-1]`: every row of `axis` but a
  constant few at an edge, the other axes whole."""
  index = part.slice
  dims = list(index.elts) if isinstance(index, ast.Tuple) else [index]
  if axis < 0:
    if len(dims) < 2:
      return False
    axis += len(dims)
  if not 0 <= axis < len(dims):
    return False
  for position, dim in enumerate(dims):
    if not isinstance(dim, ast.Slice) or dim.step is not None:
      return False
    bounds = (dim.lower, dim.upper)
    if position != axis:
      if bounds != (None, None):
        return False
      continue
    lower, upper = (_integer(b) if b is not None else None for b in bounds)
    if any(b is not None and n is None for b, n in zip(bounds, (
        lower, upper))) or not (lower or upper is not None) or (
            lower is not None and lower < 0):
      return False
  return True


def filled(node: ast.expr, scope: _scopes.Scope,
            names: FrozenSet[str] = frozenset()) -> bool:
  """A constant made to size: `tf.zeros([1, E])`, `tf.fill(...)`,
  `tf.ones_like(...) * 2`, `tf.constant(0.0, shape=...)`, or a name
  holding one (not one defined through itself: `pad = pad * 2`)."""
  if isinstance(node, ast.BinOp):
    return filled(node.left, scope, names) and isinstance(
        node.right, ast.Constant) or filled(node.right, scope, names) and (
            isinstance(node.left, ast.Constant))
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    return node.id not in names and len(defs) == 1 and filled(
        defs[0].value, scope, names | {node.id})
  return isinstance(node, ast.Call) and _names.call_name(node) in _FILLS


def trained_variable(analysis: Analysis, variable: ast.expr,
                      scope: _scopes.Scope) -> bool:
  """Whether the value sliced or scattered is one variable that trains:
  made by
  `get_variable`, `Variable`, `add_weight` or a layer's weight (not what a
  lookup or a product of it makes, not a list of variables, not made with
  `trainable=False`)."""
  if _own_weights.own_weight(variable, scope):
    return True
  labels = analysis.flow.labels(variable, scope)
  made = labels.get("var")
  return "shadow" not in labels and (isinstance(made, ast.Call) and (
      _names.call_name(made) in _names.VARIABLES) or isinstance(
          made, ast.Attribute) and made.attr in _names.LAYER_VARIABLES)


def _read_as_table(analysis: Analysis, node: ast.Call,
                   scope: _scopes.Scope) -> bool:
  """Whether the join is looked up or multiplied (here, or by the name it
  is bound to), returned, or kept on the object: not written into a
  variable nor made a new variable's initial value."""
  order = analysis.order(scope)
  current: ast.AST = node
  parent = order.parent(current)
  while isinstance(parent, (ast.Call, ast.keyword, ast.IfExp)) and not (
      isinstance(parent, ast.Call) and _names.call_name(parent) in _READERS):
    if isinstance(parent, ast.Call) and _names.call_name(parent) not in (
        _THROUGH):
      return False
    current, parent = parent, order.parent(parent)
  if isinstance(parent, ast.Call) or isinstance(parent, ast.Return):
    return True
  if not isinstance(parent, ast.Assign) or len(parent.targets) != 1:
    return False
  target = parent.targets[0]
  if isinstance(target, ast.Attribute):
    return True
  if not isinstance(target, ast.Name):
    return False
  for each in scope.nodes:
    reads: List[ast.expr] = []
    if isinstance(each, ast.Call) and _names.call_name(each) in _READERS:
      reads = [*each.args, *(k.value for k in each.keywords)]
    elif isinstance(each, ast.Return) and each.value is not None:
      reads = [each.value]
    if any(isinstance(n, ast.Name) and n.id == target.id
           for r in reads for n in ast.walk(r)):
      return True
  return False


def branch_runs(analysis: Analysis, node: ast.AST,
                 scope: _scopes.Scope) -> bool:
  """Whether the join runs: a function (not a method) the project calls,
  and each `if flag:` around the join may be taken, a flag that is a
  parameter of the function taking its default or what the project's
  calls pass it (a function nobody calls runs no branch on a flag)."""
  if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
      scope.cls is None and scope.name not in _DISPATCHED) and not (
          _calls_of(analysis, scope.node)):
    return False
  order = analysis.order(scope)
  current: ast.AST = node
  parent = order.parent(current)
  while parent is not None and parent is not scope.node:
    if isinstance(parent, (ast.If, ast.IfExp)) and current is not (
        parent.test):
      wanted = current not in (parent.orelse if isinstance(
          parent, ast.If) else [parent.orelse])
      test = parent.test
      if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, wanted = test.operand, not wanted
      if isinstance(test, ast.Name) and test.id in scope.params and not (
          _may_be(analysis, scope, test.id, wanted)):
        return False
      if isinstance(test, ast.Attribute) and isinstance(
          test.value, ast.Name) and test.value.id == "self" and not (
              _attribute_may_be(analysis, scope, test.attr, wanted)):
        return False
    current, parent = parent, order.parent(parent)
  return True


def _attribute_may_be(analysis: Analysis, scope: _scopes.Scope, attr: str,
                      wanted: bool) -> bool:
  """Whether `self.attr` may be `wanted`: set only in the class's
  `__init__` from its parameter (`self.zero_pad = zero_pad`), its
  default or what the class's constructions pass (anything else may be
  either)."""
  info = scope.cls
  init = info.methods.get("__init__") if info is not None else None
  if info is None or init is None:
    return True
  values = analysis.project.attribute(info, f"self.{attr}")
  names = {v.id for v, home in values if home is init and isinstance(
      v, ast.Name) and v.id in init.params and not init.defs.get(v.id)}
  if not values or len(names) != 1 or len(names) != len(values):
    return True
  return _may_be(analysis, init, names.pop(), wanted,
                 calls=_constructions(analysis, info.name))


def _constructions(analysis: Analysis, name: str
                   ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """The project's calls of the class `name` (what its `__init__`
  takes)."""
  project = analysis.project
  return [(place, call) for place, call in itertools.islice(
      project.calls_named((name,), project.all_modules_with((name,))), 48)
          if _names.call_name(call) == name]


def _may_be(analysis: Analysis, scope: _scopes.Scope, name: str,
            wanted: bool, depth: int = 0,
            calls: Optional[List[Tuple[_scopes.Scope, ast.Call]]] = None
            ) -> bool:
  """Whether the parameter `name` may be `wanted` (true or false): its
  default, or a value a call of the function (or `calls`) passes, a
  parameter of the caller passed on followed to its own callers
  (anything else not a constant may be either)."""
  function = scope.node
  if depth > 3 or not isinstance(function, (ast.FunctionDef,
                                            ast.AsyncFunctionDef)):
    return True
  default = _default(function, name)
  if calls is None and scope.name == "__init__" and scope.cls is not None:
    # A constructor's parameter: what the class's constructions pass.
    calls = _constructions(analysis, scope.cls.name)
  if calls is None:
    calls = _calls_of(analysis, function)
  elif not calls:
    return _truth(default, wanted)
  if not calls:
    return scope.name in _DISPATCHED and _truth(default, wanted)
  position = scope.params.index(name)
  method = scope.cls is not None and scope.params[:1] in (["self"], ["cls"])
  for place, call in calls:
    shift = 1 if method and not (isinstance(call.func, ast.Attribute) and (
        isinstance(call.func.value, ast.Name)) and call.func.value.id == (
            scope.cls.name if scope.cls is not None else "")) else 0
    given = next((k.value for k in call.keywords if k.arg == name), None)
    if given is None and any(k.arg is None for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args):
      return True
    if given is None and 0 <= position - shift < len(call.args):
      given = call.args[position - shift]
    if isinstance(given, ast.Name) and given.id in place.params and not (
        place.defs.get(given.id)):
      if _may_be(analysis, place, given.id, wanted, depth + 1):
        return True
    elif _truth(given if given is not None else default, wanted):
      return True
  return False


def _calls_of(analysis: Analysis,
              function: ast.FunctionDef | ast.AsyncFunctionDef
              ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """The project's calls of `function`, in the modules that hold no step
  too (a model's `networks.py` calling the helper of `modules.py`)."""
  found = analysis.flow.calls_of(function)
  if found:
    return found
  project = analysis.project
  calls = project.calls_named((function.name,), project.all_modules_with(
      (function.name,)))
  return [(scope, call) for scope, call in itertools.islice(calls, 48)
          if analysis.flow.callee(call, scope) is function]


def _default(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
             ) -> Optional[ast.expr]:
  arguments = function.args
  positional = [*arguments.posonlyargs, *arguments.args]
  defaults = dict(zip([a.arg for a in positional][-len(arguments.defaults):]
                      if arguments.defaults else [], arguments.defaults))
  defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs,
                                            arguments.kw_defaults) if d})
  return defaults.get(name)


def _truth(value: Optional[ast.expr], wanted: bool) -> bool:
  """Whether `value` may be true (or false, as `wanted`): a constant is
  what it is, a missing value is `None`, anything else may be either."""
  if value is None:
    return not wanted
  if isinstance(value, ast.Constant):
    return bool(value.value) == wanted
  return True
