"""A step's list joined from the values of dicts of trainable variables
(`trainable = trainable + list(f_weights.values())`, or
`trainable.extend(phi_weights.values())`) while the loss reads a model
given another such dict beside a listed one (litcoderr's Error Encoding
Network: the g dict restored into `tf.Variable`s entry by entry and
handed to the model that decodes with it): that dict is left out.

What the code does decides, never key or dict names: a dict holds
trainable variables when every binding of its name is a dict literal of
variables (or empty) and every entry stored into it is a trainable
variable made there, or is stored over, in a loop of the same header
(or, both, outside any loop) and by the same key, by one (arrays
restored, then turned into variables);
a dict any method may change (`update`, `pop`) or grown by `+=` is not
read. The left-out dict must be passed, as a name, to one call together
with a listed dict, among what the loss reads through the function's
bindings, a call of the project that applies an entry of it to what a
listed dict computes (`_dicts_applied`: one model holding both; a
teacher given only its own dict, or each dict applied to the data alone,
is another model; a call outside the project is not read). Silent also where any other step of the module trains
the dict, trains every variable, or has a list this rule cannot read,
and where a module that may run in one process with it (imported by a
module importing it, or by itself) holds a step.

>>> import ast
>>> from tfpartial._tools.scan import _files, _project
>>> text = ("import tensorflow as tf\\n"
...         "g = {}\\nf = {'w': tf.Variable(1.0 * 2)}\\n"
...         "for i in range(2):\\n  g[i] = tf.Variable(0.0 * i)\\n"
...         "chosen = [] + list(f.values())\\n")
>>> project = _project.Project([_files.Source("t.py", text)])
>>> scope = project.parsed(project.modules[0])
>>> sorted(_held(scope))
['f', 'g']
>>> read = [n for n in scope.nodes if isinstance(n, ast.Name)
...         and n.id == "chosen"][0]
>>> _listed(read, scope)
{'f'}
"""

from __future__ import annotations

import ast
import os
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources import _bare_listed
from tfpartial._tools.scan.idioms._sources import _dicts_applied
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _loss_node, _trainable_variable, var_list_of)

# Builtins that copy an iterable into a list.
_COPIES = frozenset({"list", "tuple"})
# Methods of a dict that only read it.
_READING = frozenset({"values", "keys", "items", "get", "copy"})
# Methods of a list that grow it by the items of their argument.
_GROWING = frozenset({"extend"})


def left_out(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope,
             call: ast.Call) -> bool:
  """Whether the step `call` trains the values of some dicts of trainable
  variables while its loss reads a model given another one."""
  listed = _listed(chosen, scope)
  held = _held(scope)
  if not listed or not listed <= held:
    return False
  if _names.call_name(call) == "gradients" and not _bare_listed._applied(
      call, scope):
    return False
  loss = _loss_node(call)
  if loss is None:
    return False
  _, values = _bare_listed._followed(analysis, loss, scope)
  missing = _beside(analysis, (loss, *values), listed, held, scope)
  if not missing or _trained_elsewhere(analysis, scope, missing):
    return False
  return True


def _listed(chosen: ast.AST, scope: _scopes.Scope) -> Optional[Set[str]]:
  """The dicts whose values the list `chosen` is joined from (through
  every binding and growing call of a name); None where a part is
  anything else."""
  if not isinstance(chosen, ast.Name):
    return _joined(chosen, "", scope) if isinstance(chosen, ast.expr) else (
        None)
  found = scope.once((_listed, chosen.id, 0), lambda: _named_list(
      chosen.id, scope))
  assert found is None or isinstance(found, set)
  return found


def _named_list(name: str, scope: _scopes.Scope) -> Optional[Set[str]]:
  """`_listed` of the name `name`, read once per function."""
  grown = _grown(scope).get(name, [])
  if any(part is None for part in grown):
    return None  # `append`, `remove`, `insert`: not whole dicts.
  parts = [d.value for d in scope.defs.get(name, [])] + [
      part for part in grown if part is not None]
  found: Set[str] = set()
  for part in parts:
    dicts = _joined(part, name, scope)
    if dicts is None:
      return None
    found |= dicts
  return found


def _grown(scope: _scopes.Scope) -> Dict[str, List[Optional[ast.expr]]]:
  """For each name a method is called on in `scope`, what `extend` adds
  (None for any other call), read once per function (`+=` is among the
  bindings, as a sum)."""

  def read() -> Dict[str, List[Optional[ast.expr]]]:
    found: Dict[str, List[Optional[ast.expr]]] = {}
    for node in scope.nodes:
      if isinstance(node, ast.Call) and isinstance(
          node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        found.setdefault(node.func.value.id, []).append(
            node.args[0] if node.func.attr in _GROWING and len(
                node.args) == 1 and not node.keywords else None)
    return found
  grown = scope.once((_grown, None, 0), read)
  assert isinstance(grown, dict)
  return grown


def _joined(value: ast.expr, name: str, scope: _scopes.Scope
            ) -> Optional[Set[str]]:
  """The dicts whose values `value` joins: `[]`, the list's own name,
  `list(d.values())`, `d.values()`, and sums of those."""
  if isinstance(value, (ast.List, ast.Tuple)):
    return set() if not value.elts else None
  if isinstance(value, ast.Name):
    return set() if value.id == name else None
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    left = _joined(value.left, name, scope)
    right = _joined(value.right, name, scope)
    return None if left is None or right is None else left | right
  if not isinstance(value, ast.Call) or value.keywords:
    return None
  func = value.func
  if isinstance(func, ast.Name) and func.id in _COPIES and len(
      value.args) == 1 and _builtin(scope, func.id):
    return _joined(value.args[0], name, scope)
  if isinstance(func, ast.Attribute) and func.attr == "values" and (
      isinstance(func.value, ast.Name)) and not value.args and (
          func.value.id in _held(scope)):
    return {func.value.id}  # A dict's own `values()`: its variables.
  return None


def _builtin(scope: _scopes.Scope, name: str) -> bool:
  """Whether `name` is not bound by the module or the function."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if name in place.defs or name in place.params:
      return False
    place = place.parent
  return True


def _held(scope: _scopes.Scope) -> FrozenSet[str]:
  """The names of `scope` that hold dicts of trainable variables (read
  once per function)."""
  found = scope.once((_held, None, 0), lambda: _held_now(scope))
  assert isinstance(found, frozenset)
  return found


_Store = Tuple[ast.expr, str, str]  # The value, its key's and loop's dump.


def _held_now(scope: _scopes.Scope) -> FrozenSet[str]:
  literals = {name for name, defs in scope.defs.items() if any(
      isinstance(d.value, ast.Dict) for d in defs)}
  stores, changed = _stores(scope, literals)
  found = set()
  for name in literals - changed:
    kept = stores.get(name, [])
    stored = {id(value) for value, _, _ in kept}
    values: List[ast.expr] = []
    for d in scope.defs[name]:
      if isinstance(d.value, ast.Dict) and None not in d.value.keys:
        values += d.value.values
      elif id(d.value) not in stored:
        values = []  # Bound to something else: not read.
        break
    else:
      last = _last_made(kept)
      if (values or kept) and all(_made(v) for v in values) and all(
          _made(value) or _position(value) < last.get((key, loop), (0, 0))
          for value, key, loop in kept):
        found.add(name)
  return frozenset(found)


def _made(value: ast.expr) -> bool:
  """A trainable variable made here, `trainable` left as True."""
  return isinstance(value, ast.Call) and _trainable_variable(
      value) and _bare_listed._switch(value) is True


def _last_made(kept: List[_Store]) -> Dict[Tuple[str, str], Tuple[int, int]]:
  """Where the last variable is stored by each key in each loop."""
  last: Dict[Tuple[str, str], Tuple[int, int]] = {}
  for value, key, loop in kept:
    if _made(value):
      last[(key, loop)] = max(last.get((key, loop), (0, 0)),
                              _position(value))
  return last


def _position(node: ast.expr) -> Tuple[int, int]:
  return (node.lineno, node.col_offset)


def _stores(scope: _scopes.Scope, names: Set[str]
            ) -> Tuple[Dict[str, List[_Store]], Set[str]]:
  """The entries stored into each of `names` in the function's own
  statements (with the header of the loop around each), and the names
  changed otherwise (a method called on them, `+=`, `del d[k]`, a store
  through a tuple)."""
  stores: Dict[str, List[_Store]] = {}
  changed: Set[str] = set()
  pending: List[Tuple[ast.AST, str]] = [(scope.node, "")]
  while pending:
    node, loop = pending.pop()
    for child in ast.iter_child_nodes(node):
      if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                            ast.ClassDef, ast.Lambda)):
        continue
      header = loop
      if isinstance(child, (ast.For, ast.AsyncFor)):
        header = loop + ast.dump(child.target) + ast.dump(child.iter)
      pending.append((child, header))
      _store(child, loop, names, stores, changed)
  return stores, changed


def _store(node: ast.AST, loop: str, names: Set[str],
           stores: Dict[str, List[_Store]], changed: Set[str]) -> None:
  """Records what the statement or call `node` stores into or changes
  of the dicts `names`."""
  if isinstance(node, ast.Assign):
    for target in node.targets:
      entry = _entry(target, names)
      if entry is not None and len(node.targets) == 1:
        stores.setdefault(entry.id, []).append(
            (node.value, ast.dump(getattr(target, "slice")), loop))
      elif entry is None and isinstance(target, (ast.Tuple, ast.List)):
        changed.update(e.id for e in map(
            lambda t: _entry(t, names), target.elts) if e is not None)
  elif isinstance(node, (ast.AugAssign, ast.Delete)):
    targets = [node.target] if isinstance(node, ast.AugAssign) else (
        node.targets)
    for target in targets:
      entry = _entry(target, names)
      if entry is not None:
        changed.add(entry.id)
      elif isinstance(target, ast.Name) and target.id in names:
        changed.add(target.id)
  elif isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and isinstance(
          node.func.value, ast.Name) and node.func.value.id in names and (
              node.func.attr not in _READING):
    changed.add(node.func.value.id)


def _entry(target: ast.AST, names: Set[str]) -> Optional[ast.Name]:
  """The dict `target` stores an entry of (`d[k] = ...`), if one of
  `names`."""
  if isinstance(target, ast.Subscript) and isinstance(
      target.value, ast.Name) and target.value.id in names:
    return target.value
  return None


def _beside(analysis: Analysis, values: Tuple[ast.AST, ...],
            listed: Set[str], held: FrozenSet[str], scope: _scopes.Scope
            ) -> Set[str]:
  """The dicts of variables, not listed, that a call among `values` is
  given together with a listed one (by name, or keyword)."""
  missing: Set[str] = set()
  for value in values:
    for node in _scopes.walk(value):
      if not isinstance(node, ast.Call):
        continue
      given = {a.id for a in (*node.args, *(k.value for k in node.keywords))
               if isinstance(a, ast.Name) and a.id in held}
      if given & listed and given - listed and (
          _dicts_applied.applied_together(
              analysis, node, scope, given & listed, given - listed)):
        missing |= given - listed
  return missing


def _trained_elsewhere(analysis: Analysis, scope: _scopes.Scope,
                       missing: Set[str]) -> bool:
  """Whether another step of the module trains every variable, one of
  `missing`, or a list not read here; or a module that may run with it
  holds a step."""
  module = analysis.module(scope)
  unknown, by_dict = _module_lists(analysis, module)
  # (The step's own list is read, and lists none of `missing`.)
  if unknown or any(by_dict.get(name, 0) for name in missing):
    return True
  return _run_with_steps(analysis, module)


def _module_lists(analysis: Analysis, module: _project.Module
                  ) -> Tuple[int, Dict[str, int]]:
  """How many steps of `module` train every variable or a list not read
  here, and how many list each dict (read once per module)."""

  def count() -> Tuple[int, Dict[str, int]]:
    unknown, by_dict = 0, {}  # type: Tuple[int, Dict[str, int]]
    for place, other in analysis.calls_named(STEPS):
      if analysis.module(place) is not module:
        continue
      chosen = var_list_of(other)
      listed = _listed(chosen, place) if chosen is not None else None
      if listed is None:
        unknown += 1
      for name in listed or ():
        by_dict[name] = by_dict.get(name, 0) + 1
    return unknown, by_dict
  found = analysis.once(f"dict lists of module {id(module)}", count)
  assert isinstance(found, tuple)
  return found


def _run_with_steps(analysis: Analysis, module: _project.Module) -> bool:
  """Whether a module that may run in one process with `module` holds a
  step: one that a module importing `module` (or `module` itself)
  imports, through the project's modules (read once per module)."""

  def linked() -> bool:
    stepped = {id(analysis.module(place))
               for place, _ in analysis.calls_named(STEPS)}
    roots = _closure(analysis, module, _importers)
    reached: Dict[int, _project.Module] = {}
    for root in roots.values():
      reached.update(_closure(analysis, root, _imported))
    return any(key in stepped for key in reached if key != id(module))
  found = analysis.once(f"dict lists run with steps {id(module)}", linked)
  return bool(found)


def _closure(analysis: Analysis, start: _project.Module, step: Callable[
    [Analysis, _project.Module], List[_project.Module]]
             ) -> Dict[int, _project.Module]:
  """`start` and the modules `step` reaches from it, again and again."""
  found = {id(start): start}
  pending = [start]
  while pending:
    for each in step(analysis, pending.pop()):
      if id(each) not in found:
        found[id(each)] = each
        pending.append(each)
  return found


def _imported(analysis: Analysis, module: _project.Module
              ) -> List[_project.Module]:
  """The project's modules `module` imports (read once per module)."""

  def read() -> List[_project.Module]:
    project = analysis.project
    project.parsed(module)
    found = []
    for source, attribute in list(module.imports.values()):
      name = source.lstrip(".")
      level = len(source) - len(name)
      for each in (name, f"{name}.{attribute}" if name else attribute):
        target = project.find_module(each, module, level) if each else None
        if target is not None and target is not module:
          found.append(target)
    return found
  imported = analysis.once(f"dict lists imported {id(module)}", read)
  assert isinstance(imported, list)
  return imported


def _importers(analysis: Analysis, module: _project.Module
               ) -> List[_project.Module]:
  """The project's modules importing `module`: among those whose text
  names its file's or its package's name."""
  stem = os.path.splitext(os.path.basename(module.path))[0]
  if stem == "__init__":
    stem = os.path.basename(os.path.dirname(module.path))
  return [each for each in analysis.project.all_modules_with((stem,))
          if each is not module and any(
              m is module for m in _imported(analysis, each))]
