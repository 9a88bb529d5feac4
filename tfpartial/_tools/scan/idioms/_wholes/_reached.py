"""What a function's steps train, together, against the network their
filters name a part of.

`tf.get_collection(GLOBAL_VARIABLES, scope='InceptionResnetV2/Conv2d_1a_3x3')`
and `scope='InceptionResnetV2/Conv2d_tr_3x3'`, each `minimize`d on the loss
and the two ops grouped: two filters, but what the run trains is their
union, two layers of a net built under `InceptionResnetV2`, whose loss
reaches every layer of it. Where every filter of a function names a scope
below one root, and the project builds that root's network with a layer
scope right under it that no filter names, the union is a strict subset
of what the loss reaches. Silent where the filters name every scope the
project opens right under the root (`model/generator` and
`model/discriminator`: a GAN's halves, between them the model), or the
root is built nowhere the scan reads.

A `tf.make_template('pixel_cnn', model_spec)` puts every variable its
calls make under its name: a filter keeping that scope, in a module
whose other statements build no layer, keeps the only model the loss
reaches, whatever else the module restores.

A step over a whole model (a filter naming the root scope the project
opens around it) still trains in its run: where its op is grouped,
fetched or returned with another step's (`run_with`), it is one of the
parts the run trains beside the other filters.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterable, Iterator, List, Optional, Set, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes._run_together import _op_of
from tfpartial._tools.scan.idioms._wholes._scopes_untrained import (
    _LAYER_CALLS, bound_names, layer_call)

_OPENERS = {"variable_scope", "name_scope"}
# Where a capitalised name is a layer or a model (`tf.keras.layers.Dense`).
_LIBRARIES = {"keras", "layers", "applications", "slim", "hub", "snt"}
# The keywords that name a layer's scope (`slim.conv2d(..., scope='x')`).
_NAMING = {"scope", "name"}
# Layers that hold no variable: a scope of theirs is nothing to train.
_WEIGHTLESS = re.compile(r"pool|dropout|flatten|concat|reshape|squeeze|"
                         r"identity|activation|softmax|relu|pad|resize",
                         re.IGNORECASE)


def leaves_sub_scopes(project: _project.Project, steps: List[Step]) -> bool:
  """Whether the filters of `steps` (one function's) all keep scopes
  below one root and leave out a scope the project opens right under it.

  >>> leaves_sub_scopes(_project.Project([]), [])
  False
  """
  named = _named(steps)
  if not named:
    return False
  root = {scope[0] for scope in named}
  if len(root) != 1 or any(len(scope) < 2 for scope in named):
    return False
  children = set(_children_of(project, next(iter(root))))
  return bool(children - {scope[1] for scope in named})


def _named(steps: List[Step]) -> List[List[str]]:
  """The scopes the steps' filters keep, split at `/`; none where a step
  trains a list not filtered or a filter leaves its names out."""
  named: List[List[str]] = []
  for step in steps:
    node = step.labels.get("filtered")
    if not isinstance(node, ast.AST) or _names.names_left_out(node):
      return []
    made = [node] + ([] if step.var_list is None else list(
        _scopes.made_from(step.var_list, step.scope)))
    texts = {n.value for each in made for n in ast.walk(each) if isinstance(
        n, ast.Constant) and isinstance(n.value, str)}
    if not texts:
      return []
    named += [text.strip("/").split("/") for text in texts]
  return named


def _children_of(project: _project.Project, root: str) -> Iterator[str]:
  """The scopes the project's code opens or names right under each
  `with tf.variable_scope(...)` that opens `root` (by name or as its
  default name: slim's `variable_scope(scope, 'InceptionResnetV2')`)."""
  if not root.isidentifier():
    return
  for module in project.all_modules_with([root]):
    if project.parsed(module) is None or module.tree is None:
      continue
    for node in _withs(module.tree):
      if any(root in _opened(item.context_expr) for item in node.items):
        yield from _right_under(node.body)


def _withs(tree: ast.Module) -> Iterator[Union[ast.With, ast.AsyncWith]]:
  """Every `with` statement of `tree`, read through its statement lists
  alone (a `with` is a statement: no expression holds one), which is
  what `ast.walk` finds at a fraction of the nodes.

  >>> tree = ast.parse("try:\\n  pass\\nexcept E:\\n  with a:\\n    pass\\n")
  >>> [node.lineno for node in _withs(tree)]
  [4]
  """
  todo: List[ast.AST] = list(tree.body)
  for node in todo:  # Grows as it is read.
    if isinstance(node, (ast.With, ast.AsyncWith)):
      yield node
    for field in _BLOCK_FIELDS:
      block = getattr(node, field, None)
      if isinstance(block, list):
        todo.extend(block)


# The fields that hold statements, handlers (`except`) or `case`s.
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _opened(node: ast.expr) -> Set[str]:
  """The literal names a scope call opens: its name, its default name."""
  if not isinstance(node, ast.Call) or _names.call_name(node) not in (
      _OPENERS):
    return set()
  given = node.args[:2] + [k.value for k in node.keywords if k.arg in {
      "name_or_scope", "default_name", "name"}]
  return {_literal(each) or "" for each in given} - {""}


def _right_under(body: List[ast.stmt]) -> Iterator[str]:
  """The first segment of each scope opened or named in `body` outside
  any other scope that `body` opens."""
  for statement in body:
    if isinstance(statement, (ast.With, ast.AsyncWith)):
      opened = [name for item in statement.items
                for name in sorted(_opened(item.context_expr))]
      if opened:
        yield opened[0].strip("/").split("/")[0]
        continue
    inner = list(_scopes.blocks(statement))
    if inner:
      for block in inner:
        yield from _right_under(block)
      continue
    yield from _layer_names(ast.walk(statement))


def _layer_names(nodes: Iterable[ast.AST]) -> Iterator[str]:
  """The literal scopes calls among `nodes` give their layers."""
  for node in nodes:
    if isinstance(node, ast.Call) and not _WEIGHTLESS.search(
        _names.call_name(node)):
      for keyword in node.keywords:
        text = _literal(keyword.value) if keyword.arg in _NAMING else None
        if text:
          yield text.strip("/").split("/")[0]


def _literal(node: ast.expr) -> Optional[str]:
  """The string `node` writes, else None."""
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  return None


def run_with(step: Step, steps: List[Step]) -> bool:
  """Whether the op of `step` runs with another step's of its function:
  both in one `tf.group(...)`, one `run(...)` or one `return`.

  >>> code = ("def f(loss):\\n"
  ...         "  op1 = opt.minimize(loss, var_list=a)\\n"
  ...         "  op2 = opt.minimize(loss, var_list=b)\\n"
  ...         "  return tf.group(op1, op2)\\n")
  >>> tree = ast.parse(code)
  >>> scope = _scopes.collect(tree).scope_of(tree.body[0])
  >>> one, two = [Step(s.value, scope, None, "loss", {}) for s in (
  ...     tree.body[0].body[:2])]
  >>> run_with(one, [one, two])
  True
  """
  mine = _op_of(step)
  others = {_op_of(o) for o in steps if o is not step and (
      o.scope is step.scope)} - {None}
  if mine is None or not others:
    return False
  for node in _scopes.walk(step.scope.node):
    if isinstance(node, ast.Return) or isinstance(node, ast.Call) and (
        _names.call_name(node) in {"group", "run"}):
      names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
      if mine in names and names & others:
        return True
  return False


def only_template(module: Optional[ast.Module], node: ast.AST) -> bool:
  """Whether the filter `node` keeps exactly the scope of a template the
  module makes (`tf.make_template('pixel_cnn', model_spec)`), and the
  module's statements outside its functions and classes build no other
  layer: the template is the model.

  >>> code = ("net = tf.make_template('pixel_cnn', spec)\\n"
  ...         "out = net(x)\\n"
  ...         "ps = [v for v in vs if 'pixel_cnn' in v.name]")
  >>> tree = ast.parse(code)
  >>> only_template(tree, tree.body[2].value)
  True
  """
  if module is None or _names.names_left_out(node):
    return False
  kept = {n.value.strip("/").split("/")[0] for n in ast.walk(node)
          if isinstance(n, ast.Constant) and isinstance(n.value, str)}
  body = [s for s in module.body if not isinstance(s, _names.DEFINITIONS)]
  templates = {_template_name(call) for s in body for call in ast.walk(s)
               if isinstance(call, ast.Call) and _names.call_name(
                   call) == "make_template"}
  if len(kept) != 1 or templates != kept:
    return False
  bound = bound_names(body)
  return not any(
      _makes_layer(call, bound) for s in body for call in ast.walk(s)
      if isinstance(call, ast.Call))


def _template_name(call: ast.Call) -> Optional[str]:
  """The literal name `make_template` is given, first or as `name_=`."""
  given = call.args[:1] + [k.value for k in call.keywords if k.arg == "name_"]
  return _literal(given[0]) if given else None


def _makes_layer(call: ast.Call,
                 bound: Dict[str, List[Optional[ast.expr]]]) -> bool:
  """Whether a call makes a trainable variable or a layer of TF1's layer
  functions (`layer_call`, `bound` the names the code around it binds),
  Keras, slim or a hub (a script's `DataLoader(...)`, `tf.ConfigProto()`
  make none)."""
  name = _names.call_name(call)
  if name in {"get_variable", "Variable"}:
    return not any(k.arg == "trainable" and isinstance(
        k.value, ast.Constant) and k.value.value is False
                   for k in call.keywords)
  spelled = set((_names.dotted(call.func) or "").split(".")[:-1])
  return name in _LAYER_CALLS and layer_call(call, lambda: bound) or (
      name[:1].isupper() and bool(spelled & _LIBRARIES))
