"""`stop-gradient-mix` through a pruning library's mask: a weight passed
to `tf.contrib.model_pruning`'s `apply_mask(w)` is multiplied in the
forward pass by a non-trainable 0/1 mask variable (restored from a pruned
checkpoint, say). The masked elements never learn unless the library's
mask update op runs; a project that never builds it, or builds it only
under a flag that is off by default (`if FLAGS.pruning_hparams:`), keeps
the mask fixed. Magnitude pruning that runs the update with the step
recomputes the mask and freezes nothing."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple, cast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _cudnn_params

LIBRARY = "model_pruning"
# The library's ops that recompute the masks from the weights.
_UPDATES = ("conditional_mask_update_op", "mask_update_op")
_DEFINES = ("DEFINE_string", "DEFINE_bool", "DEFINE_boolean",
            "add_argument")


def masked(analysis: Analysis
           ) -> List[Tuple[ast.expr, _scopes.Scope, ast.expr]]:
  """(the `apply_mask` call, its scope, the weight) of each weight masked
  by the pruning library while its masks stay fixed."""
  project = analysis.project
  modules = [m for m in project.modules_with(("apply_mask",))
             if not m.is_test]
  found: List[Tuple[ast.expr, _scopes.Scope, ast.expr]] = []
  for module in modules:
    named = LIBRARY in module.source.text
    for scope in analysis.scopes_with(module, ("apply_mask",)):
      for call in analysis.calls(scope):
        if _names.call_name(call) == "apply_mask" and call.args and (
            named or _reexported(project, scope, call)):
          found.append((call, scope, call.args[0]))
  if not found or masks_updated(analysis):
    return []
  return found


def _reexported(project: _project.Project, scope: _scopes.Scope,
                call: ast.Call) -> bool:
  """Whether `apply_mask` is the library's, taken from a module of the
  project that imports it (`cudnn_pruning.apply_mask(h1)`, `from
  util.cudnn_pruning import apply_mask`)."""
  func = call.func
  if isinstance(func, ast.Attribute):
    base = _names.dotted(func.value)
    held = project.resolve(scope, base) if base else None
  elif isinstance(func, ast.Name):
    module = scope.module
    held = None
    if isinstance(module, _project.Module) and func.id in module.imports:
      where = module.imports[func.id][0]
      level = len(where) - len(where.lstrip("."))
      held = project.find_module(where.lstrip("."), module, level)
  else:
    return False
  if not isinstance(held, _project.Module) or project.parsed(held) is None:
    return False
  imported = held.imports.get("apply_mask")
  return imported is not None and LIBRARY in imported[0]


def masks_updated(analysis: Analysis) -> bool:
  """Whether the project builds the mask update op where it runs by
  default (not only under a flag whose default is empty or false); asked
  once per scan."""
  return bool(analysis.once("pruning-masks:updated",
                            lambda: _updated(analysis.project)))


def recomputed(analysis: Analysis, module: _project.Module, mask: ast.expr,
               scope: _scopes.Scope, values: _cudnn_params.Values) -> bool:
  """Whether a mask (in a module naming the library) is one the library
  recomputes while the project runs its update op by default: taken from
  the library (`get_masks()`, its mask collection, `apply_mask`), or put
  in a collection for a `Pruning` to read (`tf.add_to_collection(
  MASK_COLLECTION, mask)`), itself or the variables packed into it (`self.
  _canonical_to_opaque(self._masks, ones)`). A mask of the layer's own,
  set from a file beside the library's, is no such mask."""
  if LIBRARY not in module.source.text or not masks_updated(analysis):
    return False
  collected = _collected(analysis, module)
  names = {_names.dotted(mask)}
  for value, home in values(mask, scope)[:8]:
    if any(isinstance(n, ast.Call) and _from_library(n)
           for n in ast.walk(value)):
      return True
    for packed in _cudnn_params.packed_lists(value):
      names.add(_names.dotted(packed))
  own = {name for name in names if name and not name.startswith("self.")}
  if any(("", name) in collected for name in own):
    return True
  selfs = names - own - {None, ""}
  return any((info.name, name) in _collected(analysis, home)
             for info, home in _classes_of(analysis.project, scope)
             for name in selfs)


def _classes_of(project: _project.Project, scope: _scopes.Scope
                ) -> List[Tuple[_scopes.ClassInfo, _project.Module]]:
  """The class whose method holds `scope` and its project bases, each
  with its module (a mask a base class adds is the subclass's too)."""
  at: Optional[_scopes.Scope] = scope
  while at is not None and at.cls is None:
    at = at.parent
  if at is None or at.cls is None:
    return []
  return [(info, info.home.module) for info in [
      at.cls, *project.base_classes(at.cls)]
          if isinstance(info.home.module, _project.Module)]


def _from_library(call: ast.Call) -> bool:
  """`pruning.get_masks()`, `apply_mask(w)`, `tf.get_collection(
  MASK_COLLECTION)`."""
  name = _names.call_name(call)
  return name in {"get_masks", "apply_mask"} or name in {
      "get_collection", "get_collection_ref"} and any(
          "MASK" in ast.unparse(a).upper() for a in call.args[:1])


def _collected(analysis: Analysis, module: _project.Module
               ) -> Set[Tuple[str, str]]:
  """(the class, or "" for a name not `self.`'s) and the name of each
  mask (and each list looped over to get them) that a module adds to a
  mask collection a `Pruning` reads, read once per module."""
  read = _read_back(analysis)
  return cast(Set[Tuple[str, str]], analysis.once(
      f"pruning-masks:collected:{id(module)}",
      lambda: _added_to_collections(module.tree, read)))


def _keys(key: ast.expr, strings: Dict[str, str]) -> Set[str]:
  """What a collection's key is known by: its name (`=MASK_COLLECTION`)
  and its text (`masks`, a module's string constant's too)."""
  if isinstance(key, (ast.List, ast.Tuple)):  # `add_to_collections`.
    return {k for item in key.elts for k in _keys(item, strings)}
  name = key.id if isinstance(key, ast.Name) else key.attr if isinstance(
      key, ast.Attribute) else ""
  found = {"=" + name} if name else set()
  if isinstance(key, ast.Constant) and isinstance(key.value, str):
    found.add(key.value)
  elif name in strings and isinstance(key, ast.Name):
    found.add(strings[name])
  return found


def _strings(tree: Optional[ast.AST]) -> Dict[str, str]:
  """A module's top-level names bound to a string."""
  return {t.id: node.value.value
          for node in getattr(tree, "body", [])
          if isinstance(node, ast.Assign) and isinstance(
              node.value, ast.Constant) and isinstance(node.value.value, str)
          for t in node.targets if isinstance(t, ast.Name)}


def _read_back(analysis: Analysis) -> Set[str]:
  """The keys of the collections a `Pruning` reads its masks from: the
  library's (`MASK_COLLECTION`, 'masks'), each the project hands to a
  `Pruning(...)`, and each a method of a `Pruning` subclass reads to
  recompute masks (one that assigns or applies a mask: `CudnnPruning`
  reading 'cudnn_masks', itself or through a function of its module); a
  key read back only to be logged or summarised is not; once per scan."""
  return cast(Set[str], analysis.once(
      "pruning-masks:read-back", lambda: _reads(analysis.project)))


_READS = {"get_collection", "get_collection_ref"}


def _reads(project: _project.Project) -> Set[str]:
  keys = {"=MASK_COLLECTION", "masks"}
  for module in project.all_modules_with(tuple(sorted(_READS))):
    tree = module.tree
    if tree is None:
      continue
    strings = _strings(tree)
    helpers = {node.name: node for node in tree.body
               if isinstance(node, ast.FunctionDef)}
    places: List[ast.AST] = []
    for node in ast.walk(tree):
      if isinstance(node, ast.Call) and _names.call_name(node).endswith(
          "Pruning"):
        given = [*node.args, *(k.value for k in node.keywords)]
        places.extend(given)
        places.extend(_called(given, helpers))
    for cls in ast.walk(tree):
      if isinstance(cls, ast.ClassDef) and any(
          (_names.dotted(b) or "").split(".")[-1].endswith("Pruning")
          for b in cls.bases):
        places.extend(_recomputing(cls, helpers))
    for place in places:
      for node in ast.walk(place):
        if isinstance(node, ast.Call) and node.args and _names.call_name(
            node) in _READS:
          keys |= _keys(node.args[0], strings)
  return keys


def _recomputing(cls: ast.ClassDef, helpers: Dict[str, ast.FunctionDef]
                 ) -> List[ast.AST]:
  """The methods of a `Pruning` subclass that assign or apply a mask, and
  the functions of its module they call (`get_cudnn_masks()`)."""
  found: List[ast.AST] = []
  for method in cls.body:
    if not isinstance(method, ast.FunctionDef):
      continue
    if any(isinstance(n, ast.Call) and ("assign" in _names.call_name(
        n) or _names.call_name(n) == "apply_mask") for n in ast.walk(method)):
      found.append(method)
      found.extend(_called([method], helpers))
  return found


def _called(parts: Sequence[ast.AST], helpers: Dict[str, ast.FunctionDef]
            ) -> List[ast.AST]:
  """The functions of `helpers` that `parts` call by name."""
  return [helpers[n.func.id] for part in parts for n in ast.walk(part)
          if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
          and n.func.id in helpers]


def _added_to_collections(tree: Optional[ast.AST], read: Set[str]
                          ) -> Set[Tuple[str, str]]:
  found: Set[Tuple[str, str]] = set()
  loops: List[Tuple[str, str, str]] = []
  strings = _strings(tree)

  def visit(node: ast.AST, cls: str) -> None:
    if isinstance(node, ast.ClassDef):
      cls = node.name
    if isinstance(node, ast.Call) and _names.call_name(node) in {
        "add_to_collection", "add_to_collections"} and len(
            node.args) > 1 and _keys(node.args[0], strings) & read:
      name = _names.dotted(node.args[1]) or ""
      found.add((cls if name.startswith("self.") else "", name))
    elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
      loops.append((cls, node.target.id, _names.dotted(node.iter) or ""))
    for child in ast.iter_child_nodes(node):
      visit(child, cls)
  if tree is not None:
    visit(tree, "")
  found.update((cls if over.startswith("self.") else "", over)
               for cls, target, over in loops if ("", target) in found)
  found.discard(("", ""))
  return found


def _updated(project: _project.Project) -> bool:
  guarded = [test for module in project.all_modules_with(_UPDATES)
             if module.tree is not None
             for test, _ in _guarded_calls(module.tree)]
  tests = [test for test in guarded if test is not None]
  if not guarded or len(tests) < len(guarded):
    return bool(guarded)  # (One in no `if` runs.)
  flags = _Flags(project, {n for test in tests for n in _tested(test)})
  return any(not flags.off(test) for test in tests)


def _guarded_calls(tree: ast.AST
                   ) -> List[Tuple[Optional[ast.expr], ast.Call]]:
  """Each update call with the test of the `if` whose body holds it (None
  when it is in no `if`)."""
  found: List[Tuple[Optional[ast.expr], ast.Call]] = []

  def visit(node: ast.AST, test: Optional[ast.expr]) -> None:
    if isinstance(node, ast.Call) and _names.call_name(node) in _UPDATES:
      found.append((test, node))
    if isinstance(node, ast.If):
      for child in node.body:
        visit(child, node.test)
      for child in node.orelse:
        visit(child, None)  # The `else` of a flag: runs by default.
      return
    for inner in ast.iter_child_nodes(node):
      visit(inner, test)
  visit(tree, None)
  return found


def _tested(test: ast.expr) -> List[str]:
  """The names an `if` tests (`a and b`: both)."""
  if isinstance(test, ast.BoolOp):
    return [n for value in test.values for n in _tested(value)]
  name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(
      test, ast.Attribute) else ""
  return [name] if name else []


class _Flags:
  """The flags a project defines and the parameters given one by keyword
  (`f(prune_flag=FLAGS.pruning_hparams)`), each module read once: asking
  of each guarded update op costs no walk of the project."""

  def __init__(self, project: _project.Project, names: Set[str]):
    self.aliases: Dict[str, Set[str]] = {}
    for module in project.all_modules_with(tuple(sorted(names))):
      for node in ast.walk(module.tree) if module.tree is not None else ():
        if isinstance(node, ast.keyword) and node.arg in names and (
            isinstance(node.value, ast.Attribute)):
          self.aliases.setdefault(node.arg, set()).add(node.value.attr)
    # Flag -> whether each definition of it has a default that is off.
    self.defaults: Dict[str, List[bool]] = {}
    for module in project.all_modules_with(_DEFINES):
      for node in ast.walk(module.tree) if module.tree is not None else ():
        if not isinstance(node, ast.Call) or _names.call_name(
            node) not in _DEFINES or not node.args or not isinstance(
                node.args[0], ast.Constant):
          continue
        given = [k.value for k in node.keywords if k.arg == "default"]
        if _names.call_name(node) != "add_argument":
          given += node.args[1:2]
        flag = str(node.args[0].value).lstrip("-").replace("-", "_")
        self.defaults.setdefault(flag, []).append(not any(
            not isinstance(g, ast.Constant) or g.value for g in given))

  def off(self, test: ast.expr) -> bool:
    """Whether an `if` tests a flag (or a parameter given one by keyword)
    defined with an empty or false default (`''`, `None`, `False`; an
    `add_argument` with no default: None), and none with one that is
    on."""
    if isinstance(test, ast.BoolOp):  # `a and b`: off if one is off.
      offs = [self.off(value) for value in test.values]
      return any(offs) if isinstance(test.op, ast.And) else all(offs)
    names = _tested(test)
    if not names:
      return False
    found = [off for flag in {names[0], *self.aliases.get(names[0], ())}
             for off in self.defaults.get(flag, [])]
    return bool(found) and all(found)
