"""Whether a model is built outside the scope a filter keeps: a function
opens `with tf.variable_scope("text_objseg"):` around the network it adds
and trains, but builds the pretrained backbone before it, outside that
scope, and reads the backbone's outputs (`resnet = DeepLabResNetModel(
...)`; `self.feat = resnet.layers['res5c']`). A step that trains only
that scope leaves the backbone fixed: a part of the model, not the whole
one its root scope would otherwise name. The same of a backbone built in
a sibling scope of any module (`_beside_sibling`). Also which
pretrained networks a function builds and where their output goes
(`backbones`: a slim net, a Keras application, a network of the project
restored from a checkpoint or from loaded arrays), which
`_frozen_backbone` asks of a graph's head."""

from __future__ import annotations

import ast
import re
from typing import (Dict, FrozenSet, Iterator, List, Optional, Set,
                    Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    _trainable_variable)


def built_outside(analysis: Analysis, kept: Set[str],
                  home: _scopes.Scope) -> bool:
  """Whether a function of `home`'s module opens one of the scopes
  `kept` after building, outside any scope, a model of the project (a
  class or function that creates trainable variables) whose result a
  later statement of the function reads."""
  module = analysis.module(home)
  tree = module.tree
  top = analysis.project.parsed(module)
  if tree is None or top is None or not kept:
    return False
  if _beside_sibling(analysis, kept, tree):
    return True
  found = analysis.once(f"opened after a build {id(module)}",
                        lambda: _opened_after_build(analysis, top, tree))
  return isinstance(found, set) and bool(found & kept)


def _opened_after_build(analysis: Analysis, top: _scopes.Scope,
                        tree: ast.AST) -> Set[str]:
  """The scopes a `with` of some function of `tree` opens after an
  earlier statement of its body builds a model of the project that a
  later one reads: read once per module, however many lists ask."""
  found: Set[str] = set()
  for function in ast.walk(tree):
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    body = function.body
    opened = [(index, names) for index, statement in enumerate(body)
              if isinstance(statement, ast.With) for names in [{
                  n for i in statement.items
                  for n in [_opened_scopes.literal(i.context_expr)]
                  if n is not None} - found] if names]
    built = len(body)  # The first statement building a model read later.
    for number, statement in enumerate(body[:opened[-1][0]] if opened
                                       else []):
      if _builds(analysis, top, statement) and _read_later(
          statement, body[number + 1:]):
        built = number
        break
    found.update(n for index, names in opened if index > built
                 for n in names)
  return found


def opens(statement: ast.stmt, kept: Set[str]) -> bool:
  """`with tf.variable_scope("name"):` for a name of `kept`."""
  return isinstance(statement, ast.With) and any(
      _opened_scopes.literal(i.context_expr) in kept
      for i in statement.items)


def _builds(analysis: Analysis, top: _scopes.Scope, statement: ast.stmt
            ) -> bool:
  """`name = Model(...)` for a model of the project."""
  if not isinstance(statement, ast.Assign) or not isinstance(
      statement.value, ast.Call) or len(statement.targets) != 1 or (
          not isinstance(statement.targets[0], ast.Name)):
    return False
  dotted = _names.dotted(statement.value.func)
  target = analysis.project.resolve(top, dotted) if dotted else None
  if isinstance(target, _scopes.ClassInfo):
    classes = [target, *analysis.project.base_classes(target)]
    return any(_creates(m.node) for c in classes
               for m in c.methods.values())
  return isinstance(target, tuple) and _creates(target[0])


def _creates(function: ast.AST) -> bool:
  """Whether `function` itself creates a variable that is not set
  untrainable by a literal."""
  return any(_names.call_name(c) in _names.VARIABLES and not any(
      k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
          k.value.value is False) for k in c.keywords)
             for c in _calls(function))


def _calls(function: ast.AST) -> Iterator[ast.Call]:
  return (n for n in ast.walk(function) if isinstance(n, ast.Call))


def _read_later(statement: ast.stmt, later: List[ast.stmt]) -> bool:
  """Whether a statement of `later` reads the name `statement` binds."""
  name = getattr(statement, "targets")[0].id
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Load) for s in later for n in ast.walk(s))


def _beside_sibling(analysis: Analysis, kept: Set[str], home: ast.AST
                    ) -> bool:
  """Whether a function of the project opens one of the scopes `kept`
  after a sibling scope (`with tf.variable_scope("Feature_Extractor"):`
  then `with tf.variable_scope("Head"):`) in which it builds a model of
  the project whose result the kept scope's block reads: the backbone
  beside the head, left fixed by a step that trains only the head. Not
  a sibling the step's module names otherwise (a GAN's other half, a
  filter keeping both scopes). Only the modules that may open a kept
  scope are read (`_Opening`, indexed once per analysis)."""
  named: Optional[Set[str]] = None
  opening = analysis.once("sibling opening", lambda: _Opening(
      analysis.project.modules))
  assert isinstance(opening, _Opening)
  for module in opening.candidates(kept):
    top = analysis.project.parsed(module)
    tree = module.tree
    if top is None or tree is None:
      continue
    if named is None:
      found = analysis.once(f"named roots {id(home)}", lambda: _named(home))
      named = found if isinstance(found, set) else set()
    pairs = analysis.once(f"sibling reads {id(module)}",
                          lambda: _sibling_reads(analysis, top, tree))
    if isinstance(pairs, list) and any(
        opened & kept and not earlier & (kept | named)
        for opened, earlier in pairs):
      return True
  return False


class _Opening:
  """The modules whose text opens a scope (`_scope(`); once parsed, by
  the words they write (a `with` opening a kept scope by a literal name
  writes it). A module not parsed yet is matched by its text, as a scan
  of every module would, and parsed only then."""

  def __init__(self, modules: List[_project.Module]):
    self._positions = {id(m): p for p, m in enumerate(modules)}
    self._waiting = [m for m in modules if "_scope(" in m.source.text]
    self._parsed: List[_project.Module] = []
    self._by_word: Dict[str, List[_project.Module]] = {}

  def candidates(self, kept: Set[str]) -> List[_project.Module]:
    """The modules whose text opens a scope and holds one of `kept`, in
    the project's order (a parsed one only if it writes a word of
    `kept`, or holds a name of `kept` that is no word)."""
    done = [m for m in self._waiting if m.scope is not None or m.error]
    if done:
      self._take(done)
    found: Dict[int, _project.Module] = {}
    for k in kept:
      if _WORD.fullmatch(k):
        found.update((id(m), m) for m in self._by_word.get(k, ()))
      else:
        found.update((id(m), m) for m in self._parsed if k in m.source.text)
    for module in self._waiting:
      text = module.source.text
      for k in kept:
        if k in text:
          found[id(module)] = module
          break
    return [m for m in sorted(found.values(),
                              key=lambda m: self._positions[id(m)])
            if any(k in m.source.text for k in kept)]

  def _take(self, done: List[_project.Module]) -> None:
    taken = {id(m) for m in done}
    self._waiting = [m for m in self._waiting if id(m) not in taken]
    for module in done:
      if module.scope is None or module.tree is None:
        continue
      self._parsed.append(module)
      for word in module.words:
        self._by_word.setdefault(word, []).append(module)


_WORD = re.compile(r"\w+")


# The scopes a `with` opens, and those of an earlier sibling `with` of
# the same body that builds a model of the project the first one reads.
SiblingRead = Tuple[FrozenSet[str], FrozenSet[str]]


def _sibling_reads(analysis: Analysis, top: _scopes.Scope, tree: ast.AST
                   ) -> List[SiblingRead]:
  """Each (scopes opened, scopes of an earlier sibling) of the bodies of
  `tree`'s functions where the later block reads a name the earlier one
  binds to a model built, for every scope at once: read once per
  module, however many lists ask."""
  found: List[SiblingRead] = []
  for function in _scopes.walk(tree):
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    body = function.body
    withs = [(index, statement, _literals(statement))
             for index, statement in enumerate(body)
             if isinstance(statement, ast.With)]
    built: Dict[int, Set[str]] = {}  # Index of a sibling -> names built.
    for index, statement, opened in withs:
      if not opened:
        continue
      read: Optional[Set[Optional[str]]] = None
      for number, earlier, scopes in withs:
        if number >= index or _opened_scopes.literal(
            earlier.items[0].context_expr) is None:
          continue
        if number not in built:
          built[number] = {getattr(s, "targets")[0].id for s in earlier.body
                           if _builds(analysis, top, s)}
        if not built[number]:
          continue
        read = {_names.dotted(n) for n in ast.walk(statement) if isinstance(
            n, (ast.Name, ast.Attribute))} if read is None else read
        if built[number] & read:
          found.append((frozenset(opened), frozenset(scopes)))
  return found


def _literals(statement: ast.With) -> Set[str]:
  """The scopes a `with` opens by literal names."""
  return {n for i in statement.items
          for n in [_opened_scopes.literal(i.context_expr)] if n is not None}


def _named(tree: ast.AST) -> Set[str]:
  """The root scopes a module's strings name, but for the scopes its
  `with` statements open."""
  opened = {id(getattr(i.context_expr, "args")[0]) for n in ast.walk(tree)
            if isinstance(n, ast.With) for i in n.items
            if getattr(i.context_expr, "args", None)}
  return {n.value.strip("/").split("/")[0] for n in ast.walk(tree)
          if isinstance(n, ast.Constant) and isinstance(n.value, str)
          and id(n) not in opened}


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
  found = analysis.once(f"backbones {id(scope)}", lambda: _built_backbones(
      analysis, scope))
  return found if isinstance(found, list) else []


def created(analysis: Analysis, scope: _scopes.Scope) -> Set[str]:
  """The names (`w`, `self.w`) `scope` binds to trainable variables it
  creates, once per scan."""
  found = analysis.once(f"created variables {id(scope)}", lambda: {
      name for node in scope.nodes if isinstance(node, ast.Assign)
      and _trainable_variable(node.value) for name in targets(node)})
  return found if isinstance(found, set) else set()


def _built_backbones(analysis: Analysis, scope: _scopes.Scope) -> List[Backbone]:
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
  return creates_in_project(analysis, scope, dotted)


def _full_name(module: object, dotted: str) -> str:
  """`dotted` with its first part as the module imports it
  (`tf_slim.nets.vgg` of `import tensorflow.contrib.slim as tf_slim`:
  `tensorflow.contrib.slim.nets.vgg`)."""
  first, _, rest = dotted.partition(".")
  where, attribute = getattr(module, "imports", {}).get(first, (first, ""))
  full = f"{where}.{attribute}" if attribute else where
  return f"{full}.{rest}" if rest else full


def creates_in_project(analysis: Analysis, scope: _scopes.Scope, dotted: str,
                       depth: int = 1) -> bool:
  """Whether `dotted` (`build`, `self.model`) names a function, class or
  method of the project that itself creates trainable variables; with
  `depth` above 1, also a function that calls, by a plain name, a
  function of the project that does (`new_fc_layer` calling
  `new_weights`, which returns a `tf.Variable`), so deep."""
  project = analysis.project
  if dotted.startswith("self.") and dotted.count(".") == 1:
    info = _scopes.enclosing_class(scope)
    method = project.method(info, dotted[5:]) if info is not None else None
    return method is not None and _creates(method.node)
  target = project.resolve(scope, dotted)
  if isinstance(target, _scopes.ClassInfo):
    return any(_creates(m.node)
               for c in [target, *project.base_classes(target)]
               for m in c.methods.values())
  if not isinstance(target, tuple):
    return False
  function, home = target
  if depth < 2 or not isinstance(home, _scopes.Scope):
    return _creates(function)
  return bool(analysis.once(
      f"creates in project {id(function)} {depth}",
      lambda: _creates(function) or _calls_creating(
          analysis, home.scope_of(function), function, depth)))


def _calls_creating(analysis: Analysis, own: Optional[_scopes.Scope],
                    function: ast.AST, depth: int) -> bool:
  """Whether `function` calls, by a plain name resolved in its own scope
  (`own`), a function of the project that creates variables (each
  name followed once)."""
  names = {c.func.id for c in _calls(function) if isinstance(
      c.func, ast.Name) and c.func.id != getattr(function, "name", "")}
  return own is not None and any(
      creates_in_project(analysis, own, name, depth - 1)
      for name in sorted(names))


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
  return isinstance(target, tuple) and (
      _loads(target[0]) or _initialized_from_file(target[0]))


def initialized_from_file(analysis: Analysis, scope: _scopes.Scope,
                          call: ast.AST) -> bool:
  """Whether the project function `call` builds a network with reads a
  MATLAB file into its variables' initial values (`_initialized_from_
  file`): published weights, not data handed in."""
  dotted = _names.dotted(call.func) or "" if isinstance(
      call, ast.Call) else ""
  target = analysis.project.resolve(scope, dotted) if dotted and (
      "." not in dotted) else None
  if not isinstance(target, tuple):
    return False
  function = target[0]
  found = analysis.once(f"initialized from file {id(function)}",
                        lambda: _initialized_from_file(function))
  return found is True


def _loads(node: ast.AST) -> bool:
  """Whether `node` calls `load` (`np.load`, `pickle.load`)."""
  return any(isinstance(n, ast.Call) and _names.call_name(n) == "load"
             for n in ast.walk(node))


def _initialized_from_file(function: ast.AST) -> bool:
  """Whether a value `function` reads from a MATLAB file
  (`scipy.io.loadmat`: MatConvNet's published weights) reaches a
  variable's initial value (`tf.Variable(kernel)`,
  `get_variable(initializer=...)`, `constant_initializer(...)`); a
  data set or a mean image read the same way does not count."""
  loaded: Set[str] = set()

  def reads(node: Optional[ast.AST]) -> bool:
    return node is not None and any(
        isinstance(n, ast.Call) and _names.call_name(n) == "loadmat" or (
            isinstance(n, ast.Name) and n.id in loaded)
        for n in ast.walk(node))

  for _ in range(3):  # Loops carry values backwards: a few passes.
    for value, targets in map(_binding, ast.walk(function)):
      if reads(value):
        loaded |= {n.id for t in targets for n in ast.walk(t)
                   if isinstance(n, ast.Name)}
  return any(_names.call_name(c) in _INITIAL and reads(ast.Tuple(
      elts=[*c.args, *(k.value for k in c.keywords
                       if k.arg in ("initializer", "initial_value", "value"))],
      ctx=ast.Load())) for c in _calls(function))


def _binding(node: ast.AST) -> Tuple[Optional[ast.AST], List[ast.AST]]:
  """What `node` binds (an assignment, a loop) and the targets it binds."""
  if isinstance(node, (ast.For, ast.comprehension)):
    return node.iter, [node.target]
  if isinstance(node, ast.Assign):
    return node.value, list(node.targets)
  if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
    return node.value, [node.target]
  return None, []


# Calls whose arguments give a variable its initial value.
_INITIAL = _names.VARIABLES | {"constant_initializer", "Constant"}


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
