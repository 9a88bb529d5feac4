"""A TF1 write op that is built and never run: `return tf.assign(w, w *
mask)` from a function every caller of the project calls as a
statement, dropping the op it returns (a pruner's `apply` in a library
that also serves eager backends). In a graph an op nobody fetches or
depends on never runs, so nothing is re-masked. A caller that runs the
op, keeps it, or passes it on keeps the finding; so does a function no
caller of the project calls (a library's, run from outside). Likewise
gradients computed into names nothing reads are applied to nothing: no
step; and so is a train op built into a name nothing reads in a module
that runs its graph in a session (`train_all = opt.apply_gradients(gv)`
beside the filtered step the loop fetches): no `run` can fetch it."""

from __future__ import annotations

import ast
import collections
import dataclasses
import re
from typing import Dict, Iterable, List, Optional, Set, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _builtin_calls
from tfpartial._tools.scan.idioms._runs import _unnamed

# TF1 functions that return a write op (run only when fetched).
_OPS = {"assign", "scatter_update", "scatter_nd_update"}


def never_run(call: Optional[ast.AST], scope: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether `call` (`tf.assign(...)`, a function, not a method of the
  variable) is what `scope`'s function returns, and every call of that
  function in the project drops what it returns (every one seen: a
  function whose name is read otherwise than as a seen call's function,
  a call past the flow's cap among them, keeps the finding). Judged
  once a function, however many of its `return`s give back an op."""
  if not isinstance(call, ast.Call) or not isinstance(
      call.func, ast.Attribute) or call.func.attr not in _OPS or len(
          call.args) < 2 or _names.dotted(call.func.value) not in {
              "tf", "tf.compat.v1"}:
    return False
  function = scope.node
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
      id(call) not in _returned(scope)):
    return False
  dropped = analysis.once(f"dropped:never_run:{id(function)}", lambda: (
      _all_dropped(analysis, function)))
  return dropped is True


def _returned(scope: _scopes.Scope) -> Set[int]:
  """The ids of the values `scope`'s `return`s give back, read once."""
  return scope.once((_returned, None, 0), lambda: {
      id(n.value) for n in _scopes.walk(scope.node)
      if isinstance(n, ast.Return) and n.value is not None})


def _all_dropped(analysis: Analysis, function: Union[
    ast.FunctionDef, ast.AsyncFunctionDef]) -> bool:
  """Whether every call of `function` the project makes drops what it
  returns. `_only_called` also holds every call past the flow's cap
  (`Flow.every_call_of`): each is spelled with the function's name, a
  read of it no seen call holds."""
  callers = analysis.flow.calls_of(function)
  return bool(callers) and all(
      _dropped(c, s) for s, c in callers) and _only_called(
          analysis, function.name, {id(c) for _, c in callers})


def _only_called(analysis: Analysis, name: str, calls: Set[int]) -> bool:
  """Whether the project reads `name` (a name or an attribute) only as
  the function of one of `calls`, and imports it under no other name:
  a helper bound to another name, kept in a dict or called in a way the
  flow did not follow may run what it returns. Any module that does
  not parse may too."""
  project = analysis.project
  for module in project.all_modules_with([name]):
    parsed = project.parsed(module)
    if parsed is None:
      return False
    called = {id(n.func) for n in _scopes.walk(parsed.node)
              if isinstance(n, ast.Call) and id(n) in calls}
    for node in _scopes.walk(parsed.node):
      if isinstance(node, ast.alias) and node.name.split(".")[-1] == name:
        if node.asname not in (None, name):
          return False
      elif (isinstance(node, ast.Name) and node.id == name or isinstance(
          node, ast.Attribute) and node.attr == name) and isinstance(
              getattr(node, "ctx", None), ast.Load) and (
                  id(node) not in called):
        return False
  return True


def _dropped(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `call` is a statement of its own (its value unused)."""
  return any(isinstance(n, ast.Expr) and n.value is call
             for n in _scopes.walk(scope.node))


# The calls that compute gradients outside an optimizer (whose own
# `compute_gradients` is the first half of its step): nothing trains
# until they are applied.
_GRADIENTS = {"gradients", "gradient"}


def unread_gradients(call: ast.Call, scope: _scopes.Scope,
                     analysis: Analysis) -> bool:
  """Whether `call` computes gradients into names no expression reads
  (`W1_grad = tf.gradients(loss, [W1])[0]`, its one print commented
  out): never applied, they train nothing, so the variables they leave
  out are left out of no step. A read anywhere in the module counts
  (another function's name alike), and for a module's name one in a
  module that imports it; a call of the builtin `locals`, `vars`,
  `globals`, `eval` or `exec`, a `__dict__` or `sys.modules` in the
  module may read any name (`_reads`), and so may a getter of a built
  name on the module, `vars`, `__dict__`, `eval` or `exec` in a module
  importing it (`_unnamed`)."""
  if _names.call_name(call) not in _GRADIENTS:
    return False
  names = _taking(scope).get(id(call))
  if not names:
    return False  # Kept on an object, passed on, returned: read.
  module = analysis.module(scope)
  reads = _module_reads(analysis, module)
  if reads is None or any(n in reads for n in names):
    return False
  return scope.parent is not None or not any(
      _read_elsewhere(analysis, module, n) for n in names) and (
          not _unnamed_elsewhere(analysis, module))


def _unnamed_elsewhere(analysis: Analysis, module: _project.Module
                       ) -> bool:
  """Whether a module importing `module` may read its names unnamed
  (`getattr(model, key)`, `vars(model)[key]`, `eval`), or a module that
  may does not parse (`_unnamed.project_reads`)."""
  unnamed = _unnamed.project_reads(analysis)
  return unnamed.unparsed or id(module) in (
      unnamed.objects | unnamed.modules)


def _read_elsewhere(analysis: Analysis, module: _project.Module,
                    name: str) -> bool:
  """Whether another module of the project may read `name` (imported
  from `module`, or as its attribute): any read of the name there, or a
  module that does not parse. The readers of a name are found once a
  scan, however many modules bind it."""
  readers = analysis.once(f"dropped:readers:{name}", lambda: {
      id(m) for m in analysis.project.all_modules_with([name])
      if _module_reads(analysis, m) is None or name in (
          _module_reads(analysis, m) or ())})
  assert isinstance(readers, set)
  return bool(readers - {id(module)})


def _module_reads(analysis: Analysis, module: _project.Module
                  ) -> Optional[Set[str]]:
  """The names `module`'s code reads (`_reads`), read once a scan; None
  when it may read any name, or does not parse."""
  found = analysis.once("dropped:reads", dict)
  assert isinstance(found, dict)
  if id(module) not in found:
    if module.tree is None:
      analysis.project.parsed(module)  # Parsed now, if it parses.
    tree = module.tree
    found[id(module)] = None if tree is None else _reads(
        tree, _builtin_calls.of_module(analysis, tree))
  reads = found[id(module)]
  return reads if isinstance(reads, set) else None


def _reads(tree: ast.AST, builtins: Optional[Dict[int, str]] = None
           ) -> Optional[Set[str]]:
  """The names `tree` reads: loaded (an augmented assignment's target
  too), declared `global` or `nonlocal`, an attribute's or an import's
  name, a string that is the name (`getattr(m, "g")`); None when it may
  read any name (a call of the builtin `locals`, `vars`, `globals`,
  `eval` or `exec`, resolved in the call's own scopes or through
  `builtins`: `builtins`, `_builtin_calls`'s, found here if not given;
  `__dict__`).

  >>> sorted(_reads(ast.parse("g = f(1)\\nh += k  # g\\nprint('g is')")))
  ['f', 'g is', 'h', 'k', 'print']
  >>> _reads(ast.parse("g = 1\\nprint(locals())")) is None
  True
  """
  found: Set[str] = set()
  if builtins is None:
    builtins = _builtin_calls.builtin_calls(tree)
  if _modules_of_sys(tree) or not _ANY_NAME.isdisjoint(builtins.values()):
    return None  # `sys.modules[__name__]`, `vars()`: read unnamed.
  for node in ast.walk(tree):
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
      found.add(node.id)
    elif isinstance(node, ast.AugAssign) and isinstance(
        node.target, ast.Name):
      found.add(node.target.id)
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
      found.update(node.names)
    elif isinstance(node, ast.Attribute):
      if node.attr == "__dict__":
        return None
      found.add(node.attr)
    elif isinstance(node, ast.alias):
      found.add(node.name.split(".")[-1])
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
      found.add(node.value)
  return found


# Builtins that may read any name of a scope.
_ANY_NAME = _builtin_calls.DYNAMIC - {"getattr"}


def _modules_of_sys(tree: ast.AST) -> bool:
  """Whether `tree` reads `sys.modules` (through `import sys`, under any
  alias, or `from sys import modules`).

  >>> _modules_of_sys(ast.parse("import sys as s\\nm = s.modules"))
  True
  """
  systems = {a.asname or a.name for n in ast.walk(tree)
             if isinstance(n, ast.Import) for a in n.names
             if a.name == "sys"}
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module == "sys" and any(
        a.name in ("modules", "*") for a in node.names):
      return True
    if isinstance(node, ast.Attribute) and node.attr == "modules" and (
        isinstance(node.value, ast.Name) and node.value.id in systems):
      return True
  return False


def printed_gradients(call: ast.Call, scope: _scopes.Scope,
                      analysis: Analysis) -> bool:
  """Whether `call` computes gradients only to print them
  (`print(tape.gradient(res, [z]))` in a course's notebook): applied to
  nothing, they train nothing."""
  if _names.call_name(call) not in _GRADIENTS:
    return False
  held, printed = scope.once((printed_gradients, None, 0), lambda: (
      {id(n) for n in scope.nodes}, _printed_in(scope.nodes)))
  if id(call) in held:  # A print's argument is in the print's scope.
    return id(call) in printed
  return id(call) in _printed(analysis, analysis.module(scope))


def _printed_in(nodes: Iterable[ast.AST]) -> Set[int]:
  """The ids of the arguments `print(...)` is given among `nodes`."""
  return {id(a) for n in nodes if isinstance(n, ast.Call) and isinstance(
      n.func, ast.Name) and n.func.id == "print" for a in n.args}


def _printed(analysis: Analysis, module: _project.Module) -> Set[int]:
  """The ids of the arguments `print(...)` is given in `module`, read
  once per module from its kept walk (the module's parent of every node
  was built for them)."""
  printed = analysis.once("dropped:printed", dict)
  assert isinstance(printed, dict)
  if id(module) not in printed:
    printed[id(module)] = _printed_in(
        _scopes.walk(module.tree) if module.tree is not None else ())
  found: Set[int] = printed[id(module)]
  return found


# An optimizer's step that, in a graph, returns its op (run when fetched).
_OP_STEPS = {"minimize", "apply_gradients"}


def unfetched_op(call: ast.Call, scope: _scopes.Scope,
                 analysis: Analysis) -> bool:
  """Whether `call` (`opt.minimize(...)`, `opt.apply_gradients(...)`) is
  assigned, alone, to a local name of a function its module names
  nowhere else, in a module that runs a session, while a `run` of the
  function fetches another train op it builds: a graph's train op
  nothing fetches, so it never runs and trains nothing (eager code, with
  no session, runs it at the call); or `opt.compute_gradients(...)`
  whose pairs only such a step reads."""
  kind = _names.call_name(call)
  if kind not in _OP_STEPS and kind != "compute_gradients" or not (
      isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef))
      or _in_main(call, scope.node)):
    return False  # A module's name may be imported and run elsewhere.
  words = _words(analysis, scope)
  if words is None:
    return False  # No session: eager code runs a step at its call.
  ops = _ops(scope)
  name = ops.assigned.get(id(call))
  if name is None:
    return False  # Kept on an object, returned, passed on: read.
  if kind in _OP_STEPS:
    return words.get(name, 0) == 1 and bool(ops.fetched - {name})
  if words.get(name, 0) != 2:
    return False
  # `gv = opt.compute_gradients(...)` read once, by a step never fetched.
  readers = ops.readers.get(name, [])
  return len(readers) == 1 and unfetched_op(readers[0], scope, analysis)


def _in_main(call: ast.Call, module: ast.AST) -> bool:
  """Whether `call` is in the body of the module's `if __name__ ==
  '__main__':` block: names bound there exist only when the file runs
  as a script, so no importer can fetch them.

  >>> tree = ast.parse("if __name__ == '__main__':\\n    op = o.minimize(l)\\n")
  >>> _in_main(tree.body[0].body[0].value, tree)
  True
  >>> tree = ast.parse("if __name__ != '__main__':\\n    op = o.minimize(l)\\n")
  >>> _in_main(tree.body[0].body[0].value, tree)
  False
  """
  if not isinstance(module, ast.Module):
    return False  # A lambda's or a class's scope: not the script's.
  at = (call.lineno, call.col_offset)
  for block in module.body:
    if isinstance(block, ast.If) and _is_main(block.test) and block.body and (
        block.body[0].lineno, 0) <= at <= (
            block.body[-1].end_lineno or 0,
            block.body[-1].end_col_offset or 0):
      return True
  return False


def _is_main(test: ast.expr) -> bool:
  """Whether `test` is `__name__ == '__main__'` (either way round): true
  only when the file runs as a script (`!=` is true when imported)."""
  if not isinstance(test, ast.Compare) or len(test.ops) != 1 or (
      not isinstance(test.ops[0], ast.Eq)):
    return False
  left, right = test.left, test.comparators[0]
  return any(_names.dotted(name) == "__name__" and isinstance(
      text, ast.Constant) and text.value == "__main__"
             for name, text in ((left, right), (right, left)))


@dataclasses.dataclass
class _Ops:
  """A function's train ops: the name each step is assigned to alone, the
  op names its `run`s fetch, and the `apply_gradients` reading each name.
  """

  assigned: Dict[int, str]
  fetched: Set[str]
  readers: Dict[str, List[ast.Call]]


def _ops(scope: _scopes.Scope) -> _Ops:
  """`scope`'s `_Ops`, read once."""
  return scope.once((_ops, None, 0), lambda: _read_ops(scope))


def _read_ops(scope: _scopes.Scope) -> _Ops:
  assigned: Dict[int, str] = {}
  steps: Set[str] = set()
  read: Set[str] = set()
  readers: Dict[str, List[ast.Call]] = {}
  for n in scope.nodes:
    if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and len(
        n.targets) == 1 and isinstance(n.targets[0], ast.Name):
      assigned[id(n.value)] = n.targets[0].id
      if _names.call_name(n.value) in _OP_STEPS:
        steps.add(n.targets[0].id)
    elif isinstance(n, ast.Call) and _names.call_name(n) in {
        "run", "apply_gradients"}:
      names = {a.id for part in (*n.args, *(k.value for k in n.keywords))
               for a in ast.walk(part) if isinstance(a, ast.Name)}
      if _names.call_name(n) == "run":
        read |= names
      else:
        for each in names:
          readers.setdefault(each, []).append(n)
  return _Ops(assigned, steps & read, readers)


def _words(analysis: Analysis, scope: _scopes.Scope
           ) -> Optional[Dict[str, int]]:
  """How many times `scope`'s module (comment lines left out) names each
  word, if it runs a session (`_runs_session`); else None. Counted once
  a scan, with the session."""
  module = analysis.module(scope)
  counted = analysis.once("dropped:words", dict)
  assert isinstance(counted, dict)
  if id(module) not in counted:
    counted[id(module)] = dict(collections.Counter(_WORD.findall(
        _uncommented(analysis, scope)))) if "Session" in (
            module.source.text) and _runs_session(module.tree) else None
  found = counted[id(module)]
  return found if isinstance(found, dict) else None


def _runs_session(tree: Optional[ast.AST]) -> bool:
  """Whether `tree` calls a session into being (`tf.Session()`,
  `tf.compat.v1.Session()`, `InteractiveSession()`,
  `MonitoredTrainingSession()`): a call, not a docstring's words.

  >>> [_runs_session(ast.parse(t)) for t in ("s = tf.Session()", "'Session()'")]
  [True, False]
  """
  return tree is not None and any(
      isinstance(n, ast.Call) and _names.call_name(n).endswith(
          "Session") for n in ast.walk(tree))


# A word, as `_words` counts them.
_WORD = re.compile(r"\b\w+\b")


def _uncommented(analysis: Analysis, scope: _scopes.Scope) -> str:
  """The text of `scope`'s module without its comment lines, made once a
  scan."""
  module = analysis.module(scope)
  uncommented = analysis.once("dropped:uncommented", dict)
  assert isinstance(uncommented, dict)
  if id(module) not in uncommented:
    uncommented[id(module)] = _COMMENT_LINE.sub("", module.source.text)
  return str(uncommented[id(module)])


# A line that is only a comment (a print of the gradients switched off).
_COMMENT_LINE = re.compile(r"^[ \t]*#[^\n]*$", re.M)


def _taking(scope: _scopes.Scope) -> Dict[int, Set[str]]:
  """id(a value) -> the names of `scope` bound to it, or to an element
  of what it returns: read once per scope (each gradient call of a
  script read every assignment of it)."""
  return scope.once((_taking, None, 0), lambda: _read_taking(scope))


def _read_taking(scope: _scopes.Scope) -> Dict[int, Set[str]]:
  taking: Dict[int, Set[str]] = {}
  for name, defs in scope.defs.items():
    for each in defs:
      value = each.value
      while isinstance(value, ast.Subscript):
        value = value.value
      if value is not None:
        taking.setdefault(id(value), set()).add(name)
  return taking
