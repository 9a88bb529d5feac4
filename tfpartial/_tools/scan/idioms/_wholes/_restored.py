"""Whether a module restores part of its graph from a checkpoint: a
`Saver` built over a list of variables (`tf.train.Saver(var_list=
classifier_params)`) whose `restore` the module calls. A step that trains
only the scope of one model built in that graph (`startswith('sampler')`)
trains it in front of, or on top of, the restored part, which stays at
its pretrained values: a freeze, not one whole model among others. A
`Saver(tf.global_variables())` restores the whole graph (a run resumed
or a model reloaded whole), no part of it."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _filtered_restore


def restores_a_part(module: _project.Module, trained: Optional[ast.AST],
                    held: Sequence[ast.AST] = ()) -> bool:
  """Whether the module calls `restore` on a `Saver` it builds over a
  list of variables other than the list the step trains (`trained`, or
  a value it holds, `held`, the filter written again; a `Saver(gen_vars)`
  that resumes what it trains restores no other part)."""
  text, tree, scope = module.source.text, module.tree, module.scope
  if tree is None or scope is None or "Saver(" not in text or (
      ".restore(" not in text):
    return False
  savers, restored = scope.once((_savers, None, 0), lambda: _savers(tree))
  imported = _scopes.imported_names(scope)
  mine = {ast.unparse(each) for each in (
      [trained] if trained is not None else []) + [
          value for value in held if _fixed(value, imported)]}
  return any(listed not in mine and set(names) & restored
             for listed, names in savers)


def _fixed(value: ast.AST, imported: Set[str]) -> bool:
  """Whether `value` reads no name but those it binds itself and the
  module's imports (`[v for v in tf.global_variables() if
  v.name.startswith('generator')]`): its text alone says what it
  selects, where one reading `prefix` may select another part."""
  bound = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)
           and isinstance(n.ctx, ast.Store)}
  return all(n.id in bound | imported for n in ast.walk(value)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _savers(tree: ast.AST) -> Tuple[List[Tuple[str, List[str]]], Set[str]]:
  """Each `Saver` of a module built over a list that is not every
  variable (the list as text, the names holding the saver), and the
  names `restore` is called on: walked once per module (each step asks)."""
  savers: List[Tuple[str, List[str]]] = []
  restored: Set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
        and _names.call_name(node.value) == "Saver":
      listed = node.value.args[0] if node.value.args else next(
          (k.value for k in node.value.keywords if k.arg == "var_list"),
          None)
      if listed is not None and not _every(listed):
        savers.append((ast.unparse(listed), [
            n for n in map(_names.dotted, node.targets) if n]))
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "restore":
      receiver = _names.dotted(node.func.value)
      if receiver:
        restored.add(receiver)
  return savers, restored


# Calls that list every variable of the graph (no scope given).
_EVERY = frozenset({"global_variables", "all_variables",
                    "trainable_variables", "model_variables"})


def _every(listed: ast.AST) -> bool:
  """Whether a Saver's list is every variable of the graph
  (`tf.global_variables()`, no scope)."""
  return isinstance(listed, ast.Call) and _names.call_name(
      listed) in _EVERY and not listed.args and not listed.keywords


def restores_scopes(facts: "Facts", kept: Set[str]) -> bool:
  r"""Whether the module restores, through a `Saver` it builds and calls
  `restore` on in one class or function, a list of literal scopes of
  which none is one of `kept` (`self.encoder_variables =
  tf.get_collection(GLOBAL_VARIABLES, scope='densenet161')`,
  `tf.train.Saver(self.encoder_variables)` beside a decoder built under
  `'lstm'`), and a block opening a scope of `kept` reads the restored
  part's output: a name the function choosing that list binds inside a
  block opening a restored scope, or from a call of a function that opens
  one (`self.features = encoder(images)`), or from such a name
  (`self.features = densenet_out`). That is the model's pretrained part,
  which a step training only `kept` leaves fixed. Not a teacher restored
  beside its student, whose output only the loss reads (a shared input
  both read, `images = tf.image.resize(x)`, is no output of the teacher).
  A list whose scopes the module does not write as literals says nothing;
  only the one non-empty value of the list counts (`self.encoder_variables
  = []` in `__init__` chooses nothing).

  >>> code = ("def build(self):\n"
  ...         "  feats = encoder(x)\n"
  ...         "  enc = tf.get_collection('variables', scope='encoder')\n"
  ...         "  with tf.variable_scope('dec'):\n"
  ...         "    y = dense(feats)\n"
  ...         "  saver = tf.train.Saver(enc)\n"
  ...         "  saver.restore(sess, path)")
  >>> restores_scopes(Facts(ast.parse(code)), {'dec'})
  True
  >>> restores_scopes(Facts(ast.parse(code)), {'encoder'})
  False
  """
  for (owner, name), saved in facts.savers.items():
    read = _names.dotted(saved)
    if (owner, name) not in facts.restored or not read:
      continue
    # Not the empty list or None the constructor starts it as.
    # Nor the dict of every variable a name filter then reads from.
    chosen = [(v, f) for v, f in facts.values.get((owner, read), [])
              if not _empty(v) and not _filtered_restore.unfiltered(v)]
    roots = {r for value, _ in chosen for r in _scope_roots(value) | (
        _filtered_restore.kept_roots(value))}
    if len(chosen) == 1 and roots and not roots & kept and _fed(
        facts, kept, roots, _builders(facts, kept, chosen[0][1])):
      return True
  return False


# An assignment: its function, target, value, and the literal scope
# roots open around it (`with tf.variable_scope('lstm'):` -> `lstm`).
_Assigned = Tuple[Optional[ast.AST], str, ast.AST, Tuple[str, ...]]
# A read of a name: its function, dotted name, whether a bare name, and
# the roots open around it.
_Read = Tuple[Optional[ast.AST], str, bool, Tuple[str, ...]]


class Facts:
  """What `restores_scopes` reads of a module, walked once: its `Saver`s'
  lists and the names `restore` is called on, by the outermost class or
  function holding each (a saver only saved in one class is not restored
  by a `restore` in another); the values assigned to each name by that
  owner, with the function assigning them; every assignment and read with
  the literal scopes open around it; and the functions opening a literal
  scope."""

  def __init__(self, tree: ast.AST):
    self.savers: Dict[Tuple[int, str], ast.AST] = {}
    self.restored: Set[Tuple[int, str]] = set()
    self.values: Dict[Tuple[int, str], List[Tuple[ast.AST, Optional[
        ast.AST]]]] = {}
    self.assigned: List[_Assigned] = []
    self.reads: List[_Read] = []
    self.opening: Dict[str, Set[str]] = {}  # Function name -> its roots.
    self._visit(tree, 0, None, ())

  def _visit(self, node: ast.AST, owner: int, function: Optional[ast.AST],
             roots: Tuple[str, ...]) -> None:
    """Record `node`'s children, one pass with the enclosing owner,
    function and open roots carried down."""
    for child in ast.iter_child_nodes(node):
      inner_owner, inner_function, inner_roots = owner, function, roots
      if isinstance(child, (ast.ClassDef, ast.FunctionDef,
                            ast.AsyncFunctionDef)):
        inner_owner = owner or id(child)
        if not isinstance(child, ast.ClassDef):
          inner_function, inner_roots = child, ()
      self._record(child, owner, function, roots)
      if isinstance(child, ast.With):
        for item in child.items:
          self._visit(item, owner, function, roots)
        opened = tuple(_opened_roots(child))
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
          self.opening.setdefault(function.name, set()).update(opened)
        body = ast.Module(body=child.body, type_ignores=[])
        self._visit(body, owner, function, roots + opened)
        continue
      self._visit(child, inner_owner, inner_function, inner_roots)

  def _record(self, node: ast.AST, owner: int, function: Optional[ast.AST],
              roots: Tuple[str, ...]) -> None:
    """Note one node: a Saver kept in a name, a `restore`, an assignment
    or a read."""
    if isinstance(node, ast.Assign):
      for each in node.targets:  # `logits, points = mobilenet(x)`: each.
        for one in each.elts if isinstance(each, ast.Tuple) else [each]:
          target = _names.dotted(one)
          if target:
            self.assigned.append((function, target, node.value, roots))
      target = _names.dotted(node.targets[0]) if len(
          node.targets) == 1 else None
      if target and isinstance(node.value, ast.Call) and (
          _names.call_name(node.value) == "Saver"):
        listed = node.value.args[0] if node.value.args else next(
            (k.value for k in node.value.keywords if k.arg == "var_list"),
            None)
        if listed is not None:
          self.savers[(owner, target)] = listed
      elif target:
        self.values.setdefault((owner, target), []).append(
            (node.value, function))
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "restore":
      receiver = _names.dotted(node.func.value)
      if receiver:
        self.restored.add((owner, receiver))
    elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
        node.ctx, ast.Load):
      read = _names.dotted(node)
      if read:
        self.reads.append((function, read, isinstance(node, ast.Name),
                           roots))


def _empty(value: ast.AST) -> bool:
  """`[]`, `()` or `None`."""
  return isinstance(value, (ast.List, ast.Tuple)) and not value.elts or (
      isinstance(value, ast.Constant) and value.value is None)


def _fed(facts: Facts, kept: Set[str], restored: Set[str],
         builders: Set[int]) -> bool:
  """Whether a block opening a scope of `kept` reads the output of the
  restored part that one of `builders` (ids of the functions that may
  build it) builds: a name it binds inside a block opening a `restored`
  root, from a call of a function opening one, or from such a name; a
  local of another function set from one of those names counts too.
  Each function's names are gathered in one pass over the module's
  assignments, however many builders there are."""
  built: Dict[int, Set[str]] = {}
  for function, target, value, roots in facts.assigned:
    if id(function) not in builders:
      continue
    own = built.setdefault(id(function), set())
    if set(roots) & restored or isinstance(
        value, ast.Call) and _opens_restored(facts, value, restored) or (
            _names.dotted(value) in own):
      own.add(target)
  in_kept = {t for _, t, _, roots in facts.assigned if set(roots) & kept}
  for own in built.values():
    own -= in_kept
  every = set().union(*built.values()) if built else set()
  aliases = {(function, target) for function, target, value, _ in
             facts.assigned if "." not in target and (
                 _names.dotted(value) in every)}
  return any(set(roots) & kept and (
      read in built.get(id(function), ()) or read.startswith("self.") and (
          read in every) or bare and (function, read) in aliases)
             for function, read, bare, roots in facts.reads)


def _builders(facts: Facts, kept: Set[str], chooser: Optional[ast.AST]
              ) -> Set[int]:
  """The ids of the functions that may build the restored part in front
  of the kept one: the one choosing the restored list, then each
  function reading names inside a block opening a `kept` root (the
  model's builder, beside a `load_pretrained(sess)` that only
  restores)."""
  found = {id(function) for function, _, _, roots in facts.reads
           if function is not None and set(roots) & kept}
  return found | {id(chooser)} if chooser is not None else found


def _opens_restored(facts: Facts, call: ast.Call, restored: Set[str]
                    ) -> bool:
  """Whether `call` runs a function that opens a `restored` root: one
  the module defines opening it, or one named after it (`densenet_161`
  for `densenet161`, `inception_v3` for `InceptionV3`), or one of a
  module named after it (`mobilenet_v2.mobilenet_base` for
  `MobilenetV2`)."""
  name = _names.call_name(call)
  owner = call.func.value if isinstance(call.func, ast.Attribute) else None
  module = owner.id if isinstance(owner, ast.Name) else ""
  return bool(facts.opening.get(name, set()) & restored) or any(
      _plain(each) == _plain(root) for root in restored
      for each in (name, module) if each)


def _plain(name: str) -> str:
  """`name` lower-cased, letters and digits only."""
  return "".join(c for c in name.lower() if c.isalnum())


def _opened_roots(block: ast.With) -> List[str]:
  """The literal scope roots a `with` opens (`tf.variable_scope('lstm')`:
  `lstm`)."""
  return [str(i.context_expr.args[0].value).strip("/").split("/")[0]
          for i in block.items if isinstance(i.context_expr, ast.Call)
          and i.context_expr.args
          and _names.call_name(i.context_expr) in _names.TF_SCOPES
          and isinstance(i.context_expr.args[0], ast.Constant)]


def _scope_roots(value: ast.AST) -> Set[str]:
  """The first part of the literal scope a variable-list call selects
  by (`get_collection(key, scope='densenet161/')`), if it names one."""
  chosen = _names.scope_argument(value) if isinstance(
      value, ast.Call) else None
  if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str) and (
      chosen.value.strip("/")):
    return {chosen.value.strip("/").split("/")[0]}
  return set()
