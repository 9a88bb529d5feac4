"""What a helper given the model's one scope is fed: its function's
inputs, or a model built outside that scope.

`vs_multilayer.vs_multilayer(visual_feature, "APN")` where
`visual_feature` is the function's parameter (jiyanggao/TURN-TAP, CBR)
builds the whole model under "APN"; `feats, _ =
resnet_v1.resnet_v1_50(x)` fed to the same helper is a backbone built
outside it, whatever library builds it (slim, a hub module, a batch
norm, `keras.applications`), and a step training "APN" leaves it out.
Read by data flow, not by the backbone's spelling: any call whose
output reaches the helper counts as a part built outside, but for a
placeholder (whatever its shape is read from), the ops that make no
weights (`tf.nn.*` other than its recurrent nets, `tf.reshape`,
`tf.concat`, ..., `parse_args`'s options) given data, and a function
of the project that returns only data and is given data
(`MODEL.placeholder_inputs(batch, n)`; `flatten(resnet_v1_50(x))`
passes the backbone on). Part of `var-list-filter`'s root scopes
(`_model_named`)."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

# Calls whose output holds no weights of their own: data made or
# reshaped, combined, normalised.
DATA = {"placeholder", "placeholder_with_default", "constant",
         "convert_to_tensor", "zeros", "ones", "zeros_like", "ones_like",
         "reshape", "concat", "stack", "unstack", "squeeze", "expand_dims",
         "transpose", "cast", "to_float", "to_int32", "identity",
         "l2_normalize", "stop_gradient", "dropout", "gather", "split",
         "tile", "pad", "one_hot", "reduce_mean", "reduce_sum",
         "reduce_max", "array", "asarray", "len", "int", "float",
         "parse_args"}  # The command line's options: settings, no weights.
_DEPTH = 12


def fed_inputs(project: _project.Project, module: _project.Module,
               call: ast.Call) -> bool:
  """Whether everything `call` is given (but its literal names) comes
  from its function's inputs: parameters, placeholders, constants, what
  the ops of `DATA` make of them, and what a function of the project
  returning only such values makes of them; never another call's output.

  >>> import textwrap
  >>> from tfpartial._tools.scan import _files
  >>> code = textwrap.dedent('''
  ...     def build(x):
  ...       h = tf.nn.l2_normalize(x, dim=1)
  ...       a = head(h, "APN")
  ...       feats = resnet_v1_50(x)
  ...       b = head(feats, "APN")
  ...     ''')
  >>> project = _project.Project([_files.Source("m.py", code)])
  >>> module = project.modules[0]
  >>> calls = [n for n in ast.walk(project.parsed(module).node)
  ...          if isinstance(n, ast.Call) and _names.call_name(n) == "head"]
  >>> [fed_inputs(project, module, c) for c in calls]
  [True, False]
  """
  inner = project.scopes_at(module, [call.lineno])
  if not inner:
    return False
  given = [*call.args, *(k.value for k in call.keywords)]
  seen: Set[int] = set()
  return all(_data(project, each, inner[0], seen, 0) for each in given)


def _data(project: _project.Project, node: ast.AST, scope: _scopes.Scope,
          seen: Set[int], depth: int) -> bool:
  if depth > _DEPTH:
    return False
  if id(node) in seen or isinstance(node, (ast.Constant, ast.Lambda)):
    return True
  seen.add(id(node))
  if isinstance(node, ast.Call):
    return _data_call(project, node, scope, seen, depth)
  if isinstance(node, ast.Name):
    return all(_data(project, value, home, seen, depth + 1)
               for value, home in _values(node, scope))
  if isinstance(node, ast.Attribute):
    return _data_attribute(project, node, scope, seen, depth)
  if isinstance(node, ast.Subscript):
    return _data(project, node.value, scope, seen, depth + 1)
  return all(_data(project, child, scope, seen, depth + 1)
             for child in ast.iter_child_nodes(node)
             if isinstance(child, (ast.expr, ast.comprehension)))


def _data_call(project: _project.Project, call: ast.Call,
               scope: _scopes.Scope, seen: Set[int], depth: int) -> bool:
  """A call makes data when it is an op of `DATA` (or of `tf.nn` but
  its recurrent nets, which build a cell's weights) of data, and not a
  function of the project's that shares the op's name."""
  dotted = _names.dotted(call.func)
  name = _names.call_name(call)
  weightless = dotted is not None and (name in DATA or (
      ".nn." in f".{dotted}" and "rnn" not in dotted.lower()))
  target = project.resolve(scope, dotted) if dotted is not None else None
  given = [*call.args, *(k.value for k in call.keywords)]
  if isinstance(target, tuple):
    # `MODEL.placeholder_inputs(batch, n)`: a helper of the project that
    # returns only placeholders and what `DATA` makes of its inputs, fed
    # data itself (`flatten(resnet_v1_50(x))` passes a backbone on).
    return _returns_data(project, target, seen, depth) and all(
        _data(project, each, scope, seen, depth + 1) for each in given)
  if not weightless or dotted is None or target is not None:
    return False  # A backbone, a layer, a project's model: built here.
  if name == "placeholder":  # Fed data, whatever its shape is read from.
    return True
  return all(_data(project, each, scope, seen, depth + 1) for each in given)


def _returns_data(project: _project.Project, target: Tuple[
    _scopes.FunctionNode, _scopes.Scope], seen: Set[int], depth: int
                  ) -> bool:
  """Whether every value a function of the project returns is data."""
  function, home = target
  inner = home.scope_of(function)
  returned = [r.value for r in _scopes.walk(function)
              if isinstance(r, ast.Return) and r.value is not None]
  return inner is not None and bool(returned) and all(
      _data(project, value, inner, seen, depth + 1) for value in returned)


def _data_attribute(project: _project.Project, node: ast.Attribute,
                    scope: _scopes.Scope, seen: Set[int], depth: int
                    ) -> bool:
  """`self.x`: what the class assigns it; `model.output`: `model`."""
  dotted = _names.dotted(node) or ""
  info = _scopes.enclosing_class(scope)
  if not dotted.startswith("self.") or info is None:
    return _data(project, node.value, scope, seen, depth + 1)
  own = ".".join(dotted.split(".")[:2])
  return all(_data(project, value, home, seen, depth + 1)
             for value, home in project.attribute(info, own))


def _values(name: ast.Name, scope: _scopes.Scope
            ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """What a read of `name` may hold, in the scope that binds it: nothing
  for a parameter (the function's input) or a name no scope binds."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if name.id in place.params:
      return []
    if name.id in place.defs:
      defs = place.defs[name.id]
      chosen = place.reaching(name.id, name) if place is scope else range(
          len(defs))
      return [(defs[i].value, place) for i in chosen]
    place = place.parent
  return []
