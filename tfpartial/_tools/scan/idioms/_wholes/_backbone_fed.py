"""A head trained on a pretrained backbone built beside it: one function
builds a network (a slim net, `tf.keras.applications`, or a function or
method of the project that creates trainable variables) from pretrained
values (a `Saver`'s restore, a warm start, `weights='imagenet'`, arrays
loaded from disk), then builds the head's layers on its output, in a
scope the step's filter keeps (`with tf.variable_scope("pretrain"):`,
`fully_connected(..., scope="output_layer")`) or from variables it
creates and lists by hand (`var_list=[weight8, bias8]`). The step trains
the head; the backbone, trainable and trained by no other step of the
module, stays at its pretrained values: a freeze, not a whole model.

Not this: a backbone set untrainable (`trainable=False`: the filter
leaves nothing trainable out), a module whose other steps may train it
(a GAN's or an actor-critic's other half, a step over every variable),
a network whose output only meets the trained model's in the loss (a
teacher, a target network), and a network built from fresh values.
Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _trainable_variable, var_list_of)
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
# Calls that build a layer's variables where they are called.
_LAYERS = frozenset({"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose",
                     "separable_conv2d", "fully_connected", "linear"})
# Keywords by which a layer call names the scope of its variables.
_SCOPE_KEYWORDS = {"scope", "name"}


def scope_on_backbone(analysis: Analysis, kept: Set[str], step_call: ast.Call,
                      home: _scopes.Scope, chosen: ast.AST) -> bool:
  """Whether a function of the step's module builds a pretrained
  backbone, outside the scopes `kept`, and then layers in one of them
  that read its output, while no other step of the module may train it.

  >>> code = ("import tensorflow as tf\\nfrom nets import resnet_v1\\n"
  ...         "def build(x):\\n  net, _ = resnet_v1.resnet_v1_50(x)\\n"
  ...         "  with tf.variable_scope('head'):\\n"
  ...         "    return tf.layers.dense(net, 2)\\n")
  >>> from tfpartial._tools.scan import _files, _project
  >>> project = _project.Project([_files.Source("m.py", code + "s.restore(a, b)")])
  >>> an = Analysis(project)
  >>> top = project.parsed(project.modules[0])
  >>> step = ast.parse("opt.minimize(loss, var_list=v)").body[0].value
  >>> scope_on_backbone(an, {"head"}, step, top, ast.Name("v"))
  True
  """
  module = analysis.module(home)
  top = analysis.project.parsed(module)
  if not kept or module.tree is None or top is None or _trained_elsewhere(
      analysis, step_call, home, chosen):
    return False
  for scope in top.all():
    for built, derived in _backbones(analysis, scope, module):
      if any(_idiom.position(node) > _idiom.position(built) and (
          _direct_reads(node) & derived) and _builds_layer(
              analysis, scope, node)
             for node in _in_kept_scopes(scope, kept, built)):
        return True
  return False


def list_on_backbone(analysis: Analysis, chosen: ast.AST,
                     scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether the step's list is written by hand from variables its
  function creates, which the function's layers combine with the output
  of a pretrained backbone it builds, while no other step of the module
  may train that backbone.

  >>> code = ("import numpy as np\\nimport tensorflow as tf\\n"
  ...         "def backbone(x):\\n"
  ...         "  w = tf.Variable(np.load('w.npy'))\\n"
  ...         "  return tf.matmul(x, w)\\n"
  ...         "def train(x):\\n  h = backbone(x)\\n"
  ...         "  w2 = tf.Variable(tf.zeros([4, 2]))\\n"
  ...         "  loss = tf.reduce_sum(tf.matmul(h, w2))\\n"
  ...         "  return opt.minimize(loss, var_list=[w2])\\n")
  >>> from tfpartial._tools.scan import _files, _project
  >>> project = _project.Project([_files.Source("m.py", code)])
  >>> train = project.parsed(project.modules[0]).children[1]
  >>> call = [n for n in train.nodes if isinstance(n, ast.Call)][-1]
  >>> list_on_backbone(Analysis(project), call.keywords[0].value, train, call)
  True
  """
  kept = _hand_list(chosen, scope)
  if not kept:
    return False
  module = analysis.module(scope)
  for built, derived in _backbones(analysis, scope, module):
    if _trained_elsewhere(analysis, call, scope, chosen):
      return False
    if any(_idiom.position(n) > _idiom.position(built) and (
        reads & derived) and reads & kept
           for n in scope.nodes if isinstance(n, ast.Call) and (
               _names.call_name(n) not in STEPS)
           for reads in [_direct_reads(n)]):
      return True
  return False


def _backbones(analysis: Analysis, scope: _scopes.Scope, module: object
               ) -> Iterator[Tuple[ast.Assign, Set[str]]]:
  """Each assignment of `scope` that builds a pretrained, trainable
  network, with the names its output reaches there (`net, _ =
  resnet_v1_50(x)`, then `flat = tf.squeeze(net)`: `net`, `_`, `flat`)."""
  assigns = sorted((n for n in scope.nodes if isinstance(n, ast.Assign)),
                   key=_idiom.position)
  for assign in assigns:
    value = assign.value
    if not isinstance(value, ast.Call) or not _builds_network(
        analysis, scope, module, value) or not _pretrained(
            analysis, scope, module, value):
      continue
    derived = _targets(assign)
    if any(_set_untrainable(scope, name) for name in derived):
      continue
    for _ in range(3):  # Names bound from names bound later, in loops.
      for other in assigns:
        if other is not assign and not _trainable_variable(other.value) \
            and _reads(other.value) & derived:
          derived |= _targets(other)
    yield assign, derived


def _builds_network(analysis: Analysis, scope: _scopes.Scope,
                    module: object, call: ast.Call) -> bool:
  """Whether `call` builds a network with trainable variables: a slim
  net or a Keras application (by what its name is imported as), or a
  function, class or method of the project that creates variables."""
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
  return _creates(analysis, scope, dotted)


def _full_name(module: object, dotted: str) -> str:
  """`dotted` with its first part as the module imports it
  (`tf_slim.nets.vgg` of `import tensorflow.contrib.slim as tf_slim`:
  `tensorflow.contrib.slim.nets.vgg`)."""
  first, _, rest = dotted.partition(".")
  where, attribute = getattr(module, "imports", {}).get(first, (first, ""))
  full = f"{where}.{attribute}" if attribute else where
  return f"{full}.{rest}" if rest else full


def _creates(analysis: Analysis, scope: _scopes.Scope, dotted: str) -> bool:
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


def _restored(text: str) -> bool:
  """Whether a module restores values into its graph (a `Saver`'s or a
  checkpoint's restore, a warm start, Keras weights)."""
  return any(word in text for word in _RESTORES)


def _pretrained(analysis: Analysis, scope: _scopes.Scope, module: object,
                call: ast.Call) -> bool:
  """Whether the network `call` builds starts from pretrained values:
  its module restores some (`_restored`), it is asked for published
  weights (`weights='imagenet'`), it is given arrays loaded from disk
  (`net_data = np.load(path).item()`), or its function loads them."""
  if _restored(getattr(getattr(module, "source", None), "text", "")):
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


def _in_kept_scopes(scope: _scopes.Scope, kept: Set[str], built: ast.AST
                    ) -> Iterator[ast.AST]:
  """The nodes of `scope` inside a `with` opening a scope of `kept`, and
  the layer calls naming one (`scope="output_layer"`); none when the
  backbone itself is built in one."""
  found: List[ast.AST] = []
  for node in scope.nodes:
    if isinstance(node, ast.With) and _built_outside.opens(
        node, kept | {k + "/" for k in kept}):
      inner = list(ast.walk(node))
      if any(n is built for n in inner):
        return
      found += inner
    elif isinstance(node, ast.Call) and any(
        k.arg in _SCOPE_KEYWORDS and isinstance(k.value, ast.Constant) and (
            isinstance(k.value.value, str)) and (
                k.value.value.strip("/").split("/")[0] in kept)
        for k in node.keywords):
      found.append(node)
  yield from found


def _hand_list(chosen: ast.AST, scope: _scopes.Scope) -> Set[str]:
  """The names (`w`, `self.w`) of a list written by hand from variables
  the function creates (`[weight8, bias8]`, or `kept = []` grown by
  `kept.append(self.w1)`), or nothing."""
  elements: List[ast.expr] = []
  if isinstance(chosen, (ast.List, ast.Tuple)):
    elements = list(chosen.elts)
  elif isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, ())
    if not defs or not all(isinstance(d.value, (ast.List, ast.Tuple))
                           for d in defs if d.replaces):
      return set()
    for each in defs:  # A list, or what `append`/`extend` adds to it.
      value = each.value
      elements += list(value.elts) if isinstance(
          value, (ast.List, ast.Tuple)) else [value]
  names = {_names.dotted(e) for e in elements}
  if not elements or None in names:
    return set()
  created = {name for node in scope.nodes if isinstance(node, ast.Assign)
             and _trainable_variable(node.value)
             for name in _targets(node)}
  return {n for n in names if n} if names <= created else set()


def _trained_elsewhere(analysis: Analysis, call: ast.Call,
                       scope: _scopes.Scope, chosen: ast.AST) -> bool:
  """Whether another step of the module may train more than its own
  hand-made list: one over every variable, or over another filter (a
  GAN's or an actor-critic's other half)."""
  module = analysis.module(scope)
  text = ast.unparse(chosen)
  for place, other in analysis.calls_named(STEPS):
    if other is call or analysis.module(place) is not module or (
        _names.call_name(other) == "apply_gradients"):
      continue
    listed = var_list_of(other)
    if listed is None:
      return True
    if ast.unparse(listed) != text and not _hand_list(listed, place):
      return True
  return False


def _targets(assign: ast.Assign) -> Set[str]:
  """The names (`a`, `self.a`) an assignment binds."""
  return {name for target in assign.targets
          for n in ast.walk(target) if isinstance(
              n, (ast.Name, ast.Attribute))
          for name in [_names.dotted(n)] if name and name not in {
              "self", "_"}}


def _builds_layer(analysis: Analysis, scope: _scopes.Scope,
                  node: ast.AST) -> bool:
  """Whether `node` is a call that builds a layer's variables where it
  is called (`tf.layers.dense`, `Dense(10)(x)`, a project function that
  creates variables), not a loss or a summary of a value."""
  if not isinstance(node, ast.Call):
    return False
  if isinstance(node.func, ast.Call):  # `tf.keras.layers.Dense(10)(x)`.
    return _names.call_name(node.func)[:1].isupper()
  name = _names.call_name(node)
  dotted = _names.dotted(node.func)
  return name in _LAYERS or name.lower() in _LAYERS or bool(dotted) and (
      _creates(analysis, scope, dotted or ""))


def _direct_reads(call: ast.AST) -> Set[str]:
  """The names a call's own arguments read, not those of the calls
  inside them (`tf.square(y - tf.matmul(h, w))` reads `y`, not `w`)."""
  found: Set[str] = set()
  if not isinstance(call, ast.Call):
    return found
  stack: List[ast.AST] = [*call.args, *(k.value for k in call.keywords)]
  while stack:
    node = stack.pop()
    if isinstance(node, ast.Call):
      continue
    if isinstance(node, (ast.Name, ast.Attribute)):
      name = _names.dotted(node)
      if name and name != "self":
        found.add(name)
    stack.extend(ast.iter_child_nodes(node))
  return found


def _reads(node: ast.AST) -> Set[str]:
  """The names (`a`, `self.a`) read in `node`."""
  return {name for n in ast.walk(node) if isinstance(
      n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load)
          for name in [_names.dotted(n)] if name and name != "self"}
