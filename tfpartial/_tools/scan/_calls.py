"""The labels of calls and arithmetic: where masks meet gradients and
variables (`_flow` dispatches here)."""

from __future__ import annotations

import ast
import re
from typing import (Any, Dict, List, Optional, Sequence, Set, Tuple, Union,
                    cast)

from tfpartial._tools.scan import _gathered_rows
from tfpartial._tools.scan import _joined_lists
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _padding
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _zero_choice
from tfpartial._tools.scan._labels import Labels, union

Flow = Any  # `_flow.Flow`, which imports this module.

# What a call outside the project that does not reshape keeps of its
# arguments: a function of a gradient is a gradient (clipping, casting,
# summing across replicas); a matmul of a variable is not the variable.
THROUGH_CALLS = frozenset({"grad", "masked", "param", "train", "write",
                           "random"})
# What arithmetic on a variable, a mask or a copy keeps of them.
_DROPPED_BY_ARITHMETIC = {"var", "shadow", "filtered", "write", "train",
                          "zip", "fn", "obj", "cls", "diag"}


def binop(flow: Flow, node: ast.AST, left: ast.AST, right: ast.AST,
          scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  """`left OP right` (and `tf.multiply(left, right)`)."""
  first = flow.labels(left, scope, env)
  second = flow.labels(right, scope, env)
  op = getattr(node, "op", ast.Mult())
  result: Labels = {}
  for kind, where in (*first.items(), *second.items()):
    if kind not in _DROPPED_BY_ARITHMETIC | {"mask", "const"}:
      result.setdefault(kind, where)
  if "var" in first or "var" in second:
    result.setdefault("vararith", node)
  if _joined_lists.joined(node):
    result["var"] = node  # `tf.trainable_variables() + get_collection(k)`.
  if isinstance(op, ast.Add) and ("filtered" in first or "filtered" in
                                  second) and not _rejoined(first, second):
    result["filtered"] = first.get("filtered") or second["filtered"]
  if isinstance(op, ast.Sub) and "var" in first and "var" in second and (
      "filtered" in first or "filtered" in second):
    result["var"] = result["filtered"] = node  # `set(all) - set(scope's)`.
  plain = {"mask", "const", "param"}
  if ("mask" in first or "mask" in second) and set(first) | set(
      second) <= plain:
    result["mask"] = node  # `1 - mask`, `mask[:, None] * 1.0`.
  if "const" in first and "const" in second:
    result["const"] = node
  if isinstance(op, ast.MatMult):
    matrix_product(flow, node, left, right, scope, env, result)
  if isinstance(op, ast.Mult) and any(
      isinstance(side, ast.Call) and _names.call_name(side) in {
          "eye", "identity"} and fixed(labels)
      for side, labels in ((left, second), (right, first))):
    result["diag"] = node  # `np.eye(n) * keep`.
  if isinstance(op, ast.Mult):
    _multiplied(node, left, right, first, second, result)
    if ("grad" in first and _names.is_zero(right) or (
        "grad" in second and _names.is_zero(left))) and not _reset(
            node, left, scope):
      result["masked"] = node  # `grads[0] * 0.0`, `grads[0] *= 0`.
    elif "masked" not in result and _zeroed_by_choice(
        flow, node, (first, left), (second, right), scope, env):
      result["masked"] = node  # `g * ratio` under `if 'enc' in v.name:`.
  elif isinstance(op, (ast.Add, ast.Sub)) and _is_mix(
      flow, left, right, first, second, scope, env):
    result["mix"] = node
  return result


def _zeroed_by_choice(flow: Flow, node: ast.AST,
                      first: Tuple[Labels, ast.AST],
                      second: Tuple[Labels, ast.AST], scope: _scopes.Scope,
                      env: Dict[str, Labels]) -> bool:
  """Whether a gradient times a factor is zero for the variables a choice
  picks (`_zero_choice`): the factor knows nothing of gradients or
  masks."""
  for (mine, _), (other, factor) in ((first, second), (second, first)):
    if "grad" in mine and not {"grad", "mask", "masked"} & set(other) and (
        _zero_choice.zeroes_some(
            node, factor, scope, flow.project,
            lambda test: _names.filters_by_name(test, flow, scope, env))):
      return True
  return False


def _reset(node: ast.AST, left: ast.AST, scope: _scopes.Scope) -> bool:
  """`for i, g in enumerate(acc): acc[i] = g * 0`: every element a loop
  reads zeroed under no test, an accumulator reset, not a mask."""
  if not (isinstance(left, ast.Name) and left.id in scope.loops):
    return False
  for defs in scope.defs.values():
    for each in defs:
      if each.value is node:
        return bool(each.where.loops) and each.where.guard is None and (
            each.where.test is None)
  owner = _enclosing_class(scope)  # `self.acc[i] = g * 0`: no `if` kept.
  return owner is not None and any(
      value is node for values in owner.assigned.values()
      for value, _ in values) and id(node) not in scope.guards and (
          id(node) not in scope.tests)


def _rejoined(first: Labels, second: Labels) -> bool:
  """`[(g0, v0)] + grads_and_vars[1:]`: the variables a slice left out,
  put back (`chosen += get_variables(s)` adds to a choice)."""
  for mine, other in ((first, second), (second, first)):
    cut = mine.get("filtered")
    if isinstance(cut, ast.Subscript) and (
        "filtered" not in other) and ("var" in other or "grad" in other) and (
            not _beside_another(cut, other.get("var"))):
      return True
  return False


# A model's whole list of variables.
_WHOLE_LISTS = {"trainable_variables", "trainable_weights", "variables",
                "weights"}


def _beside_another(cut: ast.Subscript, added: Optional[ast.AST]) -> bool:
  """`base.trainable_variables[-20:] + head.trainable_variables`: some of
  one model's variables and all of another's; what the slice leaves out
  is not put back."""
  return isinstance(added, ast.Attribute) and added.attr in _WHOLE_LISTS \
      and isinstance(cut.value, ast.Attribute) and (
          cut.value.attr in _WHOLE_LISTS) and (
              _names.dotted(added.value) != _names.dotted(cut.value.value))


def _is_mix(flow: Flow, left: ast.AST, right: ast.AST, first: Labels,
            second: Labels, scope: _scopes.Scope,
            env: Dict[str, Labels]) -> bool:
  """`m * x + (1 - m) * sg(x)`, `sg(h * x) + m * x`: a mask on both sides,
  a stop_gradient on one, the same variable in both."""
  masks = {"mask", "timesmask", "sgmask"}
  if not (masks & set(first) and masks & set(second)):
    return _stopped_plus_masked(flow, left, right, first, second, scope,
                                env, masks)
  for mine, other, mine_node, other_node in (
      (first, second, left, right), (second, first, right, left)):
    if "sg" in mine and ("var" in other or "vararith" in other):
      stopped = variables_in(flow, mine_node, scope, env, stopped=True,
                             trainable=True)
      if stopped & variables_in(flow, other_node, scope, env,
                                trainable=True):
        return True
  return _own_value_mix(flow, left, right, scope, env)


def _own_value_mix(flow: Flow, left: ast.AST, right: ast.AST,
                   scope: _scopes.Scope, env: Dict[str, Labels]) -> bool:
  """`m * x + (1 - m) * sg(x)` of a value the object computes itself
  (`x = super().matrix()`, from its weights, maybe passed to a helper):
  the gradient reaches its weights through the elements `m` keeps."""
  for live, stopped in ((left, right), (right, left)):
    for mine in _factor_names(live, False) & _factor_names(stopped, True):
      if _own_value(flow, mine, scope, env, 0):
        return True
  return False


def _factor_names(term: ast.AST, stopped: bool) -> Set[str]:
  """The names `m * x` multiplies (those stopped in `m * sg(x)`, `sg(m *
  x)` when `stopped`)."""
  if stopped and isinstance(term, ast.Call) and _names.call_name(term) == (
      "stop_gradient") and len(term.args) == 1:
    return _factor_names(term.args[0], False)
  if not isinstance(term, ast.BinOp) or not isinstance(term.op, ast.Mult):
    return set()
  found: Set[str] = set()
  for factor in (term.left, term.right):
    if stopped and isinstance(factor, ast.Call) and _names.call_name(
        factor) == "stop_gradient" and len(factor.args) == 1:
      factor = factor.args[0]
    elif stopped:
      continue
    if isinstance(factor, ast.Name):
      found.add(factor.id)
  return found


def _own_candidates(name: str, scope: _scopes.Scope
                    ) -> List[Union[ast.Name, ast.Call]]:
  """The values of `name` that may be the object's own: another name, a
  call of `super()`'s method or of one of `self`'s (worked out once per
  scope and name)."""
  return scope.once((_own_candidates, name, 0),
                    lambda: _read_candidates(name, scope))


def _read_candidates(name: str, scope: _scopes.Scope
                     ) -> List[Union[ast.Name, ast.Call]]:
  found: List[Union[ast.Name, ast.Call]] = []
  for each in scope.defs.get(name, []):
    value = _names.underlying(each.value)
    if isinstance(value, ast.Name) and value.id != name:
      found.append(value)
    elif isinstance(value, ast.Call) and isinstance(
        value.func, ast.Attribute) and _names.call_name(value) not in (
            _DISPATCHED):
      receiver = value.func.value
      if isinstance(receiver, ast.Call) and _names.call_name(
          receiver) == "super" or isinstance(receiver, ast.Name) and (
              receiver.id == "self"):
        found.append(value)
  return found


def _own_value(flow: Flow, name: str, scope: _scopes.Scope,
               env: Dict[str, Labels], depth: int) -> bool:
  """Whether a name holds (a slice, gather or reshape of) what a method of
  the object returns (`super().matrix()`, `self.matrix()`), here or
  through a parameter the project's calls pass it."""
  if depth > 3 or name in env:
    return False
  for value in _own_candidates(name, scope):
    if isinstance(value, ast.Name):
      if _own_value(flow, value.id, scope, env, depth + 1):
        return True
    elif isinstance(value.func, ast.Attribute) and (isinstance(
        value.func.value, ast.Call) or "fn" in method(
            flow, value.func, scope, env)):
      return True  # `super().matrix()`, or `self.matrix()` of the class.
  if name in scope.params and isinstance(scope.node, (
      ast.FunctionDef, ast.AsyncFunctionDef)):
    position = scope.params.index(name)
    if scope.cls is not None and scope.params[:1] == ["self"]:
      position -= 1
    for place, call in flow.calls_of(scope.node):
      if 0 <= position < len(call.args) and isinstance(
          call.args[position], ast.Name) and _own_value(
              flow, call.args[position].id, place, {}, depth + 1):
        return True
  return False


# Methods the framework calls with the data: what they return is not the
# object's own value.
_DISPATCHED = {"call", "__call__", "forward", "predict", "apply"}


# Calls whose labels are their first argument's, and what they add.
_FIRST_ARGUMENT = {"filter_variables"}
# Writes of rows into a tensor at ids, and multiplications of them.
_SCATTERS = {"tensor_scatter_nd_update", "tensor_scatter_update",
             "scatter_update", "scatter_nd_update", "scatter_mul",
             "scatter_nd_mul"}


def _rows_set(flow: Flow, node: ast.Call, name: str, args: List[ast.AST],
              scope: _scopes.Scope, env: Dict[str, Labels]
              ) -> Optional[Labels]:
  """The labels of a gradient whose rows at some ids are written with
  zeros, or multiplied by them (`tf.tensor_scatter_nd_update(g, rows,
  zeros)`, `tf.scatter_mul(g, ids, zeros)`): those rows are masked; None
  when the call scatters into no gradient."""
  if name not in _SCATTERS or len(args) != 3:
    return None
  found = dict(flow.labels(args[0], scope, env))
  if "grad" not in found:  # A write into a variable, or a rebuilt tensor.
    return found if name == "tensor_scatter_nd_update" else None
  if zero(args[2], scope):
    found["masked"] = node
  return found


def _keyword_list(call: ast.Call) -> List[ast.AST]:
  """slim's `filter_variables(var_list=tvars, ...)`: its list, named."""
  return [k.value for k in call.keywords if k.arg == "var_list" and (
      _names.call_name(call) == "filter_variables")]


def _first_argument(flow: Flow, node: ast.Call, name: str,
                    args: List[ast.AST], scope: _scopes.Scope,
                    env: Dict[str, Labels]) -> Labels:
  """What a call makes of its first argument: slim's `filter_variables`
  with patterns filters variables."""
  args = args or _keyword_list(node)
  found = dict(flow.labels(args[0], scope, env))
  if name == "filter_variables" and "var" in found and (len(args) > 1 or any(
      k.arg in {"include_patterns", "exclude_patterns"}
      for k in node.keywords)):
    found["filtered"] = node
  return found


def _stopped_plus_masked(flow: Flow, left: ast.AST, right: ast.AST,
                         first: Labels, second: Labels,
                         scope: _scopes.Scope, env: Dict[str, Labels],
                         masks: Set[str]) -> bool:
  """`sg(x) + m * (x - sg(x))`: a variable stopped, plus a masked
  difference of it with itself stopped (the gradient reaches the masked
  elements only)."""
  for mine, other, mine_node, other_node in (
      (first, second, left, right), (second, first, right, left)):
    if "sg" in mine and not masks & set(mine) and masks & set(other):
      stopped = variables_in(flow, mine_node, scope, env, stopped=True)
      if stopped & variables_in(flow, other_node, scope, env) & (
          variables_in(flow, other_node, scope, env, stopped=True)):
        return True
  return False


# `tf.multiply(m, x)`: arithmetic spelled as a call, read as `m * x`.
_SPELLED_ARITHMETIC = frozenset({"multiply", "mul"})


def variables_in(flow: Flow, node: ast.AST, scope: _scopes.Scope,
                 env: Dict[str, Labels], stopped: bool = False,
                 trainable: bool = False) -> Set[str]:
  """The variables (as text) read in `node`: inside `stop_gradient` calls
  only when `stopped`, outside them otherwise; only those that may train
  (not made with `trainable=False`) when `trainable`."""
  found: Set[str] = set()
  stack = [(node, False)]
  while stack:
    item, inside = stack.pop()
    if isinstance(item, ast.Call) and _names.call_name(item) == (
        "stop_gradient"):
      stack.extend((a, True) for a in item.args)
      continue
    if isinstance(item, ast.Name) and not inside and item.id not in env:
      defs = scope.defs.get(item.id, [])
      if len(defs) == 1 and isinstance(defs[0].value, ast.Call) and (
          _names.call_name(defs[0].value) == "stop_gradient"):
        stack.append((defs[0].value, False))  # `x_sg = stop_gradient(x)`.
        continue
    if isinstance(item, ast.Name) and inside == stopped:
      split = split_part(item, scope)
      if split is not None:
        stack.append((split, inside))  # `a, b = tf.split(x, ...)`: x.
        continue
    if isinstance(item, (ast.Name, ast.Attribute)) and inside == stopped:
      labels = flow.labels(item, scope, env)
      if "var" in labels and not (trainable and "shadow" in labels):
        found.add(_names.dotted(item) or "")
        continue
      if "var" in labels:
        continue
    if isinstance(item, ast.Call) and _names.call_name(item) not in (
        _names.SHAPES | _SPELLED_ARITHMETIC):
      continue  # What a call makes of a variable is not the variable.
    stack.extend((child, inside) for child in ast.iter_child_nodes(item))
  return found - {""}


def _multiplied(node: ast.AST, left: ast.AST, right: ast.AST,
                first: Labels, second: Labels, result: Labels) -> None:
  for mine, other, mine_node in ((first, second, left),
                                 (second, first, right)):
    if "mask" not in other:
      continue
    result["timesmask"] = node
    if "grad" in mine and "grad" not in other:
      result["masked"] = node
    copies = [k for k in mine if k.startswith("copy:")]
    if "var" in mine or "vararith" in mine or copies or isinstance(
        mine_node, (ast.Name, ast.Attribute, ast.Subscript)) and not (
            set(mine) - {"param"}):
      # A variable, a copy, or a name the flow knows nothing of (a write
      # back into the same name says it is a variable).
      base = copies[0][5:] if copies else _names.root(mine_node)
      result[f"varmask:{base}"] = node


def call(flow: Flow, node: ast.Call, scope: _scopes.Scope,
         env: Dict[str, Labels]) -> Labels:
  """The labels of one call: the summary of the project's function it
  calls, or what its spelling says."""
  name = _names.call_name(node)
  summary = _project_call(flow, node, scope, env)
  if summary is not None and name not in _names.SPELLED:
    if _names.is_mask_name(name) and "mask" not in summary:
      summary = {**summary, "mask": node}  # `self.get_mask(shape)`.
    return summary
  if summary is None and name in _names.WEIGHT_GETTERS:
    return {"var": node}
  if summary is None and name in {"map", "map_structure"} and len(
      node.args) >= 2 and isinstance(node.args[0], ast.Lambda):
    return _mapped(flow, node.args[0], node.args[1:], scope, env)
  found = _spelled(flow, node, name, scope, env)
  if summary is not None and name in _names.VARIABLE_LISTS and (
      "filtered" not in summary):
    # The project's own `get_variables(f)` (a tape's watched variables):
    # its body says what it keeps, not the library's scope argument.
    found = {k: v for k, v in found.items() if k != "filtered"}
  if name in _DIAGONAL_MAKERS | {"matmul"} and node.args:
    found = _diagonal(flow, node, name, list(node.args), scope, env, found)
  rebuilt = rebuilt_parts(node)
  if rebuilt is not None and _stitched(flow, rebuilt, scope, env):
    found = {**found, "mix": node}
  terms = summed_terms(node)
  if terms is not None and "mix" in binop(
      flow, ast.BinOp(terms[0], ast.Add(), terms[1]), terms[0], terms[1],
      scope, env):
    found = {**found, "mix": node}  # `tf.add_n([m * x, (1 - m) * sg(x)])`.
  if summary:
    found = union([found, summary])
  return found


def _project_call(flow: Flow, node: ast.Call, scope: _scopes.Scope,
                  env: Dict[str, Labels]) -> Optional[Labels]:
  """What a call into the project returns, or None when it calls
  something outside it."""
  func = node.func
  name = _names.call_name(node)
  if name == "partial" and node.args:
    inner = flow.labels(node.args[0], scope, env)
    if "fn" in inner:
      flow.partials[id(node)] = node
      return {"fn": node}
    return None
  callee: Labels
  if isinstance(func, ast.Attribute):
    callee = method(flow, func, scope, env)
  else:
    callee = flow.called(func, scope, env)
  if "cls" in callee:
    return {"obj": callee["cls"]}
  if "fn" not in callee:
    return None
  found = _evaluate(flow, callee, node, scope, env)
  if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
      and func.value.id == "self" and "self" not in env:
    # A hook a subclass overrides: `self.adjust(g)` may run its override.
    info = _enclosing_class(scope)
    for override in flow.project.overriding(info, func.attr) if (
        info is not None) else ():
      if override.parent is None or override.cls is None:
        continue
      flow.functions[id(override.node)] = (override.node, override.parent)
      flow.bound_self[id(override.node)] = override.cls.node
      found = union([found, _evaluate(flow, {"fn": override.node}, node,
                                      scope, env)])
  return found


def method(flow: Flow, func: ast.Attribute, scope: _scopes.Scope,
            env: Dict[str, Labels]) -> Labels:
  """The method (or module function) `func` names, as labels."""
  receiver = func.value
  root = receiver
  while isinstance(root, ast.Attribute):
    root = root.value
  if isinstance(root, ast.Name) and flow.project.external(scope, root.id):
    return {}  # `tf.nn.relu`, `np.ones`: outside the project.
  info = None
  above = False
  if isinstance(receiver, ast.Call) and _names.call_name(receiver) == (
      "super"):
    info, above = _enclosing_class(scope), True
  elif isinstance(receiver, ast.Name) and receiver.id == "self" and (
      "self" not in env):
    info = _enclosing_class(scope)
  else:
    owner = flow.labels(receiver, scope, env)
    if "obj" in owner:
      info = flow.classes.get(id(owner["obj"]))
    elif "cls" not in owner:
      name = _names.dotted(func)
      target = flow.project.resolve(scope, name) if name else None
      # `aams.AAMS()` of `from net import aams`: a class of the project.
      return flow.of_target(target) if isinstance(target, (
          tuple, _scopes.ClassInfo)) else {}
  if info is None:
    return {}
  flow.classes[id(info.node)] = info
  method = flow.project.method(info, func.attr, above)
  if method is None or not isinstance(method.node, (
      ast.FunctionDef, ast.AsyncFunctionDef)) or method.parent is None:
    return {}
  flow.functions[id(method.node)] = (method.node, method.parent)
  flow.bound_self[id(method.node)] = info.node
  return {"fn": method.node}


def _enclosing_class(scope: _scopes.Scope) -> Optional[_scopes.ClassInfo]:
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  return place.cls if place is not None else None


def _evaluate(flow: Flow, callee: Labels, node: ast.Call,
              scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  """The callee's summary for this call's arguments."""
  target = callee["fn"]
  arguments = [flow.labels(a, scope, env) for a in node.args]
  keywords = {k.arg: flow.labels(k.value, scope, env)
              for k in node.keywords if k.arg}
  if isinstance(target, ast.Call) and id(target) in flow.partials:
    inner = flow.labels(target.args[0], scope, env)
    arguments = [flow.labels(a, scope, env) for a in target.args[1:]] + (
        arguments)
    keywords = {**{k.arg: flow.labels(k.value, scope, env)
                   for k in target.keywords if k.arg}, **keywords}
    target = inner.get("fn", target)
  function = flow.functions.get(id(target))
  if function is None:
    return {}
  if id(function[0]) in flow.bound_self and not isinstance(
      function[0], ast.Lambda) and function[0].args.args[:1] and (
          function[0].args.args[0].arg in {"self", "cls"}):
    arguments = [{"obj": flow.bound_self[id(function[0])]}] + arguments
  result: Labels = flow.helper(function[0], function[1], arguments,
                               keywords)
  return result


def _spelled(flow: Flow, node: ast.Call, name: str, scope: _scopes.Scope,
             env: Dict[str, Labels]) -> Labels:
  """The labels of a call by its spelling (TensorFlow's, NumPy's)."""
  args: List[ast.AST] = list(node.args)
  if name in _names.GRADIENTS:
    return {"grad": node}
  if name in _names.VARIABLES:
    return _variable(flow, node, scope, env)
  if name in _names.VARIABLE_LISTS:
    return _variable_list(node, name, scope)
  if name == "stop_gradient" and args:
    inner = flow.labels(args[0], scope, env)
    found = {k: v for k, v in inner.items() if k not in {"var", "vararith"}}
    if "var" in inner or "vararith" in inner or "param" in inner:
      found["sg"] = node
    if "mask" in inner:
      found["sgmask"] = node
    return found
  if name in {"where", "where_v2", "switch"} and len(args) == 3:
    return _where(flow, node, args, scope, env)
  if name in {"multiply", "mul", "multiply_no_nan"} and len(args) >= 2:
    return binop(flow, node, args[0], args[1], scope, env)
  if name in {"multiply", "Multiply"} and len(args) == 1 and isinstance(
      args[0], (ast.List, ast.Tuple)) and len(args[0].elts) == 2:
    first, second = args[0].elts  # Keras' `multiply([a, b])`.
    return binop(flow, node, first, second, scope, env)
  parts = joined_parts(node) if name in {
      "concat", "concatenate", "stack", "concat_v2"} else None
  if parts is not None:
    return _joined(flow, node, parts, scope, env)
  if name in _names.SHAPE_QUERIES:
    return {}  # `tf.shape(g)`: the gradient's shape, not the gradient.
  if name in _names.MASKS or name == "cast" and _indicator(args, scope):
    if any("random" in flow.labels(a, scope, env) or (
        name in _COMPARISONS and drawn(flow, a, scope, env)) for a in args):
      return {"random": node}  # `rand < p`: sampling, not a fixed mask.
    return {"mask": node, "const": node}
  if name in _names.RANDOM:
    return {"random": node}
  if name in _names.TRAIN_STEPS:
    return {"train": node}
  rows = _rows_kept(flow, node, name, args, scope, env)
  if rows is not None:
    return rows
  if name in _names.WRITES:
    return {"write": node}
  if name in _FIRST_ARGUMENT and (args or _keyword_list(node)):
    return _first_argument(flow, node, name, args, scope, env)
  if name in _names.FILTERS and len(args) == 2:
    found = dict(flow.labels(args[1], scope, env))
    if ("var" in found or pairs(found)) and any(_names.filters_by_name(
        test, flow, scope, env) for test in _predicate(args[0], scope)):
      found["filtered"] = node
    return found
  return _other(flow, node, name, args, scope, env)


def _diagonal(flow: Flow, node: ast.Call, name: str, args: List[ast.AST],
              scope: _scopes.Scope, env: Dict[str, Labels], spelled: Labels
              ) -> Labels:
  """`diag(v)` of a fixed vector: a diagonal matrix (`diag`), a mask when
  `v` is one or the name it is kept in says so; `matmul(w, d)` of a
  diagonal mask: `w` masked by its columns, as `w * mask` is."""
  found = dict(spelled)
  vector = flow.labels(args[0], scope, env)
  if name in _DIAGONAL_MAKERS and fixed(vector):
    found["diag"] = node
    if zero_one(vector):
      found["mask"] = node
  elif name == "matmul" and len(args) >= 2:
    matrix_product(flow, node, args[0], args[1], scope, env, found)
  return found


def zero_one(labels: Labels) -> bool:
  """Whether a value is a fixed 0/1 mask: made or named as one, or a
  constant, and neither a variable that may train (a learned gate) nor
  drawn anew."""
  return ("mask" in labels or set(labels) == {"const"}) and fixed(labels)


def fixed(labels: Labels) -> bool:
  """Whether a value is neither a variable that may train (a learned gate)
  nor drawn anew nor a gradient."""
  return ("var" not in labels or labels["var"] is labels.get("shadow")
          ) and not {"vararith", "random", "grad"} & set(labels)


def matrix_product(flow: Flow, node: ast.AST, left: ast.AST, right: ast.AST,
                   scope: _scopes.Scope, env: Dict[str, Labels],
                   result: Labels) -> None:
  """`left @ right` with one side a diagonal 0/1 matrix: the other side's
  columns (rows) masked (`tf.matmul([w], diag_mask)[0]`, a weight listed
  as a batch of one row)."""
  sides = [s.elts[0] if isinstance(s, (ast.List, ast.Tuple)) and len(
      s.elts) == 1 else s for s in (left, right)]
  first, second = (flow.labels(s, scope, env) for s in sides)
  if any({"diag", "mask"} <= set(labels) or _passed_diagonal(flow, labels)
         for labels in (first, second)):
    _multiplied(node, sides[0], sides[1], first, second, result)


def _passed_diagonal(flow: Flow, labels: Labels) -> bool:
  """Whether a mask kept from a parameter (`self.mask = mask`) is a
  diagonal mask where the project's calls pass it (EQL's
  `EqlLayer(mask=self.__build_mask(...))` of `np.diag` masks), and a
  fixed 0/1 value (a literal matrix) where they pass anything else."""
  given = labels.get("param")
  home = flow.origin.get(id(given))
  if "mask" not in labels or not isinstance(given, ast.Name) or (
      home is None):
    return False
  passed = [flow.labels(value, caller) for value, caller in
            _zero_choice.passed(given.id, home, flow.project)]
  return any({"diag", "mask"} <= set(p) for p in passed) and all(
      zero_one(p) for p in passed)


# The calls that make a diagonal matrix of a vector.
_DIAGONAL_MAKERS = frozenset({"diag", "diagflat", "matrix_diag"})


# The comparisons among the mask makers.
_COMPARISONS = {"greater", "less", "equal", "not_equal", "greater_equal",
                "less_equal"}


def drawn(flow: Flow, side: ast.AST, scope: _scopes.Scope,
          env: Dict[str, Labels]) -> bool:
  """Whether a side of a comparison is drawn anew each step: sampled
  (`rand < p`), or a gradient's values (`abs(g) >= top_k(...)`,
  sparsification by magnitude): the mask it makes keeps nothing fixed.
  A sparse gradient's ids (`g.indices < n`) name fixed rows."""
  labels = flow.labels(side, scope, env)
  if "random" in labels:
    return True
  return "grad" in labels and not _ids(side, scope)


def _ids(node: ast.AST, scope: Optional[_scopes.Scope]) -> bool:
  """Whether `node` reads a sparse gradient's ids or shape, itself or
  through the one assignment of a local name.

  >>> _ids(ast.parse("g.indices[:, None]").body[0].value, None)
  True
  """
  for item in ast.walk(node):
    if isinstance(item, ast.Attribute) and item.attr in {
        "indices", "dense_shape"}:
      return True
    if isinstance(item, ast.Name) and scope is not None:
      defs = scope.defs.get(item.id, [])
      if len(defs) == 1 and defs[0].value is not None and any(
          isinstance(n, ast.Attribute) and n.attr in {
              "indices", "dense_shape"} for n in ast.walk(defs[0].value)):
        return True
  return False


def _rows_kept(flow: Flow, node: ast.Call, name: str, args: List[ast.AST],
               scope: _scopes.Scope, env: Dict[str, Labels]
               ) -> Optional[Labels]:
  """The labels of a call keeping some rows of a gradient (a mask's, or
  gathered and scattered back into zeros, or others set to zeros), or
  None for another call."""
  if name in _SCATTERS:
    return _rows_set(flow, node, name, args, scope, env)
  if _gathered_rows.drops_rows(name, args, scope):
    found = dict(flow.labels(args[0], scope, env))
    if "grad" in found and not _stacked_list(args[0], node, scope):
      found["masked"] = node  # Rows of a gradient dropped by a mask.
  elif _gathered_rows.scattered_back(name, args, scope):
    found = dict(flow.labels(args[1], scope, env))
    if "grad" in found:
      found["masked"] = node  # Rows gathered, the rest left zero.
  elif _gathered_rows.gathered_slices(name, args, scope):
    found = dict(flow.labels(args[0], scope, env))
    if "grad" in found:
      found["masked"] = node  # Slices of a few gathered rows: no others.
  elif _gathered_rows.sparse_mask(node, args):
    found = dict(flow.labels(args[0], scope, env))
    if "grad" in found:
      found["masked"] = node  # `tf.sparse.mask(g, ids)`: those rows gone.
  elif _gathered_rows.padded_back(name, args):
    found = dict(flow.labels(args[0], scope, env))
    if "grad" in found:
      found["masked"] = node  # Rows cut off, padded back with zeros.
  else:
    return None
  return {k: v for k, v in found.items() if k in THROUGH_CALLS}


def _mapped(flow: Flow, function: ast.Lambda, given: Sequence[ast.AST],
            scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  """`map(lambda gv: (gv[0] * m, gv[1]), gvs)`, `tf.nest.map_structure(
  lambda g, m: g * m, grads, masks)`: the lambda's body, each parameter
  given what its sequence holds."""
  bound = dict(env)
  for parameter, sequence in zip(function.args.args, given):
    bound[parameter.arg] = flow.labels(sequence, scope, env)
  found: Labels = flow.labels(function.body, scope, bound)
  return found


def _stacked_list(value: ast.AST, at: ast.AST, scope: _scopes.Scope
                  ) -> bool:
  """Whether `value` is, where `at` reads it, a list of tensors joined
  along a new first axis (`tf.stack(grads)`, `tf.concat(grads, 0)` of a
  list built in a loop): the gradients of several towers or samples, of
  which a mask keeps whole ones, not elements of a variable."""
  if not isinstance(value, ast.Name):
    return False
  before = (getattr(at, "lineno", 0), getattr(at, "col_offset", 0))
  defs = [d for d in scope.defs.get(value.id, []) if d.end <= before]
  if not defs or not isinstance(defs[-1].value, ast.Call):
    return False
  call = defs[-1].value
  return _names.call_name(call) in {"stack", "concat"} and bool(
      call.args) and isinstance(call.args[0], ast.Name) and all(
          isinstance(a, ast.Constant) and a.value == 0
          for a in [*call.args[1:], *(k.value for k in call.keywords
                                       if k.arg == "axis")])


def pairs(labels: Labels) -> bool:
  """Whether the labels are `compute_gradients`' (gradient, variable)
  pairs (`filter(lambda gv: 'fc' in gv[1].name, grads_and_vars)`)."""
  made = labels.get("grad")
  return isinstance(made, ast.Call) and _names.call_name(made) in {
      "compute_gradients", "_compute_gradients"}


_FLOATS = re.compile(r"(^|\.)float(16|32|64)?$")


def _indicator(args: List[ast.AST], scope: _scopes.Scope) -> bool:
  """`cast(constant(kept_idx), float32)`: stored data (a table's entry,
  read from a dict) made a float tensor, the way a 0/1 array of kept
  elements is (pruning code's `dict_nzidx[var.name]`); not a literal, nor
  a value made here from variables or arithmetic."""
  if len(args) < 2 or not isinstance(args[0], ast.Call) or (
      _names.call_name(args[0]) != "constant") or not args[0].args:
    return False
  data = args[0].args[0]
  while isinstance(data, ast.Call) and _names.call_name(data) == "run" and (
      data.args):
    data = data.args[0]  # `constant(sess.run(table[key]))`.
  if isinstance(data, ast.Name) and any(isinstance(
      d.value, (ast.Constant, ast.BinOp, ast.UnaryOp))
                                         for d in scope.defs.get(data.id, [])):
    return False  # `scale = 2.0`: a number, not a table's entry.
  return isinstance(data, (ast.Name, ast.Subscript)) and bool(
      _FLOATS.search(ast.unparse(args[1])))


def _predicate(given: ast.AST, scope: _scopes.Scope) -> List[ast.AST]:
  """What `filter`'s predicate tests: the lambda, or what a helper
  defined in the project returns (`def _is_kept(v): return 'bn' not in
  v.name`, passed by name)."""
  helper = scope.function(given.id) if isinstance(given, ast.Name) else None
  if helper is None:
    return [given]
  return [given] + [n.value for n in ast.walk(helper[0])
                    if isinstance(n, ast.Return) and n.value is not None]


_STANDARD_COLLECTIONS = {"variables", "trainable_variables",
                         "model_variables", "local_variables"}


def _variable_list(node: ast.Call, name: str, scope: _scopes.Scope
                   ) -> Labels:
  """The labels of a call that lists variables (`tf.trainable_variables
  (scope)`, `get_collection(key)`), filtered where it names a scope or
  a collection of the project's own; none for a collection of ops."""
  if _holds_no_variables(node):
    return {}  # `get_collection(GraphKeys.UPDATE_OPS, scope)`: ops.
  found: Labels = {"var": node}
  if _names.scope_argument(node) is not None or name == (
      "get_collection") and _custom_collection(node, scope):
    found["filtered"] = node
  return found


# TensorFlow's `GraphKeys` whose collections hold ops, losses or
# summaries, never variables.
_NO_VARIABLES = {"UPDATE_OPS", "LOSSES", "REGULARIZATION_LOSSES",
                 "SUMMARIES", "TRAIN_OP", "QUEUE_RUNNERS", "INIT_OP",
                 "LOCAL_INIT_OP", "READY_OP", "SUMMARY_OP", "ACTIVATIONS",
                 "ASSET_FILEPATHS", "COND_CONTEXT", "WHILE_CONTEXT"}


def _holds_no_variables(node: ast.Call) -> bool:
  """Whether `get_collection(key)` reads one of TensorFlow's collections
  of ops (`tf.GraphKeys.UPDATE_OPS`: a batch norm's moving-average
  updates, filtered by a tower's scope), not of variables.

  >>> _holds_no_variables(ast.parse(
  ...     "tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)").body[0].value)
  True
  >>> _holds_no_variables(ast.parse(
  ...     "tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, s)"
  ...     ).body[0].value)
  False
  """
  if _names.call_name(node) not in {"get_collection", "get_collection_ref"}:
    return False
  key = node.args[0] if node.args else next(
      (k.value for k in node.keywords if k.arg == "key"), None)
  return isinstance(key, ast.Attribute) and key.attr in _NO_VARIABLES and (
      (_names.dotted(key.value) or "").endswith("GraphKeys"))


def _custom_collection(node: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `get_collection(key)` reads a collection of the project's own
  (`"adapters"`, a loop over such names): variables chosen by hand, not
  one of TensorFlow's `GraphKeys`."""
  key = node.args[0] if node.args else next(
      (k.value for k in node.keywords if k.arg == "key"), None)
  values: List[ast.AST] = [key] if key is not None else []
  if isinstance(key, ast.Name):
    values = [d.value for d in scope.defs.get(key.id, [])]
  strings = [_prefix(v, scope) for each in values for v in (
      each.elts if isinstance(each, (ast.List, ast.Tuple)) else [each])]
  return bool(strings) and all(
      isinstance(v, ast.Constant) and isinstance(v.value, str) and (
          v.value.lower() not in _STANDARD_COLLECTIONS) for v in strings)


def _prefix(key: ast.AST, scope: _scopes.Scope) -> ast.AST:
  """A collection's name made from a literal prefix (`prefix + str(j)`,
  `'block_%d' % j`, `f'block_{j}'`): the prefix, from a local name too."""
  original = key
  for _ in range(4):
    if isinstance(key, ast.BinOp) and isinstance(key.op, (ast.Add, ast.Mod)):
      key = key.left
    elif isinstance(key, ast.JoinedStr) and key.values:
      key = key.values[0]
    elif isinstance(key, ast.Call) and isinstance(key.func, ast.Attribute) \
        and key.func.attr == "format":
      key = key.func.value
    elif isinstance(key, ast.Name) and len(scope.defs.get(key.id, [])) == 1:
      key = scope.defs[key.id][0].value
    else:
      break
  if isinstance(key, ast.Constant) and isinstance(key.value, str):
    # What the name holds before its first placeholder.
    literal = re.split(r"[{%]", key.value, maxsplit=1)[0]
    return ast.Constant(literal) if literal else original
  return key


def split_part(name: ast.Name, scope: _scopes.Scope) -> Optional[ast.expr]:
  """What a name unpacked from a split is a part of (`head, tail =
  tf.split(table, [n, m], 0)` -> `table`; `tf.dynamic_partition` too),
  else None."""
  defs = scope.defs.get(name.id, [])
  value = defs[0].value if len(defs) == 1 and defs[0].part else None
  if isinstance(value, ast.Call) and _names.call_name(value) in {
      "split", "dynamic_partition"} and value.args:
    return value.args[0]
  return None


def joined_parts(node: ast.Call) -> Optional[List[ast.expr]]:
  """The parts a concatenation joins: its list argument, positional
  (first, or second as in TF 0.x's `concat(0, [a, b])`) or `values=`."""
  candidates = [*node.args[:2], *(k.value for k in node.keywords
                                  if k.arg in {"values", "tensors"})]
  for each in candidates:
    if isinstance(each, (ast.List, ast.Tuple)):
      return list(each.elts)
  return None


def choice(flow: Flow, node: ast.IfExp, scope: _scopes.Scope,
           env: Dict[str, Labels]) -> Labels:
  """`a if test else b`: what either holds; a gradient chosen against
  `None` or zeros by a test of something else than the gradient itself
  (`None if v.name in frozen else g`) is a masked gradient."""
  body = flow.labels(node.body, scope, env)
  orelse = flow.labels(node.orelse, scope, env)
  found = union([body, orelse])
  sides = [(body, node.body, node.orelse), (orelse, node.orelse, node.body)]
  yes, no = node.body, node.orelse
  if isinstance(yes, ast.Tuple) and isinstance(no, ast.Tuple) and len(
      yes.elts) == len(no.elts):
    # `(zeros_like(g), v) if frozen(v) else (g, v)`: pair by pair.
    sides = [(flow.labels(a, scope, env), a, b) for pair in zip(
        yes.elts, no.elts) for a, b in (pair, pair[::-1])]
  for branch, branch_node, other_node in sides:
    if "grad" in branch and (
        zero(other_node, scope) or _names.is_none(other_node)) and (
            not _tests_presence(node.test, branch_node)):
      found["masked"] = node
  return found


def zero(node: ast.AST, scope: _scopes.Scope) -> bool:
  """`0`, `tf.zeros(...)`, `[0.0, 0.0]`, or a local name only ever bound
  to zeros."""
  if _names.is_zero(node):
    return True
  if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
    return all(zero(e, scope) for e in node.elts)  # Updates all zeros.
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (
      isinstance(node.left, ast.List)):
    return zero(node.left, scope)  # `[0.0] * dim`.
  if isinstance(node, ast.Call) and _names.call_name(node) in {
      "constant", "convert_to_tensor"} and node.args:
    return zero(node.args[0], scope)  # `tf.constant([0.0] * dim)`.
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  return bool(defs) and all(_names.is_zero(d.value) for d in defs)


def _tests_presence(test: ast.AST, gradient: ast.AST) -> bool:
  """Whether a test asks if a gradient exists or is finite (`g is
  None`, `isinstance(g, IndexedSlices)`, `is_finite(g)`, `g if g else
  0`): a guard, not a choice of what to train."""
  if _names.checks_finite(test):
    return True
  mine = {n.id for n in ast.walk(gradient) if isinstance(n, ast.Name)}
  if mine & {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}:
    return True
  for item in ast.walk(test):
    if isinstance(item, ast.Compare) and any(
        _names.is_none(c) for c in (item.left, *item.comparators)):
      return True
    if isinstance(item, ast.Call) and _names.call_name(item) in {
        "isinstance", "hasattr", "callable"}:
      return True
  return False


def _joined(flow: Flow, node: ast.Call, elements: List[ast.expr],
            scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  """`tf.concat` of parts: a gradient rebuilt with zeros for a part, or a
  variable rebuilt from a stopped slice of itself and the rest."""
  parts = [flow.labels(e, scope, env) for e in elements]
  found = union(parts)
  if any("grad" in p for p in parts) and any(
      zero(e, scope) for e in elements) and not _padding.appended(
          elements, ["grad" in p for p in parts], scope, zero):
    found["masked"] = node  # `concat([zeros_like(old), new_grad])`.
  stopped: Set[str] = set()
  live: Set[str] = set()
  if any("sg" in p for p in parts):
    for each in elements:
      stopped |= variables_in(flow, each, scope, env, stopped=True)
      live |= variables_in(flow, each, scope, env)
  if stopped & live or variable_and_constant(elements, scope):
    found["mix"] = node  # `concat([stop_gradient(x[:n]), x[n:]])`.
  return found


def summed_terms(node: ast.Call) -> Optional[List[ast.expr]]:
  """The two terms `tf.add(a, b)`, `tf.math.add` or `tf.add_n([a, b])`
  sums, or None."""
  name = _names.call_name(node)
  terms: List[ast.expr] = []
  if name in {"add", "add_v2"} and not node.keywords:
    terms = list(node.args)
  elif name in {"add_n", "accumulate_n"} and len(node.args) == 1 and (
      isinstance(node.args[0], (ast.List, ast.Tuple))):
    terms = list(node.args[0].elts)
  return terms if len(terms) == 2 else None


# Calls that build a tensor from parts of others: a scatter, a stitch.
REBUILDS = frozenset({"tensor_scatter_nd_update", "tensor_scatter_update",
                      "dynamic_stitch", "parallel_dynamic_stitch"})


def rebuilt_parts(node: ast.Call) -> Optional[List[ast.expr]]:
  """The tensors a scatter or a stitch builds its result from: the
  tensor and the updates of `tensor_scatter_nd_update(x, ids, updates)`,
  the data of `dynamic_stitch(indices, data)`."""
  args = node.args
  name = _names.call_name(node)
  if name in {"tensor_scatter_nd_update", "tensor_scatter_update"} and (
      len(args) == 3):
    return [args[0], args[2]]
  if name in {"dynamic_stitch", "parallel_dynamic_stitch"} and len(
      args) == 2 and isinstance(args[1], (ast.List, ast.Tuple)):
    return list(args[1].elts)
  return None


def _stitched(flow: Flow, elements: List[ast.expr], scope: _scopes.Scope,
              env: Dict[str, Labels]) -> bool:
  """Whether a scatter or a stitch rebuilds a variable from a stopped
  part of it and its live rest (`tensor_scatter_nd_update(x, ids,
  stop_gradient(gather_nd(x, ids)))`): a mix, as a `concat` of the two."""
  if not any(isinstance(n, ast.Call) and _names.call_name(n) == (
      "stop_gradient") for e in elements for n in ast.walk(e)) and not any(
          "sg" in flow.labels(e, scope, env) for e in elements):
    return False  # (A part unpacked from a partition has no labels.)
  stopped: Set[str] = set()
  live: Set[str] = set()
  for each in elements:
    stopped |= variables_in(flow, each, scope, env, stopped=True)
    live |= variables_in(flow, each, scope, env)
  return bool(stopped & live)


def maker(node: ast.AST, scope: _scopes.Scope) -> Optional[ast.Call]:
  """The call that makes a value: the value itself, or what the one
  assignment to its name assigns."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) != 1:
      return None
    node = defs[0].value
  return node if isinstance(node, ast.Call) else None


def variable_and_constant(elements: List[ast.expr], scope: _scopes.Scope
                           ) -> bool:
  """`concat([Variable(table[:n]), constant(table[n:])])`: one table,
  some rows a variable and the others a constant (DrQA's
  `--tune_partial`)."""
  variables: Set[str] = set()
  constants: Set[str] = set()
  for element in elements:
    value = maker(element, scope)
    if value is None or not value.args:
      continue
    source = value.args[0]
    if not isinstance(source, ast.Subscript):
      continue
    table = ast.unparse(source.value)
    name = _names.call_name(value)
    if name in _names.VARIABLES:
      variables.add(table)
    elif name in {"constant", "convert_to_tensor", "array", "asarray"}:
      constants.add(table)
  return bool(variables & constants)


def _variable(flow: Flow, node: ast.Call, scope: _scopes.Scope,
              env: Dict[str, Labels]) -> Labels:
  found: Labels = {"var": node}
  for keyword in node.keywords:
    if keyword.arg == "trainable" and isinstance(
        keyword.value, ast.Constant) and keyword.value.value is False:
      found["shadow"] = node
  initial = node.args[0] if node.args else next(
      (k.value for k in node.keywords
       if k.arg in {"initial_value", "initializer"}), None)
  if initial is not None:
    inner = flow.labels(initial, scope, env)
    copies = [k for k in inner if k.startswith("copy:")]
    if copies:
      found[copies[0]] = node
    elif "var" in inner or "vararith" in inner or "var" in flow.labels(
        _names.underlying(initial), scope, env):  # `Variable(cast(w))`.
      found[f"copy:{_names.root(initial)}"] = node
  return found


def _where(flow: Flow, node: ast.Call, args: List[ast.AST],
           scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  condition, yes, no = (flow.labels(a, scope, env) for a in args)
  found = {k: v for k, v in {**no, **yes}.items() if k not in {"var"}}
  found.pop("mask", None)
  if not _names.checks_finite(args[0]) and not _finite_name(
      args[0], scope) and "random" not in condition:
    for branch, other in ((yes, args[2]), (no, args[1])):
      if "grad" in branch and zero(other, scope):
        found["masked"] = node
    if "mask" in condition and "random" not in condition and any(
        "sg" in branch for branch in (yes, no)):
      for stopped, live in ((args[1], args[2]), (args[2], args[1])):
        if variables_in(flow, stopped, scope, env, stopped=True) & (
            variables_in(flow, live, scope, env)):
          found["mix"] = node  # `where(m, x, stop_gradient(x))`.
  if "var" in yes or "var" in no:
    found["vararith"] = node
  for kept, other in ((args[1], args[2]), (args[2], args[1])):
    if "mask" in condition and "random" not in condition and zero(
        other, scope) and "var" in flow.labels(kept, scope, env):
      found[f"varmask:{_names.root(kept)}"] = node  # `where(m, w, 0)`.
  copies = [k for k in {**yes, **no} if k.startswith("copy:")]
  if copies and "mask" in condition:
    found[f"restore:{copies[0][5:]}"] = node
  return found


def _finite_name(node: ast.AST, scope: _scopes.Scope, depth: int = 0
                 ) -> bool:
  """Whether a condition is a local name only ever bound to a NaN/Inf
  check (`finite = tf.math.is_finite(g)`), or to the element of a list of
  them zipped with the gradients (`for m, g in zip(finite_mask, grads)`):
  a loss scale's guard, not a freeze."""
  if not isinstance(node, ast.Name) or depth > 2:
    return False
  defs = [d.value for d in scope.defs.get(node.id, [])]
  if not defs or any(v is None for v in defs):
    return False
  for value in defs:
    if isinstance(value, ast.Call) and _names.call_name(value) in {
        "zip", "enumerate"}:
      names = [a for a in value.args if isinstance(a, ast.Name)]
      if not any(_finite_name(a, scope, depth + 1) for a in names) or any(
          "mask" in a.id.lower() and not _finite_name(a, scope, depth + 1)
          for a in names):
        return False
    elif not _names.checks_finite(value) and not _finite_name(
        value, scope, depth + 1):
      return False
  return True


def _other(flow: Flow, node: ast.Call, name: str, args: List[ast.AST],
           scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
  if name == "get" and receiver is not None and "mask" in flow.labels(
      receiver, scope, env):
    return {"mask": node}  # `masks.get(v.name, 1.0)`: one of the masks.
  if receiver is not None and len(args) == 1 and "mask" in flow.labels(
      receiver, scope, env) and not _made_here(receiver, scope) and (
          _masking_method(flow, name)):
    # `masks[i].apply(w)`: a mask object of the project, kept from
    # before, times `w`.
    return binop(flow, node, args[0], receiver, scope, env)
  if name in _names.SNAPSHOTS | {"run", "get_value"}:
    by_argument = name in {"identity", "get_value", "run"}
    base = (args[0] if args else None) if by_argument else receiver
    inner = flow.labels(base, scope, env) if base is not None else {}
    if "grad" in inner:
      return dict(inner)  # `g.numpy()`, `sess.run(grads)`: its values.
    if base is not None and (set(inner) & {"var", "vararith", "param"} or
                             name == "get_weights"):
      return {f"copy:{_names.root(base)}": node}
    if name == "run":
      return {}
  shape = name in _names.SHAPES
  if shape:  # What is reshaped or gathered, not the indices.
    data = args[:1] or [k.value for k in node.keywords if k.arg in _DATA][:1]
    if name in {"concat", "stack"} and len(args) > 1 and isinstance(
        args[0], ast.Constant):
      data = args[1:2]  # TF 0.x's `concat(0, parts)`.
    parts = [flow.labels(a, scope, env) for a in data]
  else:
    parts = [flow.labels(a, scope, env) for a in _not_seeds(args, name)]
    parts += [flow.labels(k.value, scope, env) for k in node.keywords
              if k.arg not in _SEEDS]
  subset = receiver is not None and name in _names.SUBSETS
  if receiver is not None and (shape or name in _names.VIEWS_OF_CONTAINERS
                               or subset):
    parts.append(flow.labels(receiver, scope, env))
  found = union(parts)
  if name == "zip":
    flow.zips[id(node)] = scope
    found["zip"] = node
  if name in _names.CONTAINERS or name in {"group", "tuple"} or subset or (
      _names.joins_lists(node)) or (
      receiver is not None and name in _names.VIEWS_OF_CONTAINERS):
    return found  # `masks.items()`: what the dict holds.
  keep_mask = shape and "mask" in found
  if shape:
    view = name in _names.VIEWS and "var" in found
    found = {k: v for k, v in found.items() if k not in {
        "var", "mask", "filtered", "zip", "fn", "obj", "cls"}}
    if view:  # `tf.gather(table, ids)`: the variable's own elements.
      found["var"] = node
  else:  # What a variable, a mask or a mix becomes here is not known.
    found = {k: v for k, v in found.items() if k in THROUGH_CALLS}
  if keep_mask or _names.is_mask_name(name):
    found["mask"] = node
  return found


# What a gradient call starts its backward pass from, not what it
# differentiates or with respect to what (`tf.gradients(ys, xs, grad_ys)`,
# `tape.gradient(target, sources, output_gradients)`, an optimizer's
# `compute_gradients(loss, var_list, grad_loss=...)`).
_SEEDS = {"grad_ys", "output_gradients", "grad_loss"}


def _not_seeds(args: List[ast.AST], name: str) -> List[ast.AST]:
  """The positional arguments of a call but the gradients it is seeded
  with: the third of a gradient call of another spelling
  (`tf_gradients = gradients_lib.gradients`, a copied
  `gradients_memory(ys, xs, grad_ys)`)."""
  return args[:2] if name.lower().endswith(("gradients", "gradient")) \
      else args


# The keyword of a shape operation's data (`concat(axis=0, values=grads)`).
_DATA = {"values", "tensors", "tensor", "x", "input", "params", "value", "a"}


def _made_here(receiver: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a mask object is made in this function (`masker =
  pruner(p)`): made anew from the weights it masks, it prunes them, it
  keeps no mask from before."""
  defs = scope.defs.get(receiver.id, []) if isinstance(
      receiver, ast.Name) else []
  return bool(defs) and all(isinstance(d.value, ast.Call) and (
      d.part is None and d.outer is None) for d in defs)


def _masking_method(flow: Flow, name: str) -> bool:
  """Whether a method of the project spelled `name` returns its one
  argument times a mask its object holds (`return w * self.mask_`), not a
  projection computed from the argument (`where(abs(w) > t, w, 0)`)."""
  known: Dict[str, bool] = flow.masking_methods
  if name in flow.judging:
    flow.cut()  # Asked again while it is judged: what is known so far.
  if name not in known:
    known[name] = False  # A method reached while it is judged adds nothing.
    flow.judging.add(name)
    try:
      known[name] = _masks_its_argument(flow, name)
    finally:
      flow.judging.discard(name)
  return known[name]


def _masks_its_argument(flow: Flow, name: str) -> bool:
  for scope in flow.project.functions_named((name,)):
    node = scope.node
    if scope.cls is None or scope.parent is None or not isinstance(
        node, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(
            node.args.args) != 2:
      continue
    weight = node.args.args[1].arg
    if any(isinstance(item, ast.Compare) and any(
        isinstance(n, ast.Name) and n.id == weight for n in ast.walk(item))
           for item in scope.nodes):
      continue
    found = flow.helper(node, scope.parent, [{}, {"var": node}])
    if any(k.startswith("varmask:") for k in found):
      return True
  return False
