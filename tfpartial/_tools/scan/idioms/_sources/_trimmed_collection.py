"""The trainable collection trimmed by hand: `TRAINABLE_VARIABLES` cleared
and only the variables a name test keeps added back
(`graph.clear_collection(...)` then `add_to_collection` under the test;
`del coll[:]` then `coll.extend([...if...])`; `coll[:] = [...if...]`),
or the variables a name test picks removed (`coll.remove(v)`). A step
built over the default list (`tf.trainable_variables()`, `minimize`
without `var_list`) then trains only what is left: a `var_list` filter
written into the graph.

What the code does decides: the collection rebuilt whole is no filter; a
helper that nothing in the project calls trims nothing; surgery in a
function that then exports the graph (or saves it) and builds no step
after it is for the export, not the step; bookkeeping taken out (the
global step, EMA shadows, optimizer slots, batch-norm statistics) is not
the model; and without a step over the default list the trimmed
collection trains nothing.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources import _collection_edits

# The label a finding of this form carries (its message names the
# collection, not a `var_list`).
COLLECTION = "collection"

# What a function calls when it writes the graph out rather than train it.
_EXPORTS = frozenset({
    "save", "export_saved_model", "export_savedmodel", "write_graph",
    "simple_save", "add_meta_graph_and_variables", "export_meta_graph",
    "convert_variables_to_constants", "freeze_graph"})
# The names of variables no model trains, as whole parts of a variable's
# name (split at `/`, `_` and `:`): taking them out of the collection
# leaves the model whole. Parts, not substrings: "ema" is in "semantic".
_BOOKKEEPING = tuple(tuple(name.split("_")) for name in (
    "global_step", "exponentialmovingaverage", "ema", "adam", "momentum",
    "moving_mean", "moving_variance", "iterations", "rmsprop", "adagrad",
    "accumulator"))
# What a function calls to empty or edit the collection in place.
_EDITS = ("clear_collection", "get_collection_ref")
_STEPS = frozenset({"minimize", "compute_gradients", "apply_gradients",
                    "gradients"})


def trimmed(analysis: Analysis, synced: Set[int]) -> List[_idiom.Hit]:
  """The hits of the trainable collection trimmed by a name test, each
  at the call (or list) that keeps or takes out the variables, its sink
  the step over the default list that then trains only what is left;
  none in the modules of `synced` (a target network taken out of the
  collection is written from the trained one, not left out)."""
  hits: List[_idiom.Hit] = []
  project = analysis.project
  # Only a module that empties or edits the collection is read for it.
  for module in project.modules_with(_EDITS):
    text = module.source.text
    if module.is_test or id(module) in synced or not (
        _collection_edits.names_key(text)):
      continue
    for scope in analysis.scopes_with(module, _EDITS):
      node = _trimming(scope)
      if node is None or _exports(scope, node) or not _called(
          analysis, scope):
        continue
      step = _default_step(analysis, scope, node, {})
      if step is not None:
        hits.append(_idiom.Hit(node, step[1], step[0], {
            "filtered": node, COLLECTION: node}))
  return hits


def _trimming(scope: _scopes.Scope) -> Optional[ast.expr]:
  """Where `scope` keeps only some of the trainable collection: the add
  (or list) a name test chooses after the collection is emptied, or a
  removal a name test chooses; else None."""
  parents = _parents(scope.node)
  handles = _collection_edits.handles(scope)
  emptied: Optional[Tuple[int, int]] = None
  for node in _in_order(scope):
    if _collection_edits.empties(node, handles) and emptied is None:
      emptied = _idiom.position(node)
    added = _collection_edits.added(node, handles)
    if added is not None and _collection_edits.is_slice_store(node, handles):
      if _chosen(added, node, parents, scope):
        return added
      continue
    if added is not None and emptied is not None and (
        emptied < _idiom.position(node)) and _chosen(
            added, node, parents, scope):
      return node if isinstance(node, ast.Call) else added
    if isinstance(node, ast.Call) and _names.call_name(node) == "remove" and (
        _collection_edits.receiver(node) in handles) and node.args and _chosen(
            node.args[0], node, parents, scope):
      return node
  return None


def _in_order(scope: _scopes.Scope) -> Iterator[ast.AST]:
  """The nodes of `scope` (not of functions nested in it), by position."""
  return iter(sorted((n for n in scope.nodes if hasattr(n, "lineno")),
                     key=_idiom.position))


def _parents(root: ast.AST) -> Dict[int, ast.AST]:
  parents: Dict[int, ast.AST] = {}
  for node in ast.walk(root):
    for child in ast.iter_child_nodes(node):
      parents[id(child)] = node
  return parents


def _chosen(value: ast.AST, at: ast.AST, parents: Dict[int, ast.AST],
            scope: _scopes.Scope) -> bool:
  """Whether a name test or a scope that is not about bookkeeping
  chooses `value`, put in (or taken out) at `at`: a comprehension's
  `if`, an `if` around `at`, the `else` of a loop whose body breaks on
  one, or the scope of the list a loop or comprehension reads."""
  read = [_made(value, scope)]
  tests = [test for each in read for node in ast.walk(each)
           if isinstance(node, ast.comprehension) for test in node.ifs]
  scopes: List[ast.AST] = [chosen for each in read for node in ast.walk(each)
            if isinstance(node, ast.comprehension)
            for chosen in _scopes_read(node.iter)]
  child, node = at, parents.get(id(at))
  while node is not None and not isinstance(
      node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
    if isinstance(node, (ast.If, ast.IfExp, ast.While)) and (
        child is not node.test):
      tests.append(node.test)
    if isinstance(node, (ast.For, ast.While)) and any(
        child is each for each in node.orelse):
      tests += [n.test for n in ast.walk(node) if isinstance(n, ast.If)]
    if isinstance(node, ast.For) and child is not node.iter:
      made = _made(node.iter, scope)
      scopes += _scopes_read(made)
      tests += [test for each in ast.walk(made)
                if isinstance(each, ast.comprehension) for test in each.ifs]
    child, node = node, parents.get(id(node))
  chosen: List[ast.AST] = [
      t for t in tests if _names.mentions_a_name_test(t)] + scopes
  return bool(chosen) and not all(_bookkeeping(t) for t in chosen)


def _made(value: ast.AST, scope: _scopes.Scope) -> ast.AST:
  """A name's one value in `scope` (`keep = [v for v in ... if ...]`),
  else `value` itself."""
  if isinstance(value, ast.Call) and _names.call_name(value) in {
      "list", "tuple"} and len(value.args) == 1:
    value = value.args[0]
  if isinstance(value, ast.Name):
    defs = scope.defs.get(value.id, ())
    if len(defs) == 1 and defs[0].replaces:
      return defs[0].value
  return value


def _scopes_read(values: ast.AST) -> List[ast.AST]:
  """The scopes a list of variables is read by (`tf.get_collection(KEY,
  scope="encoder")`, `tf.trainable_variables("encoder")`)."""
  return [chosen for node in ast.walk(values) if isinstance(node, ast.Call)
          for chosen in [_names.scope_argument(node)] if chosen is not None]


def _bookkeeping(test: ast.AST) -> bool:
  """Whether every name `test` writes out names bookkeeping."""
  names = [n.value.lower() for n in ast.walk(test)
           if isinstance(n, ast.Constant) and isinstance(n.value, str)]
  return bool(names) and all(_keeps_books(name) for name in names)


def _keeps_books(name: str) -> bool:
  """Whether one of `_BOOKKEEPING` is a run of whole parts of `name`."""
  parts = tuple(re.split(r"[/_:]", name))
  return any(parts[i:i + len(book)] == book for book in _BOOKKEEPING
             for i in range(len(parts) - len(book) + 1))


def _exports(scope: _scopes.Scope, after: ast.AST) -> bool:
  """Whether `scope` writes the graph out and builds no step after
  `after` (a checkpoint saved in a training loop keeps the step)."""
  calls = [n for n in scope.nodes if isinstance(n, ast.Call)]
  at = _idiom.position(after)
  return any(_names.call_name(n) in _EXPORTS for n in calls) and not any(
      _names.call_name(n) in _STEPS and _idiom.position(n) > at
      for n in calls)


def _called(analysis: Analysis, scope: _scopes.Scope) -> bool:
  """Whether the surgery runs for a step: a script's own lines, or a
  function the project calls from elsewhere (a method wrapping it
  counts: a library's class is called by its users), not only from
  functions that save or export the graph."""
  if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return True
  return any(caller is not scope and not _exports(caller, call)
             for caller, call in analysis.project.callers(scope.name))


def _default_step(analysis: Analysis, scope: _scopes.Scope, after: ast.AST,
                  reads: Dict[int, bool]
                  ) -> Optional[Tuple[ast.Call, _scopes.Scope]]:
  """The first step over the default trainable list in `scope` (after
  `after`) or elsewhere in its module or a module calling it; `reads`
  keeps, per function, whether it reads the default list."""
  modules = [analysis.module(scope)] + [
      analysis.module(caller)
      for caller, _ in analysis.project.callers(scope.name)]
  seen: Set[int] = set()
  for module in modules:
    if id(module) in seen:
      continue
    seen.add(id(module))
    for other in analysis.scopes_with(module, _STEPS):
      for call in analysis.calls(other):
        if other is scope and _idiom.position(call) <= _idiom.position(
            after):
          continue
        if _over_default(call, other, analysis, reads):
          return call, other
  return None


def _over_default(call: ast.Call, scope: _scopes.Scope,
                  analysis: Analysis, reads: Dict[int, bool]) -> bool:
  """`opt.minimize(loss)` or `compute_gradients(loss)` without a
  `var_list`, or a step over what `tf.trainable_variables()` (or the
  collection) returns."""
  name = _names.call_name(call)
  if name not in _STEPS:
    return False
  if name in {"minimize", "compute_gradients"}:
    return not any(k.arg == "var_list" for k in call.keywords) and len(
        call.args) <= (2 if name == "minimize" else 1)
  # Once per function: a file of many steps reads its calls once.
  if id(scope) not in reads:
    reads[id(scope)] = any(_reads_default(c) for c in analysis.calls(scope))
  return reads[id(scope)]


def _reads_default(call: ast.Call) -> bool:
  name = _names.call_name(call)
  if name == "trainable_variables":
    return not call.args and not call.keywords
  return name == "get_collection" and len(call.args) == 1 and not (
      call.keywords) and _collection_edits.is_key(call.args[0])
