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
own in the project (a data-augmentation stack). Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step

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
