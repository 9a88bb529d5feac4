"""The root scopes a module names by passing them to a helper of the
project: `sdae(x, layers, name="SDAE_Variable")` where `def sdae(...,
name="SDAE")` opens `with tf.variable_scope(name):` around what it
builds, or a class whose `__init__` opens one so
(`ACNetwork(s_size, a_size, 'global', None)`, an asynchronous
actor-critic's global network, whose workers apply their gradients to
it). The helper builds a whole model under the name its caller
chooses, as a `with tf.variable_scope("SDAE_Variable"):` written in the
caller would (an autoencoder beside a matrix factorisation, each with
its own optimizer; an MLP helper called once per network). Part of
`var-list-filter`'s root scopes."""

from __future__ import annotations

import ast
import re
import weakref
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes


def helpers(project: _project.Project) -> Set[str]:
  """The names of the project's functions that open a scope from a
  parameter (read only in modules whose text opens one from a name)."""
  found: Set[str] = set()
  for module in project.modules:
    if _FROM_A_NAME.search(module.source.text) and project.parsed(
        module) and module.tree is not None:
      found.update(f.name for f in _defined(module.tree.body) if (
          _opened_parameter(f) is not None))
      found.update(c.name for c in module.tree.body if isinstance(
          c, ast.ClassDef) and _opened_parameter(_init(c)) is not None)
  return found


# Calls that make variables (or a model of them) where they are written.
_MAKERS = {"from_pretrained", "KerasLayer", "Sequential", "Embedding",
           "LSTM", "GRU", "Conv1D", "Conv3D", "BatchNormalization",
           "LayerNormalization", "MultiHeadAttention"}


def all_scoped(project: _project.Project) -> bool:
  """Whether every call of the project spelled as one that makes a
  variable or a layer (`tf.get_variable`, `tf.layers.dense`, the Keras
  layers of `_MAKERS`, `from_pretrained`, a `keras.applications.` model
  written so), but one made with `trainable=False`, is written inside a
  `with ..._scope(...)`, or in a module-level helper that the project
  calls, and reads, only so (`instance_norm`'s `tf.get_variable('shift')`,
  called under a layer's scope: `_scoped_calls`). A spelling only: a
  backbone built by another library's call is not seen here, but by
  what it feeds (`_helper_inputs`)."""
  helpers: List[ast.FunctionDef] = []
  for module in project.modules:
    if project.parsed(module) is None or module.tree is None:
      continue
    tree = module.tree
    for node in _outside(tree):
      dotted = f".{_names.dotted(node.func) or ''}." if isinstance(
          node, ast.Call) else ""
      if isinstance(node, ast.Call) and ".nn." not in dotted and (
          _names.call_name(node) in _names.VARIABLES | _LAYER_CALLS | (
              _MAKERS) or ".applications." in dotted) and not (
                  untrainable(node)):
        line = node.lineno  # Not `tf.nn.conv2d(x, weights)`: weights given.
        helper = next((f for f in tree.body if isinstance(
            f, ast.FunctionDef) and f.lineno <= line <= (
                f.end_lineno or 0)), None)
        if helper is None:
          return False
        helpers.append(helper)
  if not helpers:
    return True
  scoped = _scoped_calls(project, {h.name for h in helpers})
  return all(id(h) in scoped for h in helpers)


def _scoped_calls(project: _project.Project, names: Set[str]
                  ) -> Set[int]:
  """The module-level functions (by id) of the names `names` that the
  project calls under a `with ..._scope(...)` (resolved from where the
  call is written), while it reads none of the names otherwise: a call
  outside any scope, an alias import (`import instance_norm as inorm`),
  a value (`[MODEL_GEN.instance_norm]`, `partial(instance_norm)`) each
  counts as a call outside. One pass per module naming one of them."""
  inside: Dict[int, str] = {}  # id(function) -> its name.
  read_outside: Set[str] = set()
  for module in project.all_modules_with(names):
    tree = module.tree
    if tree is None:
      continue
    outside = _outside_ids(tree)
    called = {id(n.func): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
      if isinstance(node, ast.alias):
        if node.name.rpartition(".")[2] in names and node.asname not in (
            None, node.name):
          read_outside.add(node.name.rpartition(".")[2])
        continue
      name = node.id if isinstance(node, ast.Name) else node.attr if (
          isinstance(node, ast.Attribute)) else None
      if name not in names or not isinstance(getattr(node, "ctx", None),
                                             ast.Load):
        continue
      call = called.get(id(node))
      if call is None or id(call) in outside:
        read_outside.add(name)
        continue
      inner = project.scopes_at(module, [call.lineno])
      target = project.resolve(inner[0], _names.dotted(node) or "") if (
          inner) else None
      if isinstance(target, tuple):
        inside[id(target[0])] = name
  return {key for key, name in inside.items() if name not in read_outside}


def untrainable(call: ast.Call) -> bool:
  """Whether `call` makes a variable kept out of the trainable ones
  (`step = tf.Variable(0, trainable=False)`, a step counter): no filter
  of trainable variables sees it, so it is no layer of the model."""
  return any(k.arg == "trainable" and isinstance(k.value, ast.Constant)
             and k.value.value is False for k in call.keywords)


def _init(cls: ast.ClassDef) -> Optional[ast.FunctionDef]:
  """A class's own `__init__`, if it has one."""
  return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and (
      f.name == "__init__")), None)


def _defined(body: List[ast.stmt]) -> Iterator[ast.FunctionDef]:
  """A module's functions and its classes' methods."""
  for statement in body:
    if isinstance(statement, ast.FunctionDef):
      yield statement
    elif isinstance(statement, ast.ClassDef):
      yield from _defined(statement.body)


# `variable_scope(name)`, `name_scope(scope,`: a scope from a name.
_FROM_A_NAME = re.compile(r"_scope\(\s*[A-Za-z_]\w*\s*[,)]")


def passed(project: _project.Project, module: _project.Module,
           named: Set[str]) -> Set[str]:
  """The literal names calls of `module` give a helper of the project
  (of the names `named`, from `helpers`) for the scope it opens first."""
  return {name for _, name in given(project, module, named)}


def given(project: _project.Project, module: _project.Module,
          named: Set[str]) -> List[Tuple[ast.Call, str]]:
  """Each call of `module` that gives a helper of the project (of the
  names `named`) a literal name for the scope it opens first, with the
  name."""
  found: List[Tuple[ast.Call, str]] = []
  if module.scope is None or module.tree is None or not any(
      f"{name}(" in module.source.text for name in named):
    return found
  for call, function, skipped, value in _literal_arguments(
      project, module, named):
    # `ACNetwork(s, a, 'global')`: the class's `__init__` opens the scope.
    opened = _opened_parameter(function)
    if opened is not None and _gives_scope(function, value, opened, skipped):
      found.append((call, _text(call, value)))
  for call, method, value in _self_arguments(module.tree, named):
    # `self._encoder(x, name='teacher')`: the class's own method opens it.
    opened = _opened_parameter(method)
    if opened is not None and _gives_scope(method, value, opened, 1):
      found.append((call, _text(call, value)))
  return found


def _gives_scope(function: ast.FunctionDef, value: object, opened: object,
                 skipped: int = 0) -> bool:
  """Whether the keyword or position `value` of a call of `function`
  (`skipped`: `self`) is the parameter `opened` it opens as a scope."""
  positional = [a.arg for a in (*function.args.posonlyargs,
                                *function.args.args)][skipped:]
  return value == opened or isinstance(value, int) and (
      value < len(positional) and positional[value] == opened)


def layer_groups(project: _project.Project, named: Set[str]
                 ) -> List[FrozenSet[str]]:
  """The names each module gives a one-layer helper of the project (of
  `named`, from `helpers`) it calls with two names or more
  (`fc_layer(fc7, 4096, 14, name='fc8')` beside `name='fc7'`): layers
  of one model, each a root scope but none a whole model."""
  groups: List[FrozenSet[str]] = []
  for module in project.modules:
    if not any(f"{name}(" in module.source.text for name in named) or (
        not project.parsed(module)) or module.tree is None or (
            module.scope is None):
      continue
    names: Dict[int, Set[str]] = {}
    for call, function, skipped, value in _literal_arguments(
        project, module, named):
      if not skipped and _gives_scope(
          function, value, _opened_parameter(function)) and _one_layer(
              function):
        names.setdefault(id(function), set()).add(_text(call, value))
    for call, method, value in _self_arguments(module.tree, named):
      if _gives_scope(method, value, _opened_parameter(method), 1) and (
          _one_layer(method)):
        names.setdefault(id(method), set()).add(_text(call, value))
    groups += [frozenset(each) for each in names.values() if len(each) > 1]
  return groups


# What builds one layer's variables: a layers call or a weight by hand.
_LAYER_CALLS = {"conv1d", "conv2d", "conv3d", "conv2d_transpose", "dense",
                "fully_connected", "separable_conv2d", "Conv2D", "Dense"}
_MADE_BY_HAND = {"get_variable", "Variable"}
# Every call spelled as one that builds a layer or a model.
LAYER_MAKERS = frozenset(_LAYER_CALLS | _MAKERS)


def _one_layer(function: ast.FunctionDef) -> bool:
  """Whether a helper builds one layer: no loop, and a single layers
  call (`tf.layers.conv2d`, not `tf.nn.conv2d`) or a weight and a bias
  made by hand.

  >>> _one_layer(ast.parse(
  ...     "def fc(x, name):\\n"
  ...     "  with tf.variable_scope(name):\\n"
  ...     "    w = tf.get_variable('w', [4, 4])\\n"
  ...     "    return tf.matmul(x, w)\\n").body[0])
  True
  """
  layers = made = 0
  for node in _scopes.walk(function):
    if isinstance(node, (ast.For, ast.While, ast.comprehension)):
      return False
    if isinstance(node, ast.Call):
      name, dotted = _names.call_name(node), _names.dotted(node.func) or ""
      made += name in _MADE_BY_HAND
      layers += name in _LAYER_CALLS and ".nn." not in f".{dotted}"
  return (layers, made) in {(1, 0), (0, 1), (0, 2)}


def _literal_arguments(project: _project.Project, module: _project.Module,
                       named: Set[str]
                       ) -> Iterator[Tuple[ast.Call, ast.FunctionDef, int,
                                           object]]:
  """(call, the helper it calls, the positions its `self` takes, keyword
  name or position) of each string literal given to a call of a helper
  of the project (of the names `named`) outside any scope (inside one,
  the name is a part's: `fc('v2s_lt', x)` under `with
  tf.variable_scope('CTRL_Model'):`). The callee is resolved from where
  the call is written: `vs_multilayer.vs_multilayer(x, "APN")` names the
  project module's helper; `slim.conv2d(x, 64, scope='conv1')`, a
  library's, or `convs.conv2d(...)` of a parameter, names none."""
  assert module.tree is not None
  for node in _named_calls(module.tree):
    if _names.call_name(node) not in named:
      continue
    spelled = _names.dotted(node.func) or ""
    inner = project.scopes_at(module, [node.lineno])
    target = project.resolve(inner[0], spelled) if inner else None
    function, skipped = (_init(target.node), 1) if isinstance(
        target, _scopes.ClassInfo) else (target[0], 0) if isinstance(
            target, tuple) else (None, 0)
    if not isinstance(function, ast.FunctionDef):
      continue
    for index, argument in enumerate(node.args):
      if _string(argument):
        yield node, function, skipped, index
    for keyword in node.keywords:
      if keyword.arg and _string(keyword.value):
        yield node, function, skipped, keyword.arg


def _self_arguments(tree: ast.Module, named: Set[str]
                    ) -> Iterator[Tuple[ast.Call, ast.FunctionDef, object]]:
  """(call, method, keyword name or position after `self`) of each
  string literal given to a call of a method of the caller's own class
  (of the names `named`) outside any scope: `self._encoder(x,
  name='teacher')` in a class whose `_encoder` opens
  `tf.variable_scope(name)`, as `sdae(x, name='ae')` does for a
  function."""
  for cls in tree.body:
    if not isinstance(cls, ast.ClassDef):
      continue
    methods = {f.name: f for f in cls.body if isinstance(
        f, ast.FunctionDef) and f.name in named}
    if not methods:
      continue
    for node in _outside_scopes(cls):
      if not isinstance(node, ast.Call) or not isinstance(
          node.func, ast.Attribute) or _names.dotted(
              node.func.value) != "self" or node.func.attr not in methods:
        continue
      method = methods[node.func.attr]
      for index, argument in enumerate(node.args):
        if _string(argument):
          yield node, method, index
      for keyword in node.keywords:
        if keyword.arg and _string(keyword.value):
          yield node, method, keyword.arg


def _named_calls(tree: ast.AST) -> List[ast.Call]:
  """The calls of a bare name (`sdae(...)`) or of a module's function
  (`nets.sdae(...)`) under `tree` that no `with ..._scope(...)` holds,
  found once per tree (each step asks again)."""
  kept = _NAMED_CALLS.get(tree)
  if kept is None:
    kept = _NAMED_CALLS[tree] = [
        node for node in _outside(tree) if isinstance(
            node, ast.Call) and (isinstance(node.func, ast.Name) or (
                isinstance(node.func, ast.Attribute) and isinstance(
                    node.func.value, ast.Name) and (
                        node.func.value.id != "self")))]
  return kept


def _outside(tree: ast.AST) -> List[ast.AST]:
  """`_outside_scopes(tree)`, walked once per tree."""
  kept = _OUTSIDE.get(tree)
  if kept is None:
    nodes = list(_outside_scopes(tree))
    kept = _OUTSIDE[tree] = (nodes, {id(node) for node in nodes})
  return kept[0]


def _outside_ids(tree: ast.AST) -> Set[int]:
  """The ids of `_outside(tree)`."""
  _outside(tree)
  return _OUTSIDE[tree][1]


# Per tree (weakly: a scan's trees go when it ends).
_NAMED_CALLS: weakref.WeakKeyDictionary[ast.AST, List[ast.Call]] = (
    weakref.WeakKeyDictionary())
_OUTSIDE: weakref.WeakKeyDictionary[
    ast.AST, Tuple[List[ast.AST], Set[int]]] = weakref.WeakKeyDictionary()


def _outside_scopes(node: ast.AST) -> Iterator[ast.AST]:
  """The nodes under `node` that no `with ..._scope(...)` holds, in the
  order of a recursive walk (but for a single `Load` or `+`), read from
  one stack: a module's every node, once."""
  stack = _scopes.children(node)[::-1]
  while stack:
    child = stack.pop()
    yield child
    if not (isinstance(child, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and _names.call_name(
            i.context_expr) in _names.TF_SCOPES for i in child.items)):
      stack.extend(_scopes.children(child)[::-1])


def _string(node: ast.AST) -> bool:
  return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
      bool(node.value))


def _text(call: ast.Call, where: object) -> str:
  """The literal at a position or keyword of `call`."""
  node = call.args[where] if isinstance(where, int) else next(
      k.value for k in call.keywords if k.arg == where)
  assert isinstance(node, ast.Constant)
  return str(node.value)


def _opened_parameter(function: Optional[ast.AST]) -> Optional[str]:
  """The parameter a function opens as a scope around all it builds."""
  return _opened_scopes.parameter(function, outermost=True)
