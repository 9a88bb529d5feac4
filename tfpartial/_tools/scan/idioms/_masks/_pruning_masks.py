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
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

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
  if not found or masks_updated(project):
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


def masks_updated(project: _project.Project) -> bool:
  """Whether the project builds the mask update op where it runs by
  default (not only under a flag whose default is empty or false)."""
  for module in project.all_modules_with(_UPDATES):
    if module.tree is None:
      continue
    for test, call in _guarded_calls(module.tree):
      if test is None or not _off_by_default(project, test):
        return True
  return False


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


def _off_by_default(project: _project.Project, test: ast.expr) -> bool:
  """Whether an `if` tests a flag (or a parameter given one by keyword)
  defined with an empty or false default."""
  if isinstance(test, ast.BoolOp):  # `a and b`: off if one is off.
    offs = [_off_by_default(project, value) for value in test.values]
    return any(offs) if isinstance(test.op, ast.And) else all(offs)
  name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(
      test, ast.Attribute) else ""
  if not name:
    return False
  flags = {name}
  for module in project.all_modules_with((name,)):
    for node in ast.walk(module.tree) if module.tree is not None else ():
      if isinstance(node, ast.keyword) and node.arg == name and isinstance(
          node.value, ast.Attribute):
        flags.add(node.value.attr)  # `f(prune_flag=FLAGS.pruning_hparams)`
  return _false_defaults(project, flags)


def _false_defaults(project: _project.Project, flags: Set[str]) -> bool:
  """Whether one of `flags` is defined with a default that is off (`''`,
  `None`, `False`) and none with one that is on."""
  off = False
  for module in project.all_modules_with(_DEFINES):
    for node in ast.walk(module.tree) if module.tree is not None else ():
      if not isinstance(node, ast.Call) or _names.call_name(
          node) not in _DEFINES or not node.args or not isinstance(
              node.args[0], ast.Constant) or str(node.args[0].value).lstrip(
                  "-").replace("-", "_") not in flags:
        continue
      given = [k.value for k in node.keywords if k.arg == "default"]
      if _names.call_name(node) != "add_argument":
        given += node.args[1:2]
      if any(not isinstance(g, ast.Constant) or g.value for g in given):
        return False  # (`add_argument` with no default: None.)
      off = True
  return off
