"""Pretrained networks a function builds, and where their output goes:
a slim net or a Keras application (by what its name is imported as), or
a function, class or method of the project that creates trainable
variables, built from pretrained values (the module restores a
checkpoint or warm-starts, `weights='imagenet'`, arrays loaded from
disk); not one set untrainable. The question `_backbone_fed` asks of a
step's module. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    _trainable_variable)
from tfpartial._tools.scan.idioms._wholes import _built_outside

# The image networks of slim's `nets` package (not its GANs' nets).
_SLIM_NETS = frozenset({
    "alexnet", "cifarnet", "inception", "inception_v1", "inception_v2",
    "inception_v3", "inception_v4", "inception_resnet_v2", "lenet",
    "mobilenet", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3", "nasnet",
    "pnasnet", "overfeat", "resnet_v1", "resnet_v2", "vgg", "i3d", "s3dg"})
# What a module calls to put pretrained values into a graph's variables.
_RESTORES = (".restore(", "init_from_checkpoint", "assign_from_checkpoint",
             "load_weights(")

# A network's assignment, and the names its output reaches.
Backbone = Tuple[ast.Assign, FrozenSet[str]]


def backbones(analysis: Analysis, scope: _scopes.Scope) -> List[Backbone]:
  """Each assignment of `scope` that builds a pretrained, trainable
  network, with the names its output reaches there (`net, _ =
  resnet_v1_50(x)`, then `flat = tf.squeeze(net)`: `net`, `flat`), once
  per scan.

  >>> from tfpartial._tools.scan import _files, _project
  >>> code = ("from nets import vgg\\ndef f(x):\\n"
  ...         "  net, _ = vgg.vgg_16(x)\\n  flat = tf.squeeze(net)\\n"
  ...         "saver.restore(sess, path)\\n")
  >>> project = _project.Project([_files.Source("m.py", code)])
  >>> scope = project.parsed(project.modules[0]).children[0]
  >>> [sorted(names) for _, names in backbones(Analysis(project), scope)]
  [['flat', 'net']]
  """
  found = analysis.once(f"backbones {id(scope)}", lambda: _built(
      analysis, scope))
  return found if isinstance(found, list) else []


def created(analysis: Analysis, scope: _scopes.Scope) -> Set[str]:
  """The names (`w`, `self.w`) `scope` binds to trainable variables it
  creates, once per scan."""
  found = analysis.once(f"created variables {id(scope)}", lambda: {
      name for node in scope.nodes if isinstance(node, ast.Assign)
      and _trainable_variable(node.value) for name in targets(node)})
  return found if isinstance(found, set) else set()


def _built(analysis: Analysis, scope: _scopes.Scope) -> List[Backbone]:
  module = analysis.module(scope)
  assigns = sorted((n for n in scope.nodes if isinstance(n, ast.Assign)),
                   key=_idiom.position)
  found: List[Backbone] = []
  for assign in assigns:
    value = assign.value
    if not isinstance(value, ast.Call) or not _builds_network(
        analysis, scope, module, value) or not _pretrained(
            analysis, scope, module, value):
      continue
    derived = targets(assign)
    if any(_set_untrainable(scope, name) for name in derived):
      continue
    for _ in range(3):  # Names bound from names bound later, in loops.
      for other in assigns:
        if other is not assign and not _trainable_variable(other.value) \
            and reads(other.value) & derived:
          derived |= targets(other)
    found.append((assign, frozenset(derived)))
  return found


def _builds_network(analysis: Analysis, scope: _scopes.Scope,
                    module: object, call: ast.Call) -> bool:
  """Whether `call` builds a network with trainable variables."""
  if any(k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
      k.value.value is False) for k in call.keywords):
    return False
  dotted = _names.dotted(call.func)
  if not dotted:
    return False
  parts = _full_name(module, dotted).split(".")
  for index, part in enumerate(parts):
    if part == "nets" and len(parts) > index + 2 and (
        parts[index + 1] in _SLIM_NETS):
      return True
    if part == "applications" and "keras" in parts[:index]:
      return True
  return creates(analysis, scope, dotted)


def _full_name(module: object, dotted: str) -> str:
  """`dotted` with its first part as the module imports it
  (`tf_slim.nets.vgg` of `import tensorflow.contrib.slim as tf_slim`:
  `tensorflow.contrib.slim.nets.vgg`)."""
  first, _, rest = dotted.partition(".")
  where, attribute = getattr(module, "imports", {}).get(first, (first, ""))
  full = f"{where}.{attribute}" if attribute else where
  return f"{full}.{rest}" if rest else full


def creates(analysis: Analysis, scope: _scopes.Scope, dotted: str) -> bool:
  """Whether `dotted` (`build`, `self.model`) names a function, class or
  method of the project that itself creates trainable variables."""
  project = analysis.project
  if dotted.startswith("self.") and dotted.count(".") == 1:
    info = _scopes.enclosing_class(scope)
    method = project.method(info, dotted[5:]) if info is not None else None
    return method is not None and _built_outside._creates(method.node)
  target = project.resolve(scope, dotted)
  if isinstance(target, _scopes.ClassInfo):
    return any(_built_outside._creates(m.node)
               for c in [target, *project.base_classes(target)]
               for m in c.methods.values())
  return isinstance(target, tuple) and _built_outside._creates(target[0])


def _pretrained(analysis: Analysis, scope: _scopes.Scope, module: object,
                call: ast.Call) -> bool:
  """Whether the network `call` builds starts from pretrained values:
  its module restores some, it is asked for published weights
  (`weights='imagenet'`), it is given arrays loaded from disk
  (`net_data = np.load(path).item()`), or its function loads them."""
  text = getattr(getattr(module, "source", None), "text", "")
  if any(word in text for word in _RESTORES):
    return True
  if any(k.arg == "weights" and isinstance(k.value, ast.Constant) and (
      isinstance(k.value.value, str)) for k in call.keywords):
    return True
  given = {n.id for a in [*call.args, *(k.value for k in call.keywords)]
           for n in ast.walk(a) if isinstance(n, ast.Name)}
  if any(_loads(d.value) for name in given
         for d in scope.defs.get(name, ())):
    return True
  dotted = _names.dotted(call.func) or ""
  target = analysis.project.resolve(scope, dotted) if "." not in dotted \
      else None
  return isinstance(target, tuple) and _loads(target[0])


def _loads(node: ast.AST) -> bool:
  """Whether `node` calls `load` (`np.load`, `pickle.load`)."""
  return any(isinstance(n, ast.Call) and _names.call_name(n) == "load"
             for n in ast.walk(node))


def _set_untrainable(scope: _scopes.Scope, name: str) -> bool:
  """`name.trainable = False`, in the function or around it."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    for node in place.nodes:
      if isinstance(node, ast.Assign) and isinstance(
          node.value, ast.Constant) and node.value.value is False and any(
              isinstance(t, ast.Attribute) and t.attr == "trainable" and (
                  _names.dotted(t.value) == name) for t in node.targets):
        return True
    place = place.parent
  return False


def targets(assign: ast.Assign) -> Set[str]:
  """The names (`a`, `self.a`) an assignment binds."""
  return {name for target in assign.targets
          for n in ast.walk(target) if isinstance(
              n, (ast.Name, ast.Attribute))
          for name in [_names.dotted(n)] if name and name not in {
              "self", "_"}}


def reads(node: ast.AST) -> Set[str]:
  """The names (`a`, `self.a`) read in `node`."""
  return {name for n in ast.walk(node) if isinstance(
      n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load)
          for name in [_names.dotted(n)] if name and name != "self"}
