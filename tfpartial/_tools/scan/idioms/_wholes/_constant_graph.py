"""A head trained on a graph imported as constants: a helper keeps the
variables under the names its callers give (`[v for v in
tf.trainable_variables() if v.name.split('/')[0] in names]`), and each
caller, on a tensor it fetches by name from a graph the project imports
from a `GraphDef` (`tf.import_graph_def`: a frozen `.pb`, constants, no
variables) and restores nothing into, calls only layers named as the
filter keeps, ops that make no weights, graph accessors, and methods or
functions of the project that build no layer. The filter keeps every
variable there is: no freeze. A backbone loaded with its variables
(`import_meta_graph`, `loader.load`, `init_from_checkpoint`,
`load_weights`, a hub module: these read in the modules of the filter
and its callers and those linked to them by an import), any other call
in a caller (a slim net, a Keras layer class, a layer left out of the
names), or a caller fetching nothing by name stays a filter. A script that trains nothing and freezes
or writes a graph (the tool that made the `.pb`) may restore a
checkpoint: its loads feed no step."""

from __future__ import annotations

import ast
import os
import re
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _helper_inputs
from tfpartial._tools.scan.idioms._wholes import _named_scopes

# Calls that build a layer's (or one) variable where they are called.
_MAKERS = {"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose",
           "separable_conv2d", "fully_connected", "get_variable",
           "Variable", "batch_normalization"}
# Calls that load a saved graph together with its variables.
_LOADERS = re.compile(
    r"import_meta_graph|loader\.load|saved_model\.load|\.restore\(")
# Calls that warm-start layers (read in the modules the step's import).
_WARM_STARTS = re.compile(
    r"init_from_checkpoint|load_weights|load_model|\bhub\.")
# Calls that read the imported graph, not build on it.
_ACCESSORS = {"get_tensor_by_name", "get_operation_by_name",
              "get_default_graph", "as_default", "as_graph_def", "device"}
# Layers and ops without weights (`tf.layers.average_pooling2d`).
_POOLS_AND_SHAPES = {"flatten", "Flatten", "Dropout", "relu", "softmax",
                     "sigmoid", "tanh", "argmax", "equal", "shape"}
# Calls of a project helper that build variables.
_BUILDING = _MAKERS | _names.VARIABLES | _named_scopes.LAYER_MAKERS


def keeps_every_variable(analysis: Analysis, step: Step) -> bool:
  """Whether the step's filter keeps, by a parameter of its function,
  the names of the layers each caller builds on a tensor fetched from a
  graph imported as constants (the module's docstring)."""
  chosen = step.labels.get("filtered")
  home = analysis.flow.origin.get(id(chosen), step.scope) if isinstance(
      chosen, ast.AST) else None
  function = home.node if home is not None else None
  if home is None or not isinstance(function, ast.FunctionDef) or (
      not isinstance(chosen, ast.AST)):
    return False
  params = [a.arg for a in function.args.args]
  read = [p for p in params if p != "self" and any(
      isinstance(n, ast.Name) and n.id == p for n in ast.walk(chosen))]
  if len(read) != 1 or not _imports_constants(analysis):
    return False
  position = params.index(read[0]) - (1 if params[:1] == ["self"] else 0)
  project = analysis.project  # Its callers may name no step.
  callers = list(project.calls_named((function.name,), project.all_modules_with(
      (function.name,))))
  near = [project.module_of(home), *(project.module_of(scope)
                                      for scope, _ in callers)]
  return bool(callers) and not _warm_started(project, near) and all(
      _builds_only(project, scope, _given(call, read[0], position, scope))
      for scope, call in callers)


def _warm_started(project: _project.Project,
                  near: List[_project.Module]) -> bool:
  """Whether a module of the filter or its callers, one they import or
  one importing them, warm-starts layers (`init_from_checkpoint`,
  `load_weights`, `load_model`, a hub module): a sibling tool of another
  stack (a Keras script loading its own model) feeds no step."""
  linked = {id(m): m for m in near}
  for module in near:
    linked.update((id(m), m) for m in _imported(project, module))
  for module in project.all_modules_with(
      {os.path.splitext(os.path.basename(m.path))[0] for m in near}):
    if project.parsed(module) is not None and any(
        id(m) in linked for m in _imported(project, module)):
      linked[id(module)] = module
  return any(_WARM_STARTS.search(m.source.text) for m in linked.values())


def _imported(project: _project.Project, module: _project.Module
              ) -> List[_project.Module]:
  """The project's modules that `module` imports."""
  found: List[_project.Module] = []
  for node in ast.walk(module.tree) if module.tree is not None else ():
    if isinstance(node, ast.Import):
      names = [(a.name, 0) for a in node.names]
    elif isinstance(node, ast.ImportFrom):
      names = [(node.module or "", node.level)] + [
          (f"{node.module}.{a.name}" if node.module else a.name, node.level)
          for a in node.names]
    else:
      continue
    found += [m for m in (project.find_module(name, module, level)
                          for name, level in names) if m is not None]
  return found


def _imports_constants(analysis: Analysis) -> bool:
  """Whether the project imports a `GraphDef` and loads no saved graph
  with its variables, nor restores a checkpoint."""
  project = analysis.project
  if not project.all_modules_with(("import_graph_def",)):
    return False
  return not any(
      _LOADERS.search(module.source.text)
      and not _tool(module.source.text, module.wanted)
      for module in project.modules)


def _tool(text: str, trains: bool) -> bool:
  """Whether a module trains nothing and freezes or writes a graph (a
  tool freezing a checkpoint into the `.pb` the training reads): its
  loads feed no step."""
  return not trains and any(word in text for word in (
      "convert_variables_to_constants", "write_graph", "freeze_graph"))


def _given(call: ast.Call, param: str, position: int, scope: _scopes.Scope
           ) -> Optional[ast.expr]:
  """The list of literal names `call` passes as `param` (a list written
  there, or a name bound to one once in the caller)."""
  passed = next((k.value for k in call.keywords if k.arg == param), None)
  if passed is None and 0 <= position < len(call.args):
    passed = call.args[position]
  if isinstance(passed, ast.Name):
    defs = scope.defs.get(passed.id, ())
    passed = defs[0].value if len(defs) == 1 else None
  if isinstance(passed, (ast.List, ast.Tuple)) and passed.elts and all(
      isinstance(e, ast.Constant) and isinstance(e.value, str)
      for e in passed.elts):
    return passed
  return None


def _builds_only(project: _project.Project, scope: _scopes.Scope,
                 given: Optional[ast.expr]) -> bool:
  """Whether the caller `scope` fetches a tensor by name and builds
  layers only under the names of `given` (at least one), every other
  call an op without weights, a graph accessor or a project helper that
  builds nothing."""
  if not isinstance(given, (ast.List, ast.Tuple)):
    return False
  kept = {e.value for e in given.elts
          if isinstance(e, ast.Constant) and isinstance(e.value, str)}
  holder = {name for name, defs in scope.defs.items()
            if any(d.value is given for d in defs)}
  calls = [n for n in scope.nodes if isinstance(n, ast.Call)]
  made = [c for c in calls if _names.call_name(c) in _MAKERS]
  return bool(made) and any(
      _names.call_name(c) == "get_tensor_by_name" for c in calls) and all(
          _named(c, kept, holder) if c in made else _weightless(c) or (
              _builds_nothing(project, scope, c)) for c in calls)


def _weightless(call: ast.Call) -> bool:
  """An op that makes no weights, an initializer or a graph accessor
  (`model.graph().get_tensor_by_name("pool:0")`)."""
  name, dotted = _names.call_name(call), _names.dotted(call.func) or ""
  return name in _helper_inputs.DATA | _ACCESSORS | _POOLS_AND_SHAPES or (
      name.endswith("_initializer")) or "pool" in name.lower() or (
          "graph" in name.lower()) or (
          ".nn." in f".{dotted}" and "rnn" not in dotted.lower())


def _builds_nothing(project: _project.Project, scope: _scopes.Scope,
                    call: ast.Call) -> bool:
  """Whether `call` runs a function or method of the project
  (`self.set_trainable(names)`, `Base.__init__(self, model)`) none of
  whose own calls builds a variable or a layer."""
  dotted = _names.dotted(call.func) or ""
  info = _scopes.enclosing_class(scope)
  callee: Optional[_scopes.Scope] = None
  if dotted.startswith("self.") and dotted.count(".") == 1 and info:
    callee = project.method(info, dotted[5:])
  elif dotted.endswith(".__init__"):
    base = project.resolve(scope, dotted[:-len(".__init__")])
    if isinstance(base, _scopes.ClassInfo):
      callee = project.method(base, "__init__")
  else:
    target = project.resolve(scope, dotted) if dotted else None
    if isinstance(target, tuple):
      callee = target[1].scope_of(target[0])
  return callee is not None and not any(
      isinstance(n, ast.Call) and (_names.call_name(n) in _BUILDING or any(
          part in f".{_names.dotted(n.func) or ''}." for part in (
              ".layers.", ".keras.", ".applications.", "slim.", ".hub.")))
      and not _named_scopes.untrainable(n) for n in callee.nodes)


def _named(call: ast.Call, kept: Set[str], holder: Set[str]) -> bool:
  """Whether a layer call is named one of `kept`: the literal, or an
  element of the list that holds them (`name=names[0]`)."""
  name = next((k.value for k in call.keywords if k.arg == "name"), None)
  if isinstance(name, ast.Constant):
    return name.value in kept
  return isinstance(name, ast.Subscript) and ast.unparse(
      name.value) in holder and isinstance(name.slice, ast.Constant)
