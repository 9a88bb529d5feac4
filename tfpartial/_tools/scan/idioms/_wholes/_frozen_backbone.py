"""A frozen backbone written as two models (a linear evaluation in a
`GradientTape`): inside the tape one model's output feeds another
(`h = f_net(x, training=False)`, `c_net(h)`), and the step differentiates
only the second's variables (`tape.gradient(loss, c_net.trainable_variables)`)
while the first holds weights of its own: loaded (`f_net.load_weights`,
`load_model`, `weights='imagenet'`), set untrainable, or trained by an
earlier stage of the same project (a step over its variables whose function
never calls the head). The first is left out on purpose: a freeze.

Not this: a model trained by a step that also calls the second (a GAN's
generator feeding the discriminator, each with its own step), one trained
by `fit`, a teacher or target network whose output is only compared with
the trained model's (it feeds no model), and a model with no weights of its
own in the project (a data-augmentation stack).

The same in one TF1 graph (`scope_on_backbone`, `list_on_backbone`): a
function builds a network from pretrained values (`_built_outside.
backbones`: a slim net, `tf.keras.applications`, a network of the
project restored from a checkpoint or from loaded arrays), then the
head's layers on its output, in a scope the step's filter keeps (`with
tf.variable_scope("pretrain"):`, `fully_connected(..., scope=
"output_layer")`) or from variables the function creates and lists by
hand (`var_list=[weight8, bias8]`); the backbone, trainable and trained
by no other step of the module, stays at its pretrained values. Not
this: a backbone set untrainable (the filter leaves nothing trainable
out), a module whose other steps may train it (a GAN's or an
actor-critic's other half, a step over every variable), a network whose
output only meets the trained model's in the loss (a teacher, a target
network). Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, var_list_of)
from tfpartial._tools.scan.idioms._wholes import _built_outside

_VARIABLES = {"trainable_variables", "trainable_weights"}
_LOADS = {"load_weights", "load_model"}
_FITS = {"fit", "fit_generator", "train_on_batch"}


def frozen_backbone(step: Step, every: Sequence[Step]) -> Optional[ast.expr]:
  """The head's variables a tape step differentiates, or None.

  >>> from tfpartial._tools.scan.idioms._wholes import _frozen_backbone as fb
  >>> fb.frozen_backbone(Step(ast.parse("f()").body[0].value, None, None,
  ...                         None, {}), [])
  """
  head = _head(step)
  if head is None or _names.call_name(step.call) != "gradient":
    return None
  tape = _tape_body(step)
  model = head.value
  if tape is None or not isinstance(model, ast.Name):
    return None
  for backbone in _feeding(tape, model.id):
    if _holds_weights(step.scope, backbone, model.id, every):
      return head
  return None


def _head(step: Step) -> Optional[ast.Attribute]:
  """`c_net.trainable_variables`, the whole list of a step."""
  node = step.var_list
  if isinstance(node, ast.Attribute) and node.attr in _VARIABLES and (
      isinstance(node.value, ast.Name)):
    return node
  return None


def _tape_body(step: Step) -> Optional[List[ast.stmt]]:
  """The statements of the `with tf.GradientTape() as tape` whose tape
  the step's `tape.gradient` reads, in the step's function."""
  receiver = step.call.func
  if not isinstance(receiver, ast.Attribute) or not isinstance(
      receiver.value, ast.Name) or step.scope is None:
    return None
  for node in _scopes.walk(step.scope.node):
    if isinstance(node, ast.With):
      for item in node.items:
        if isinstance(item.context_expr, ast.Call) and _names.call_name(
            item.context_expr) == "GradientTape" and isinstance(
                item.optional_vars, ast.Name) and (
                    item.optional_vars.id == receiver.value.id):
          return node.body
  return None


def _feeding(body: List[ast.stmt], head: str) -> List[str]:
  """The models called by name in the tape whose output the head's call
  reads (`h = f_net(x)` then `c_net(h)`, or `c_net(f_net(x))`)."""
  made: Dict[str, str] = {}
  fed: List[str] = []
  for statement in body:
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == head:
          fed += _read_by(node, made)
    if isinstance(statement, ast.Assign) and isinstance(
        statement.value, ast.Call) and isinstance(statement.value.func,
                                                  ast.Name):
      for target in statement.targets:
        if isinstance(target, ast.Name) and statement.value.func.id != head:
          made[target.id] = statement.value.func.id
  return fed


def _read_by(call: ast.Call, made: Dict[str, str]) -> List[str]:
  """The models whose output the call's arguments read."""
  fed: List[str] = []
  for argument in call.args + [k.value for k in call.keywords]:
    for node in ast.walk(argument):
      if isinstance(node, ast.Name) and node.id in made:
        fed.append(made[node.id])
      elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fed.append(node.func.id)
  return fed


def _holds_weights(scope: _scopes.Scope, backbone: str, head: str,
                   every: Sequence[Step]) -> bool:
  """Whether `backbone` is an object the project builds whose weights are
  its own and that no step beside the head (nor `fit`) trains."""
  built = _built(scope, backbone)
  if built is None:
    return False
  root = scope
  while root.parent is not None:
    root = root.parent
  calls = [n for n in _scopes.walk(root.node) if isinstance(n, ast.Call)]
  if any(_on(call, backbone, _FITS) for call in calls):
    return False
  trained = [o for o in every if o.scope is not None and _trains(o, backbone)]
  if any(_calls(o.scope.node, head) for o in trained):
    return False  # Adversarial: each model has its own step.
  return bool(trained) or _loaded(built, calls, backbone) or (
      _set_untrainable(root.node, backbone))


def _built(scope: _scopes.Scope, name: str) -> Optional[ast.Call]:
  """The call that builds the object `name` reads, in a scope around."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    defs = place.defs.get(name, ())
    if defs:
      value = defs[-1].value
      return value if isinstance(value, ast.Call) else None
    place = place.parent
  return None


def _on(call: ast.Call, name: str, methods: Set[str]) -> bool:
  func = call.func
  return isinstance(func, ast.Attribute) and func.attr in methods and (
      isinstance(func.value, ast.Name) and func.value.id == name)


def _trains(step: Step, name: str) -> bool:
  """Whether the step's list (or the list its name is bound to) holds
  `name.trainable_variables`."""
  listed = step.var_list
  if listed is None:
    return False
  if isinstance(listed, ast.Name) and step.scope is not None:
    listed = ast.List([d.value for d in step.scope.defs.get(listed.id, ())])
  return any(
      isinstance(n, ast.Attribute) and n.attr in _VARIABLES and isinstance(
          n.value, ast.Name) and n.value.id == name for n in ast.walk(listed))


def _calls(node: ast.AST, name: str) -> bool:
  return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
             n.func.id == name for n in ast.walk(node))


def _loaded(built: ast.Call, calls: List[ast.Call], name: str) -> bool:
  """Loaded from disk or built with pretrained weights."""
  weights = [k.value for k in built.keywords if k.arg == "weights"]
  return _names.call_name(built) in _LOADS or any(
      _on(call, name, _LOADS) for call in calls) or any(
          isinstance(w, ast.Constant) and isinstance(w.value, str)
          for w in weights)


def _set_untrainable(tree: ast.AST, name: str) -> bool:
  """`backbone.trainable = False`."""
  return any(
      isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and
      n.value.value is False and any(
          isinstance(t, ast.Attribute) and t.attr == "trainable" and
          isinstance(t.value, ast.Name) and t.value.id == name
          for t in n.targets) for n in _scopes.walk(tree))


# Calls that build a layer's variables where they are called.
_LAYERS = frozenset({"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose",
                     "separable_conv2d", "fully_connected", "linear"})
# Keywords by which a layer call names the scope of its variables.
_SCOPE_KEYWORDS = {"scope", "name"}


def scope_on_backbone(analysis: Analysis, kept: Set[str], step_call: ast.Call,
                      home: _scopes.Scope, chosen: ast.AST) -> bool:
  """Whether a function of the step's module builds a pretrained
  backbone, outside the scopes `kept`, then layers in one of them that
  read its output, while no other step of the module may train it.

  >>> from tfpartial._tools.scan import _files, _project
  >>> code = ("import tensorflow as tf\\nfrom nets import resnet_v1\\n"
  ...         "def build(x):\\n  net, _ = resnet_v1.resnet_v1_50(x)\\n"
  ...         "  with tf.variable_scope('head'):\\n"
  ...         "    return tf.layers.dense(net, 2)\\n"
  ...         "saver.restore(sess, path)\\n")
  >>> project = _project.Project([_files.Source("m.py", code)])
  >>> top = project.parsed(project.modules[0])
  >>> step = ast.parse("opt.minimize(loss, var_list=v)").body[0].value
  >>> scope_on_backbone(Analysis(project), {"head"}, step, top,
  ...                   ast.Name("v"))
  True
  """
  module = analysis.module(home)
  top = analysis.project.parsed(module)
  if not kept or module.tree is None or top is None or _trained_elsewhere(
      analysis, step_call, home, chosen):
    return False
  built = analysis.once(f"backbone scopes {id(top)}", lambda: [
      scope for scope in top.all()
      if _built_outside.backbones(analysis, scope)])
  assert isinstance(built, list)  # Once per module: each step's `kept` asks.
  found = analysis.once(f"backbone fed {id(top)} {sorted(kept)}", lambda: any(
      _fed_in_kept(analysis, scope, kept) for scope in built))
  return found is True


def list_on_backbone(analysis: Analysis, chosen: ast.AST,
                     scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether the step's list is written by hand from variables its
  function creates, which the function's layers combine with the output
  of a pretrained backbone it builds, while no other step of the module
  may train that backbone.

  >>> from tfpartial._tools.scan import _files, _project
  >>> code = ("import numpy as np\\nimport tensorflow as tf\\n"
  ...         "def backbone(x):\\n"
  ...         "  w = tf.Variable(np.load('w.npy'))\\n"
  ...         "  return tf.matmul(x, w)\\n"
  ...         "def train(x):\\n  h = backbone(x)\\n"
  ...         "  w2 = tf.Variable(tf.zeros([4, 2]))\\n"
  ...         "  loss = tf.reduce_sum(tf.matmul(h, w2))\\n"
  ...         "  return opt.minimize(loss, var_list=[w2])\\n")
  >>> project = _project.Project([_files.Source("m.py", code)])
  >>> train = project.parsed(project.modules[0]).children[1]
  >>> call = [n for n in train.nodes if isinstance(n, ast.Call)][-1]
  >>> list_on_backbone(Analysis(project), call.keywords[0].value, train,
  ...                  call)
  True
  """
  kept = _hand_list(analysis, chosen, scope)
  built = _built_outside.backbones(analysis, scope) if kept else []
  if not built or _trained_elsewhere(analysis, call, scope, chosen):
    return False
  return any(_idiom.position(n) > _idiom.position(assign) and (
      read & derived) and read & kept
             for assign, derived in built
             for n in scope.nodes if isinstance(n, ast.Call) and (
                 _names.call_name(n) not in STEPS)
             for read in [_direct_reads(n)])


def _fed_in_kept(analysis: Analysis, scope: _scopes.Scope, kept: Set[str]
                 ) -> bool:
  """Whether a layer `scope` builds in a scope of `kept` reads a
  backbone's output, the backbone built before it and outside those
  scopes, and `scope` builds the layers of every scope `kept` names (a
  filter that also keeps the backbone's own scope, `resnet_v1_50`,
  leaves nothing out)."""
  for assign, derived in _built_outside.backbones(analysis, scope):
    depth = _head_depth(analysis, scope, assign)
    nodes, named = _in_kept_scopes(analysis, scope, kept, assign, depth)
    if named >= kept and any(
        _idiom.position(node) > _idiom.position(assign) and (
            _direct_reads(node) & derived) and _builds_layer(
                analysis, scope, node, depth) for node in nodes):
      return True
  return False


def _head_depth(analysis: Analysis, scope: _scopes.Scope,
                built: ast.Assign) -> int:
  """How many project calls deep a head's layer may make its variables
  (`new_fc_layer` calling `new_weights`): two over a backbone whose own
  function reads published weights from a file into its variables, one
  otherwise (a network merely handed loaded arrays may be handed data,
  the final read's x10)."""
  return 2 if _built_outside.initialized_from_file(
      analysis, scope, built.value) else 1


def _in_kept_scopes(analysis: Analysis, scope: _scopes.Scope, kept: Set[str],
                    built: ast.Assign, depth: int = 1
                    ) -> Tuple[List[ast.AST], Set[str]]:
  """The nodes of `scope` inside a `with` opening a scope of `kept`, and
  the layers naming one (`scope="output_layer"`), with the scopes of
  `kept` so opened or named; none when the backbone itself is built in
  one."""
  found: List[ast.AST] = []
  named: Set[str] = set()
  if _named_roots(built.value) & kept:
    return [], set()
  for node in scope.nodes:
    if isinstance(node, ast.With):
      roots = {root for item in node.items
               for root in _named_roots(item.context_expr, first=True)
               if isinstance(item.context_expr, ast.Call) and (
                   _names.call_name(item.context_expr) in _names.TF_SCOPES)}
      if roots & kept:
        inner = list(ast.walk(node))
        if any(n is built for n in inner):
          return [], set()
        found += inner
        named |= roots & kept
    elif isinstance(node, ast.Call) and _named_roots(node) & kept and (
        _builds_layer(analysis, scope, node, depth)):
      found.append(node)
      named |= _named_roots(node) & kept
  return found, named


def _named_roots(call: ast.AST, first: bool = False) -> Set[str]:
  """The root scopes a call names by a literal `scope=` or `name=` (or,
  with `first`, by its first argument: `tf.variable_scope("head")`)."""
  if not isinstance(call, ast.Call):
    return set()
  values = [k.value for k in call.keywords if k.arg in _SCOPE_KEYWORDS]
  values += call.args[:1] if first else []
  return {v.value.strip("/").split("/")[0] for v in values
          if isinstance(v, ast.Constant) and isinstance(v.value, str)}


def _hand_list(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope
               ) -> Set[str]:
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
  made = _built_outside.created(analysis, scope)
  return {n for n in names if n} if names <= made else set()


def _trained_elsewhere(analysis: Analysis, call: ast.Call,
                       scope: _scopes.Scope, chosen: ast.AST) -> bool:
  """Whether another step of the module may train more than its own
  hand-made list: one over every variable, or over another list (a
  GAN's or an actor-critic's other half)."""
  module = analysis.module(scope)
  every, lists = _other_lists(analysis, module)
  text = ast.unparse(chosen)
  return any(each is not call for each in every) or any(
      other != text for other in lists)


def _other_lists(analysis: Analysis, module: object
                 ) -> Tuple[List[ast.Call], Dict[str, int]]:
  """The module's steps over every variable, and the texts of the lists
  its steps train that are not written by hand (with their counts),
  once per scan; `apply_gradients` applies what another step chose."""
  def gather() -> Tuple[List[ast.Call], Dict[str, int]]:
    every: List[ast.Call] = []
    lists: Dict[str, int] = {}
    for place, other in analysis.calls_named(STEPS):
      if analysis.module(place) is not module or (
          _names.call_name(other) == "apply_gradients"):
        continue
      listed = var_list_of(other)
      if listed is None:
        every.append(other)
      elif not _hand_list(analysis, listed, place):
        text = ast.unparse(listed)
        lists[text] = lists.get(text, 0) + 1
    return every, lists

  found = analysis.once(f"other step lists {id(module)}", gather)
  assert isinstance(found, tuple)
  return found


def _builds_layer(analysis: Analysis, scope: _scopes.Scope,
                  node: ast.AST, depth: int = 1) -> bool:
  """Whether `node` is a call that builds a layer's variables where it
  is called (`tf.layers.dense`, `Dense(10)(x)`, a project function that
  creates variables, through `depth` project calls), not a loss or a
  summary of a value."""
  if not isinstance(node, ast.Call):
    return False
  if isinstance(node.func, ast.Call):  # `tf.keras.layers.Dense(10)(x)`.
    return _names.call_name(node.func)[:1].isupper()
  name = _names.call_name(node)
  dotted = _names.dotted(node.func)
  return name in _LAYERS or name.lower() in _LAYERS or bool(dotted) and (
      _built_outside.creates_in_project(analysis, scope, dotted or "", depth))


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
