"""What an expression is made of: gradients, variables, masks, copies.

`Flow.labels(expr, scope)` answers with a `Labels` dict, kind -> the node
where that kind arose (the masking op for "masked", the mix for "mix"):

- "grad": a gradient; "masked": a gradient through a mask;
- "var": a variable itself (or a list of them); "vararith": arithmetic on
  one; "shadow": a non-trainable variable; "copy:R": a snapshot of the
  variable R (its text); "filtered": variables filtered by name or scope;
- "mask": a 0/1 or boolean mask; "const": literals and NumPy only;
- "sg": `stop_gradient` of a variable; "mix": a stop-gradient mix of one;
  "varmask:R": the variable R times a mask;
- "train": a train step; "write": a write into a variable;
- "fn": a function of the project (or a `functools.partial` of one);
  "obj": an instance of a project class (the node is its `ClassDef`);
- "param": a parameter of the function, unknown here.

Data is followed through names (reads see the assignments that reach
them), attributes of `self` and of project objects, and calls into the
project: a called function is evaluated with its arguments' labels (its
summary for that call), methods through their class and its bases,
`super()` to the base class; a parameter that no call binds takes what
the calls of its function in the project pass it (an override's, what a
base class's call on its own object passes: `_base_calls`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import heapq
import itertools
import os
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _base_calls
from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _model_parts
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _property_reads
from tfpartial._tools.scan import _records
from tfpartial._tools.scan import _rejoined
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _superseded
from tfpartial._tools.scan import _towers
from tfpartial._tools.scan import _typed
from tfpartial._tools.scan import _var_params
from tfpartial._tools.scan._labels import Labels, union

_MAX_DEPTH = 60
# A layer's or model's lists of its weights, by attribute.
_WEIGHT_LISTS = {"trainable_variables", "trainable_weights", "variables",
                 "weights"}
_ROUNDS = 3  # Rounds of a cycle of names read until it is stable.
_FROM_CALLERS = 24  # Call sites a parameter reads, at most.
# What a parameter takes from its callers: values, not a caller's place.
_PASSED = {"grad", "var", "filtered", "mask", "const", "shadow", "fn", "obj",
           "train", "write", "masked", "sg"}


class Flow:
  """The labels of expressions in one project, memoised.

  >>> module = _scopes.collect(ast.parse(
  ...     "g = opt.compute_gradients(loss)\\nm = [0., 1.]\\nh = g[0] * m\\n"))
  >>> sorted(Flow().labels(module.defs["h"][0].value, module))
  ['grad', 'masked', 'timesmask']
  """

  def __init__(self, project: Optional[_project.Project] = None) -> None:
    self.project = project or _project.Project([])
    self._memo: Dict[Tuple[int, int, object, bool], Labels] = {}
    self._held: Dict[int, ast.AST] = {}  # id -> the node, kept alive.
    self._names: Dict[Tuple[int, str, Tuple[int, ...], object, bool],
                      Labels] = {}
    # While a called expression is evaluated: a parameter takes the
    # functions the project's calls pass it (`variable_filter_fn(vs)`).
    self._calling = False
    # A function's parameters while it is evaluated with its arguments.
    self._bound: Dict[int, Dict[str, Labels]] = {}
    self._token: object = None
    self._active: Set[object] = set()
    # An attribute being read -> the labels of its assignments read so far.
    self._attribute_so_far: Dict[object, Labels] = {}
    # A name read while it is read (a loop's `g = grads[i]; grads[i] = g`)
    # gives what its read gave so far; when that grows, the read is done
    # again, what was memoised since it began forgotten (the journal).
    self._closing: Set[object] = set()  # Reads a cycle came back to.
    self._provisional: Dict[object, Labels] = {}
    # Only what depends on where it was computed is journaled: a value that
    # met a read in progress, a cut cycle or the depth limit ("tainted");
    # the others are the same wherever they are computed, and are kept.
    self._journal: List[Tuple[Dict[Any, Labels], object]] = []
    self._tainted = False  # The value being computed is.
    self._memo_tainted: Set[object] = set()  # Keys of tainted values.
    # Helpers, callers' arguments, classes' constructions and masking
    # methods being worked out (a cycle cut when one is asked again).
    self._working: Set[object] = set()
    self._again = False  # A read is being done again.
    self._helpers: Dict[Tuple[int, FrozenSet[str]], Labels] = {}
    self._from_callers: Dict[Tuple[int, str], Labels] = {}
    self.classes: Dict[int, _scopes.ClassInfo] = {}
    self.functions: Dict[int, Tuple[_scopes.FunctionNode,
                                    _scopes.Scope]] = {}
    self.partials: Dict[int, ast.Call] = {}
    self.zips: Dict[int, _scopes.Scope] = {}  # A `zip` call -> its scope.
    self._callees: Dict[int, Optional[ast.AST]] = {}
    self._calls_of: Dict[int, List[Tuple[_scopes.Scope, ast.Call]]] = {}
    self._capped: Set[int] = set()  # Functions called past the cap.
    # A method found through its class -> that class, bound as `self`.
    self.bound_self: Dict[int, ast.ClassDef] = {}
    self.depth = 0
    self.visits = 0  # Expressions evaluated (not from the memo).
    self.origin: Dict[int, _scopes.Scope] = {}  # A labelled node's scope.
    self._params_memo: Dict[Tuple[int, str], FrozenSet[str]] = {}
    # A method name -> whether a project's method of that name returns its
    # argument times its object's mask.
    self.masking_methods: Dict[str, bool] = {}
    self.judging: Set[str] = set()  # Those being worked out.
    self._literal: Dict[int, bool] = {}  # A list node -> literal mask?
    # (attribute, file) -> the assignments to it nearest that file.
    self._nearest: Dict[Tuple[str, str],
                        List[Tuple[ast.expr, _scopes.Scope]]] = {}
    # An attribute -> the ops a property of that name returns.
    self._properties: Dict[str, Labels] = {}
    # A file -> how near it each module is (by the module's id).
    self._nearness: Dict[str, Dict[int, Tuple[int, ...]]] = {}
    self._places: Dict[int, Tuple[str, str]] = {}  # A module's path, stem.
    self._folders: Dict[Tuple[str, str], str] = {}  # Their common path.

  def labels(self, node: Optional[ast.AST], scope: _scopes.Scope,
             env: Optional[Dict[str, Labels]] = None) -> Labels:
    """The labels of `node` in `scope`; `env` binds names first."""
    if node is None:
      return {}
    if self.depth > _MAX_DEPTH:
      self._tainted = True
      return {}
    # Memos are keyed by `id`: a node made on the fly (a copy to read,
    # `ast.Name(name)`) is held, so no later node takes its id and reads
    # its labels (which made findings vary with memory layout).
    self._held.setdefault(id(node), node)
    key = (id(node), id(scope), self._token, self._calling)
    if not env and key in self._memo:
      if key in self._memo_tainted:
        self._tainted = True
      return self._memo[key]
    if isinstance(node, ast.Constant):  # Most of a table's elements.
      self.visits += 1
      constant: Labels = {"const": node}
      if not env:
        self._memo[key] = constant
      self.origin.setdefault(id(node), scope)
      return constant
    self.depth += 1
    self.visits += 1
    outer, self._tainted = self._tainted, False
    try:
      result = self._labels(node, scope, env or {})
    finally:
      self.depth -= 1
      tainted = self._tainted
      self._tainted = outer or tainted
    if not env:
      self._memo[key] = result
      if tainted:
        self._memo_tainted.add(key)
        self._journal.append((self._memo, key))
    if node in result.values():
      self.origin.setdefault(id(node), scope)
    return result

  def _labels(self, node: ast.AST, scope: _scopes.Scope,
              env: Dict[str, Labels]) -> Labels:
    if isinstance(node, ast.Name):
      return self.name(node.id, node, scope, env)
    if isinstance(node, ast.Attribute):
      return self._attribute(node, scope, env)
    if isinstance(node, ast.Subscript):
      found = self.labels(node.value, scope, env)
      if isinstance(node.slice, ast.Slice) and (
          "var" in found or _pairs(found) and not _paired_gradient(
              node.value, scope)) and any(
              (node.slice.lower, node.slice.upper, node.slice.step)) and (
                  not _towers.transposed(node.value)
                  or _towers.rows_of_pairs(node.value, scope, lambda v: (
                      _pairs(self.labels(v, scope, env))), lambda call: (
                          self.callee(call, scope)))):
        # `model.trainable_variables[-4:]`, `grads_and_vars[-2:]`: some
        # variables, by position (`[:]` copies them all).
        found = {**found, "filtered": node}
      elif isinstance(node.slice, ast.Constant) and isinstance(
          node.slice.value, str) and _names.is_mask_name(node.slice.value):
        found = {**found, "mask": node}  # `par['w_rnn_mask']`.
      return found
    if isinstance(node, ast.Constant):
      return {"const": node}
    if isinstance(node, ast.BinOp):
      return _calls.binop(self, node, node.left, node.right, scope, env)
    if isinstance(node, ast.UnaryOp):
      return self.labels(node.operand, scope, env)
    if isinstance(node, ast.Compare):
      if any(_calls.drawn(self, part, scope, env)
             for part in (node.left, *node.comparators)):
        if _drawn_once(node, scope):
          return {"mask": node}
        return {"random": node}  # `rand < p`, `abs(g) > t`: not fixed.
      return {"mask": node}
    if isinstance(node, ast.Call):
      return _calls.call(self, node, scope, env)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
      return self._elements(node, scope, env)
    if isinstance(node, ast.Dict):
      return union(self.labels(v, scope, env) for v in node.values)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
      return self._comprehension(node, node.elt, scope, env)
    if isinstance(node, ast.DictComp):
      return self._comprehension(node, node.value, scope, env)
    if isinstance(node, ast.IfExp):
      return _calls.choice(self, node, scope, env)
    if isinstance(node, (ast.Starred, ast.NamedExpr, ast.Await)):
      return self.labels(node.value, scope, env)
    if isinstance(node, ast.BoolOp):
      return union(self.labels(v, scope, env) for v in node.values)
    if isinstance(node, ast.Lambda):
      home = scope
      self.functions[id(node)] = (node, home)
      return {"fn": node}
    return {}

  def _elements(self, node: ast.AST, scope: _scopes.Scope,
                env: Dict[str, Labels]) -> Labels:
    elements = getattr(node, "elts", [])
    found = union(self.labels(e, scope, env) for e in elements)
    literal = self._literal.get(id(node))
    if literal is None:
      literal = self._literal[id(node)] = _names.literal_mask(node)
    if literal:
      found.update({"mask": node, "const": node})
    elif found and any(isinstance(e, ast.Constant) for e in elements) \
        and set(found) == {"const"}:
      found = {"const": node}
    base = _by_index(elements)
    if base is not None and "var" in self.labels(base, scope, env):
      # `[model.trainable_variables[0], model.trainable_variables[1]]`:
      # some variables, by position, as a slice picks them.
      found = {**found, "filtered": node}
    return found

  def name(self, name: str, node: ast.AST, scope: _scopes.Scope,
           env: Dict[str, Labels]) -> Labels:
    """The labels of a name (or `self.attr`) seen from `scope`."""
    if name in env:
      return env[name]
    if name.startswith("self."):
      return self._self_attribute(name, node, scope)
    found: Labels = {}
    if _names.is_mask_name(name):
      found["mask"] = node
    place: Optional[_scopes.Scope] = scope
    while place is not None:
      if name in place.defs or name in place.params:
        got = self._read(name, node, place, place is scope)
        if got or name not in place.functions:
          found.update(got)
          return found
        # `def variable(...)` read before a comprehension binds the name
        # for itself alone (`[variable for _, variable in pairs]`).
        break
      if name in place.functions or name in place.classes:
        break
      place = place.parent
    target = self.project.resolve(scope, name)
    found.update(self.of_target(target))
    if not found and target is None:
      found.update(self._imported_value(name, scope))
    return found

  def of_target(self, target: Optional[_project.Target]) -> Labels:
    """The labels of a function or class of the project, as a value."""
    if isinstance(target, tuple):
      self.functions[id(target[0])] = target
      return {"fn": target[0]}
    if isinstance(target, _scopes.ClassInfo):
      self.classes[id(target.node)] = target
      return {"cls": target.node}
    return {}

  def _imported_value(self, name: str, scope: _scopes.Scope) -> Labels:
    """`from config import MASK`: the value a module of the project
    assigns to a name this one imports."""
    module = scope.module
    if not isinstance(module, _project.Module) or (
        name not in module.imports):
      return {}
    where, attribute = module.imports[name]
    found = self.project.find_module(where.lstrip("."), module,
                                     len(where) - len(where.lstrip(".")))
    if found is None or not attribute:
      return {}
    home = self.project.parsed(found)
    if home is None or attribute not in home.defs:
      return {}
    return self._read(attribute, None, home, False)

  def _read(self, name: str, node: Optional[ast.AST], place: _scopes.Scope,
            here: bool) -> Labels:
    reaching = place.reaching(name, node) if here and node is not None \
        else tuple(range(len(place.defs.get(name, []))))
    bound = self._bound.get(id(place), {})
    key = (id(place), name, reaching, self._token if bound else None,
           self._calling)
    if key in self._names:
      if key in self._memo_tainted:
        self._tainted = True
      return self._names[key]
    if key in self._active:  # A name defined from itself: what is known.
      self._closing.add(key)
      self._tainted = True
      return self._provisional.get(key, {})
    self._active.add(key)
    start, again = len(self._journal), self._again
    outer, self._tainted = self._tainted, False
    try:
      for _ in range(_ROUNDS):  # A cycle read again with what it gave.
        found = self._read_once(name, node, place, reaching, bound)
        if again or self._settled(key, found, start):
          break
    finally:
      self._again = again
      self._active.discard(key)
      self._closing.discard(key)
      self._provisional.pop(key, None)
      tainted = self._tainted
      self._tainted = outer or tainted
    self._names[key] = found
    if tainted:
      self._memo_tainted.add(key)
      self._journal.append((self._names, key))
    return found

  def cut(self) -> None:
    """Marks the value being computed as met by a cut cycle."""
    self._tainted = True

  def _forget(self, start: int) -> None:
    """Forgets the tainted values memoised since `start` in the journal."""
    for memo, stored in self._journal[start:]:
      memo.pop(stored, None)
      self._memo_tainted.discard(stored)
    del self._journal[start:]

  def _read_once(self, name: str, node: Optional[ast.AST],
                 place: _scopes.Scope, reaching: Tuple[int, ...],
                 bound: Dict[str, Labels]) -> Labels:
    found: Labels = {}
    defs = place.defs.get(name, [])
    for index in reaching:
      value = defs[index].value
      got = self.labels(value, place)
      got = self._part(value, got, defs[index], place)
      got = self.chosen(value, place, got)
      for kind, where in got.items():
        found.setdefault(kind, where)
    if name in place.params:
      if name in bound:
        found.update(bound[name])
      else:
        found.setdefault("param", node or place.node)
        if self._calling:
          for kind, where in self._passed(name, place).items():
            found.setdefault(kind, where)
      for kind, where in _names.param_labels(name, place).items():
        # A parameter of pairs bound to a call's keeps where they were
        # computed (`dense_grad_filter(grads_and_vars)`); one gradient
        # (`zero_rows(grad)`) is the helper's own; pairs the helper reads
        # as pairs keep it whatever the name (`deal_gradient(grad)`).
        if kind not in bound.get(name, {}) or not (_var_params.pairs_name(
            name) or _calls.pairs(bound[name]) and (
                _var_params.read_as_pairs(name, place.node))):
          found[kind] = where
    if defs and any(not d.replaces and isinstance(d.value, ast.Constant)
                    for d in defs) and any(
        isinstance(d.value, ast.Call) and _names.call_name(d.value) in {
            "ones", "zeros", "ones_like", "zeros_like"} for d in defs):
      found["mask"] = node or place.node  # `m = ones(n); m[0] = 0`.
    return found

  def chosen(self, value: ast.expr, home: _scopes.Scope, got: Labels
             ) -> Labels:
    """`got`, "filtered" when a loop adds `value` (variables) to a list
    under an `if` that chooses them (`if fixed[i] == '0': chosen +=
    weights[i]`)."""
    test = home.tests.get(id(value))
    if test is not None and (_calls.zero(value, home) and not isinstance(
        value, ast.Constant) or _names.is_none(value)) and (
            _names.filters_by_name(test, self, home)):
      # `new_grads.append(tf.zeros_like(g))` for the variables it names;
      # not a bare `0`, no variable's gradient (`labels.append(0)` for
      # the files a test names: a class label).
      return {**got, "masked": value}
    guard = home.guards.get(id(value))
    if guard is None or "filtered" in got or not _names.filters_by_name(
        guard, self, home) or _rejoined.both_arms_joined(guard, home):
      return got  # No choice, or a split whose arms are joined again.
    self.origin.setdefault(id(value), home)
    return {**got, "filtered": value}

  def _passed(self, name: str, place: _scopes.Scope) -> Labels:
    """What the project's calls of `place`'s function pass as `name`."""
    function = place.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return {}
    key = (id(function), name)
    if key in self._from_callers:
      if ("passed", key) in self._working:
        self._tainted = True
      return self._from_callers[key]
    self._from_callers[key] = {}
    self._working.add(("passed", key))
    position = place.params.index(name)
    if place.cls is not None and place.params[:1] == ["self"]:
      position -= 1
    found: Labels = {}
    calls = self.constructions(place.cls) if (
        function.name == "__init__" and place.cls is not None) else (
            self.calls_of(function))
    for scope, call in calls:
      module = scope.module
      if isinstance(module, _project.Module) and module.is_test:
        continue  # A test's arguments exercise the function.
      argument = next((k.value for k in call.keywords if k.arg == name),
                      None)
      starred = [a for a in call.args[:position + 1]
                 if isinstance(a, ast.Starred)]
      if argument is None and starred:
        argument = starred[0].value  # `f(*gradients)`: one of its items.
      elif argument is None and 0 <= position < len(call.args):
        argument = call.args[position]
      if argument is not None:
        passed = self.labels(argument, scope)
        for kind, where in passed.items():
          if kind in _PASSED or kind.startswith("copy:"):
            found.setdefault(kind, where)
    self._from_callers[key] = found
    self._working.discard(("passed", key))
    return found

  def _part(self, value: ast.expr, got: Labels, bound: _scopes.Def,
            place: _scopes.Scope) -> Labels:
    """What a name bound to part of `value` holds: element `i` of a
    `zip`, and of a (gradient, variable) pair the variable (not the
    gradient a function of the project returns second: `val, grad =
    self.loss_val_grad()`)."""
    part, outer = bound.part, bound.outer
    if outer is not None and "zip" in got:
      got = self.element(got["zip"], outer) or got
    elif part is not None and "zip" in got:
      got, part = self.element(got["zip"], part) or got, None
    if isinstance(value, ast.Call) and _names.call_name(value) == "items" \
        and part is not None and part[1] == 2:
      # `for name, g in tape.gradient(loss, var_dict).items()`: the key
      # names the variable; the value is the gradient the dict holds.
      return got
    if part == (1, 2) and "grad" in got and "var" not in got and not (
        isinstance(value, ast.Call) and outer is None and "grad" in (
            self._returned(value, part, place) or {})):
      return {"var": value}  # `for g, v in grads_and_vars`: `v`.
    return got

  def _returned(self, call: ast.Call, part: Tuple[int, int],
                place: _scopes.Scope) -> Optional[Labels]:
    """Element `i` of the `n`-tuples every `return` of the project's
    function `call` calls spells out, if it spells them out."""
    function = self.callee(call, place)
    known = self.functions.get(id(function))
    inner = known[1].scope_of(known[0]) if known is not None else None
    if inner is None or isinstance(inner.node, ast.Lambda):
      return None
    index, count = part
    returns = [n for n in inner.nodes if isinstance(n, ast.Return)]
    tuples = [n.value for n in returns if isinstance(n.value, ast.Tuple)
              and len(n.value.elts) == count]
    if not tuples or len(tuples) < len(returns):
      return None
    return union([self.labels(t.elts[index], inner) for t in tuples])

  def element(self, zipped: ast.AST, part: Tuple[int, int]) -> Labels:
    """Element `i` of the `n`-tuples a `zip(...)` call makes."""
    index, count = part
    home = self.zips.get(id(zipped))
    args = getattr(zipped, "args", [])
    if home is None or len(args) != count or any(
        isinstance(a, ast.Starred) for a in args):
      return {}
    return self.labels(args[index], home)

  def calls_of(self, function: ast.AST
               ) -> List[Tuple[_scopes.Scope, ast.Call]]:
    """The project's calls of `function` (at most `_FROM_CALLERS`; see
    `every_call_of` for whether that is all of them)."""
    if id(function) not in self._calls_of:
      name = getattr(function, "name", "")
      named = self.project.callers(name)
      method = self._method_scope(function, named)
      # `self.m(...)` in a base class runs a subclass's override of `m`.
      found = [(scope, call) for scope, call in named[:_FROM_CALLERS * 4]
               if self.callee(call, scope) is function or (
                   _base_calls.reaches(self.project, call, scope, method))]
      self._calls_of[id(function)] = found[:_FROM_CALLERS]
      if len(named) > _FROM_CALLERS * 4 or len(found) > _FROM_CALLERS:
        self._capped.add(id(function))
    return self._calls_of[id(function)]

  def _method_scope(self, function: ast.AST,
                    named: List[Tuple[_scopes.Scope, ast.Call]]
                    ) -> Optional[_scopes.Scope]:
    """The scope of `function` where it is a method and some call of its
    name is made on an object (`self.m(...)`), else None."""
    if not any(isinstance(call.func, ast.Attribute) for _, call in named):
      return None
    known = self.functions.get(id(function))
    if known is not None:
      return known[1].scope_of(known[0])
    name = getattr(function, "name", "")
    return next((s for s in self.project.functions_named(
        (name,), unscanned=True) if s.node is function), None)

  def every_call_of(self, function: ast.AST) -> bool:
    """Whether `calls_of(function)` holds every call the project makes of
    it by its name (none left past the cap): a rule that needs all of
    them to hold (`all(...)`) must not silence from some."""
    self.calls_of(function)
    return id(function) not in self._capped

  def constructions(self, info: _scopes.ClassInfo
                    ) -> List[Tuple[_scopes.Scope, ast.Call]]:
    """The project's calls of a class (at most `_FROM_CALLERS`): what its
    `__init__` is called with."""
    key = id(info.node)
    if ("built", key) in self._working:
      self._tainted = True
    if key not in self._calls_of:
      self._calls_of[key] = []  # A class built in its own `__init__`.
      self._working.add(("built", key))
      # A script that builds the trainer may hold no sink itself.
      calls = list(itertools.islice(self.project.calls_named(
          (info.name,), self.project.all_modules_with((info.name,))),
                                    _FROM_CALLERS * 4))
      self._calls_of[key] = [
          (scope, call) for scope, call in calls
          if self.called(call.func, scope).get("cls") is info.node][
              :_FROM_CALLERS]
      self._working.discard(("built", key))
    return self._calls_of[key]

  def called(self, func: ast.AST, scope: _scopes.Scope,
             env: Optional[Dict[str, Labels]] = None) -> Labels:
    """The labels of a called expression: a parameter called here takes
    the functions the project's calls of its function pass it."""
    saved, self._calling = self._calling, True
    try:
      return self.labels(func, scope, env)
    finally:
      self._calling = saved

  def sink_labels(self, node: Optional[ast.AST], scope: _scopes.Scope,
                  wanted: str) -> Labels:
    """The labels of what a sink takes (an apply's gradients, a step's
    variables, a write's value); without `wanted` among them, a parameter
    of the sink's function read there (or through a local name) also
    takes what the project's calls pass it."""
    found = dict(self.labels(node, scope))
    if node is None or wanted in found or not isinstance(
        scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return found
    for name in _params_read(node, scope, self._params_memo):
      for kind, where in self._passed(name, scope).items():
        found.setdefault(kind, where)
    if wanted not in found:
      for kind, where in self._with_objects(node, scope).items():
        found.setdefault(kind, where)
    if wanted == "filtered" and wanted not in found:
      for kind, where in self._kept(found.get("param"), scope).items():
        found.setdefault(kind, where)
    return found

  def _kept(self, read: Optional[ast.AST], scope: _scopes.Scope) -> Labels:
    """What the project's constructions pass a constructor's parameter
    that the object keeps (`self.var_list = var_list` in `__init__`) and
    another method reads (`minimize(loss, var_list=self.var_list)`)."""
    home = self.origin.get(id(read)) if isinstance(read, ast.Name) else None
    if home is None or home is scope or home.cls is None or not isinstance(
        read, ast.Name) or getattr(home.node, "name", "") != "__init__" or (
            read.id not in home.params):
      return {}
    return self._passed(read.id, home)

  def _with_objects(self, node: ast.AST, scope: _scopes.Scope) -> Labels:
    """The labels of `node` with the function's parameters bound to the
    project objects its callers pass (`Trainer(config, model)`, then
    `model.get_var_list()` read here or in `self.var_list`)."""
    objects = {}
    for name in scope.params:
      if name not in {"self", "cls"}:
        passed = self._passed(name, scope)
        if "obj" in passed:
          objects[name] = {"obj": passed["obj"], "param": scope.node}
    if not objects:
      return {}
    with self._binding(scope, objects, ("objects", id(scope.node))):
      return self.labels(node, scope)

  @contextlib.contextmanager
  def _binding(self, scope: _scopes.Scope, bound: Dict[str, Labels],
               token: object) -> Iterator[None]:
    """Reads in `scope` see `bound` for its parameters (what a call
    passes), cached under `token`, until the block ends."""
    saved = self._bound.get(id(scope)), self._token
    self._bound[id(scope)] = bound
    self._token = token
    try:
      yield
    finally:
      self._token = saved[1]
      if saved[0] is None:
        del self._bound[id(scope)]
      else:
        self._bound[id(scope)] = saved[0]

  def callee(self, call: ast.Call, scope: _scopes.Scope
             ) -> Optional[ast.AST]:
    """The function of the project `call` calls, if it calls one."""
    if id(call) not in self._callees:
      if isinstance(call.func, ast.Attribute):
        found = _calls.method(self, call.func, scope, {})
      else:
        found = self.called(call.func, scope)
      self._callees[id(call)] = found.get("fn")
    return self._callees[id(call)]

  def _self_attribute(self, name: str, node: ast.AST,
                      scope: _scopes.Scope) -> Labels:
    method: Optional[_scopes.Scope] = scope
    while method is not None and method.cls is None:
      method = method.parent
    found: Labels = {}
    if _names.is_mask_name(name):
      found["mask"] = node
    if method is None or method.cls is None:
      return found
    info = method.cls
    self.classes[id(info.node)] = info
    attribute = name.split(".", 2)[1]
    values = self.project.attribute(info, f"self.{attribute}")
    kept = _superseded.reaching(values, f"self.{attribute}", node, scope)
    found.update(self._values(kept, ("self", id(info.node), attribute) if (
        len(kept) == len(values)) else ("self", id(info.node), attribute,
                                        tuple(id(v) for v, _ in kept))))
    if attribute in _names.LAYER_VARIABLES and info.bases and not any(
        "var" in self.labels(v, home) for v, home in values):
      # A Keras layer's own `self.embeddings`, `self.kernel`: built by its
      # base class (outside the project), a variable all the same.
      found["var"] = node
    if not values:
      target = self.project.method(info, attribute)
      if target is not None and isinstance(target.node, (
          ast.FunctionDef, ast.AsyncFunctionDef)):
        self.functions[id(target.node)] = (target.node, target.parent or
                                           target)
        found["fn"] = target.node
    return found

  def _settled(self, key: object, found: Labels, start: int) -> bool:
    """Whether a read's round is its last: no cycle came back to it, or
    it gave what the cycle was told; else the cycle's reads are forgotten
    and read again with what this round gave."""
    if key not in self._closing or set(found) == set(
        self._provisional.get(key, {})):
      return True
    self._closing.discard(key)
    self._provisional[key] = found
    self._forget(start)
    self._again = True
    return False

  def _values(self, values: List[Tuple[ast.expr, _scopes.Scope]],
              key: object) -> Labels:
    """What an attribute's assignments give; one assigned from itself
    (`self.gv[i] = (g * m, v)` in a loop over `self.gv`) reads what its
    other assignments gave, as a name's cycle does."""
    if key in self._active:
      # A filter of itself (`self.grads = [... in self.grads if ...]`)
      # reads what its other assignments gave so far; another cycle what
      # the last round gave.
      self._tainted = True
      if key in self._attribute_so_far:
        return dict(self._attribute_so_far[key])
      self._closing.add(key)
      return self._provisional.get(key, {})
    self._active.add(key)
    start, again = len(self._journal), self._again
    found: Labels = {}
    try:
      for _ in range(_ROUNDS):
        found = {}
        for value, home in values:
          if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            self._attribute_so_far[key] = found  # A filter of itself.
          else:
            self._attribute_so_far.pop(key, None)
          got = self.chosen(value, home, self.labels(value, home))
          for kind, where in got.items():
            found.setdefault(kind, where)
        self._attribute_so_far.pop(key, None)
        if again or self._settled(key, found, start):
          break
    finally:
      self._again = again
      self._active.discard(key)
      self._attribute_so_far.pop(key, None)
      self._closing.discard(key)
      self._provisional.pop(key, None)
    return found

  def _attribute(self, node: ast.Attribute, scope: _scopes.Scope,
                 env: Dict[str, Labels]) -> Labels:
    name = _names.dotted(node)
    if node.attr in _names.VARIABLE_ATTRIBUTES:
      if isinstance(node.value, ast.Call) and _names.call_name(
          node.value) == "get_layer":
        return {"var": node, "filtered": node}  # One layer, by name.
      if _names.chosen_layers(node.value):
        # `model.layers[-1].trainable_variables`: layers by position.
        return {"var": node, "filtered": node}
      if node.attr in _WEIGHT_LISTS and self._run_part(node.value, scope, env):
        return {"var": node, "filtered": node}  # `model.head`'s, run whole.
      held = _property_reads.returned(self, node, scope, env)
      return {"var": node} if held is None else held
    if name is not None and name.startswith("self.") and (
        name.count(".") == 1 or "self" not in env):
      if name.count(".") == 1:
        return self.name(name, node, scope, env)
    owner = self.labels(node.value, scope, env)
    if "obj" in owner:
      info = self.classes.get(id(owner["obj"]))
      if info is not None:
        values = self.project.attribute(info, f"self.{node.attr}")
        if values:
          return self._values(values, ("obj", id(info.node), node.attr))
    target = self.project.resolve(scope, name) if name else None
    if target is not None:
      return self.of_target(target)
    found = dict(owner)
    if node.attr in {"values", "indices", "dense_shape", "T"}:
      return found
    field = _records.field(self, node, scope) if owner else None
    if field is not None and "var" in field:
      return field  # `out.train_vars`: `Namespace(train_vars=...)`'s.
    # An attribute of a value (`x.shape`, `layer.output`) is not the value.
    found = {k: v for k, v in found.items() if k in {"param", "train",
                                                       "write"}}
    if _names.is_mask_name(node.attr):
      found["mask"] = node
    return found

  @functools.cached_property
  def typed(self) -> _typed.Typed:
    """The project class of an object the flow does not follow."""
    return _typed.Typed(self.project)

  def _run_part(self, node: ast.AST, scope: _scopes.Scope,
                env: Dict[str, Labels]) -> bool:
    """Whether `node` is one part of a model the function runs whole
    (`_model_parts`), or an entry of a dict that is one
    (`model.heads['human']`)."""
    if isinstance(node, ast.Subscript):
      node = node.value
      if not isinstance(node, ast.Attribute):
        return False
    if not isinstance(node, (ast.Name, ast.Attribute)):
      return False
    owner = self.labels(node.value, scope, env) if isinstance(
        node, ast.Attribute) else {}
    info = self.classes.get(id(owner["obj"])) if "obj" in owner else None
    if info is None and isinstance(node, ast.Attribute):
      info = self.typed.class_of(node.value, scope)
    return _model_parts.part_of_run_model(node, info, scope)

  def ops(self, node: Optional[ast.AST], scope: _scopes.Scope) -> Labels:
    """The labels of what a `run`, a `group` or `control_dependencies`
    takes: an op fetched by its attribute from an object the flow cannot
    follow (`model.train_op`) is what the project assigns to that name."""
    found = dict(self.labels(node, scope))
    items = getattr(node, "elts", None) or getattr(node, "values", None) \
        or [node]
    for item in items:
      if isinstance(item, ast.Attribute):
        for kind, where in self._spelled(item.attr, scope).items():
          found.setdefault(kind, where)
    return found

  def _spelled(self, attribute: str, scope: _scopes.Scope) -> Labels:
    """A train op or a write op fetched by its attribute name from an
    object the flow cannot follow (`model.train_op`): what the project
    assigns to that spelling, if it is one of those (the assignments
    nearest the fetch first: in its file, then its folder's)."""
    here = os.path.abspath(self.project.module_of(scope).path)
    key = ("spelled", attribute, here)
    if key in self._active:
      self._tainted = True
      return {}
    if attribute not in self.project.names_assigned_from(
        _names.TRAIN_STEPS | _names.WRITES):
      return self._returned_by_property(attribute)
    self._active.add(key)
    found: Labels = {}
    try:
      for value, home in self._nearest_assigned(attribute, scope, here):
        if isinstance(value, ast.Call) and _names.call_name(value) in (
            _names.TRAIN_STEPS | _names.WRITES):
          for kind, where in self.labels(value, home).items():
            if kind in {"train", "write"}:
              found.setdefault(kind, where)
    finally:
      self._active.discard(key)
    return found

  def _returned_by_property(self, attribute: str) -> Labels:
    """A train op or a write op that a property of that name returns
    (`@LazyProperty def train_op(self): ... return
    optimizer.apply_gradients(...)`), fetched like an assigned one."""
    if attribute in self._properties:
      return self._properties[attribute]
    found: Labels = self._properties.setdefault(attribute, {})
    for method in self.project.functions_named((attribute,)):
      node = method.node
      if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
          not any("property" in (_names.dotted(d) or "").lower()
                  for d in node.decorator_list)):
        continue
      for each in method.nodes:
        if isinstance(each, ast.Return) and isinstance(
            each.value, ast.Call) and _names.call_name(each.value) in (
                _names.TRAIN_STEPS | _names.WRITES):
          for kind, where in self.labels(each.value, method).items():
            if kind in {"train", "write"}:
              found.setdefault(kind, where)
    return found

  def _nearest_assigned(self, attribute: str, scope: _scopes.Scope,
                        here: str) -> List[Tuple[ast.expr, _scopes.Scope]]:
    """The project's eight assignments to `attribute` nearest the file
    `here` (ordered once per file: many fetches ask)."""
    key = (attribute, here)
    if key in self._nearest:
      return self._nearest[key]
    module = self.project.module_of(scope)
    imported = {part for where, name in module.imports.values()
                for part in (where.rsplit(".", 1)[-1], name)}

    paths = self._nearness.setdefault(here, {})

    def nearest(pair: Tuple[ast.expr, _scopes.Scope]) -> Tuple[int, ...]:
      # Its file, then the modules it imports, then its folder's (a
      # notebook, which nothing imports, last).
      other = self.project.module_of(pair[1])
      rank = paths.get(id(other))
      if rank is None:
        path, stem = self._place(other)
        rank = paths[id(other)] = (
            other is not module, stem not in imported,
            path.endswith(".ipynb"), -self._shared(here, path))
      return rank
    assigned = heapq.nsmallest(8, self.project.assigned(attribute),
                               key=nearest)
    self._nearest[key] = assigned
    return assigned

  def _place(self, module: _project.Module) -> Tuple[str, str]:
    """A module's absolute path and its name's stem (once per module)."""
    place = self._places.get(id(module))
    if place is None:
      path = os.path.abspath(module.path)
      place = self._places[id(module)] = (
          path, os.path.splitext(os.path.basename(path))[0])
    return place

  def _shared(self, here: str, path: str) -> int:
    """`len(os.path.commonpath([here, path]))`, worked out once per pair
    of folders when the files' own names cannot change it (a project of
    hundreds of notebooks asks it for every pair of them)."""
    if here == path:
      return len(here)
    folder, where = os.path.dirname(here), os.path.dirname(path)
    if folder == where:
      return len(folder)
    common = self._folders.get((folder, where))
    if common is None:
      common = self._folders[folder, where] = os.path.commonpath(
          [folder, where])
    if common != folder and common != where:  # The folders part first.
      return len(common)
    return len(os.path.commonpath([here, path]))

  def _comprehension(self, node: ast.AST, element: ast.AST,
                     scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
    inner = dict(env)
    filtered = member = over_variables = False
    for generator in getattr(node, "generators", []):
      found = _var_params.widened(generator.iter, scope, self.labels(
          generator.iter, scope, inner))
      target, source = generator.target, generator.iter
      if isinstance(target, ast.Tuple) and isinstance(source, ast.Call) and (
          _names.call_name(source) == "zip") and len(source.args) == len(
              target.elts):  # `for m, (g, v) in zip(masks, pairs)`.
        for each, part in zip(target.elts, source.args):
          _bind_names(each, self.labels(part, scope, inner), inner)
      elif isinstance(target, ast.Tuple) and isinstance(source, ast.Call) \
          and _names.call_name(source) == "enumerate" and source.args and (
              len(target.elts) == 2):
        _bind_names(target.elts[1], found, inner)
      elif isinstance(target, ast.Tuple) and "zip" in found:
        for index, each in enumerate(target.elts):
          _bind_names(each, self.element(
              found["zip"], (index, len(target.elts))) or found, inner)
      else:
        _bind_names(target, found, inner)
      # `[v for v in tvars for t in names if t in v.name]`: the test of
      # an inner loop over names still filters the outer loop's variables.
      over_variables = over_variables or "var" in found or _pairs(found) or (
          _names.model_layers(source))
      if generator.ifs and over_variables and any(
          _names.filters_by_name(test, self, scope, inner)
          for test in generator.ifs):
        filtered = True
      elif any(_member_test(test, target) and _names.in_chosen_list(
          test, self, scope, inner) for test in generator.ifs):
        # `[p for p in pairs if p[1] not in frozen]`, `frozen` chosen by
        # name: the elements are variables or their pairs.
        filtered = member = True
      if _names.chosen_layers(source) or _at_chosen_indices(
          element, target, source):
        filtered = True  # `for layer in model.layers[-3:]`.
    result = dict(self.labels(element, scope, inner))
    if filtered and "var" not in result and not _pairs(result) and not (
        member):
      filtered = False
    if filtered:
      result["filtered"] = node
    return result

  def helper(self, function: _scopes.FunctionNode, home: _scopes.Scope,
             arguments: List[Labels],
             keywords: Optional[Dict[str, Labels]] = None) -> Labels:
    """What a function returns, given its arguments' labels: its summary
    for this call."""
    keywords = keywords or {}
    key = (id(function), frozenset(
        [f"{i}:{k}" for i, a in enumerate(arguments) for k in a] +
        [f"{n}:{k}" for n, a in keywords.items() for k in a]))
    if key in self._helpers:
      if key in self._working:
        self._tainted = True
      return self._helpers[key]
    self._helpers[key] = {}  # A recursive function adds nothing.
    scope = home.scope_of(function)
    if scope is None:
      return {}
    body = ([function.body] if isinstance(function, ast.Lambda) else
            [n.value for n in scope.nodes if isinstance(n, ast.Return)])
    bound = dict(zip(scope.params, arguments))
    bound.update({k: v for k, v in keywords.items() if k in scope.params})
    self._working.add(key)
    with self._binding(scope, bound, key):
      result = union(self.labels(value, scope) for value in body)
    self._working.discard(key)
    self._helpers[key] = result
    return result


def _params_read(node: ast.AST, scope: _scopes.Scope,
                 memo: Dict[Tuple[int, str], FrozenSet[str]]) -> List[str]:
  """The parameters of `scope` that `node` reads, directly or through the
  local names it reads (each name's closure found once per scope)."""
  found: List[str] = []
  for each in ast.walk(node):
    if isinstance(each, ast.Name):
      for name in _params_of(each.id, scope, memo):
        if name not in found:
          found.append(name)
  return found


def _params_of(name: str, scope: _scopes.Scope,
               memo: Dict[Tuple[int, str], FrozenSet[str]]
               ) -> FrozenSet[str]:
  """The parameters a local name of `scope` is computed from."""
  if name in scope.params:
    return frozenset([name])
  key = (id(scope), name)
  if key in memo:
    return memo[key]
  memo[key] = frozenset()  # A name computed from itself adds nothing.
  found: Set[str] = set()
  for each in scope.defs.get(name, []):
    for item in ast.walk(each.value):
      if isinstance(item, ast.Name) and item.id != name:
        found |= _params_of(item.id, scope, memo)
  memo[key] = frozenset(found)
  return memo[key]


def _bind_names(target: ast.AST, found: Labels,
                env: Dict[str, Labels]) -> None:
  if isinstance(target, ast.Name):
    env[target.id] = found
  elif isinstance(target, (ast.Tuple, ast.List)):
    for element in target.elts:
      _bind_names(element, found, env)


def _at_chosen_indices(element: ast.AST, target: ast.AST,
                       source: ast.AST) -> bool:
  """`[model.trainable_variables[j] for j in head_indices]`: the items of
  a model's list of variables at indices held in another (some of them,
  by position); not `for i in range(len(vs))` nor `enumerate`, which go
  over every one, nor a dict read at each of its keys."""
  if not isinstance(element, ast.Subscript):
    return False
  listed = element.value
  spelled = listed.attr if isinstance(listed, ast.Attribute) else (
      _names.call_name(listed) if isinstance(listed, ast.Call) else "")
  return spelled in _VARIABLE_LISTS and isinstance(
      element.slice, ast.Name) and isinstance(target, ast.Name) and (
          element.slice.id == target.id) and isinstance(
              source, (ast.Name, ast.Attribute, ast.Subscript))


# A model's or the graph's list of variables, indexed by position.
_VARIABLE_LISTS = {"trainable_variables", "trainable_weights", "variables",
                   "weights", "global_variables", "get_weights"}


def _member_test(test: ast.AST, target: ast.AST) -> bool:
  """Whether a comprehension's test asks if its element (or a part of
  it: `p[1]`, `v.ref()`) is in a list (`p[1] not in frozen`)."""
  if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], (ast.In, ast.NotIn)))):
    return False
  left = test.left
  while isinstance(left, (ast.Subscript, ast.Attribute, ast.Call)):
    left = left.func if isinstance(left, ast.Call) else left.value
  bound = {n.id for n in _scopes.walk(target) if isinstance(n, ast.Name)}
  return isinstance(left, ast.Name) and left.id in bound


def _paired_gradient(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` is a name bound to the gradient of a pair (`g, v =
  grads_and_vars[0]`, maybe rebound to what is made of it): a tensor,
  whose slice (`g[10:]`) is rows of it, not some of the pairs."""
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  return any(d.part == (0, 2) for d in defs) and all(
      d.part in {None, (0, 2)} for d in defs)


def _pairs(labels: Labels) -> bool:
  """Whether the labels are `compute_gradients`' (gradient, variable)
  pairs, or the pairs an optimizer wrapper's `apply_gradients` is given
  (its gradient parameter: the function is where the label arose)."""
  made = labels.get("grad")
  return _calls.pairs(labels) or isinstance(
      made, ast.FunctionDef) and made.name == "apply_gradients"


def has_var(labels: Labels) -> bool:
  """Whether the labels say "a variable, or arithmetic on one"."""
  return "var" in labels or "vararith" in labels


def _drawn_once(node: ast.Compare, scope: _scopes.Scope) -> bool:
  """`mask = np.random.rand(n, k) < 0.1` run once at a module's top
  level, in no loop: NumPy draws it when the module runs, and it then
  stays the same for every step (a TF op drawn there is drawn anew at
  each `Session.run`, and one in a function at each call)."""
  if scope.parent is not None or not any(
      isinstance(n, ast.Call) and (_names.dotted(n.func) or "").startswith(
          ("np.random.", "numpy.random.")) for n in ast.walk(node)):
    return False
  return any(not d.where.loops and d.value is not None and any(
      n is node for n in ast.walk(d.value))
             for defs in scope.defs.values() for d in defs)


def _by_index(elements: List[ast.expr]) -> Optional[ast.expr]:
  """The one collection every element of a list literal is taken from by
  a distinct whole-number index (`[vs[0], vs[1], vs[3]]`), or None.

  >>> _by_index(ast.parse("[m.vs[0], m.vs[2]]").body[0].value.elts).attr
  'vs'
  >>> _by_index(ast.parse("[m.vs[0], n.vs[2]]").body[0].value.elts)
  """
  if not elements or not all(
      isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant)
      and type(e.slice.value) is int for e in elements):
    return None
  bases = {ast.dump(e.value) for e in elements if isinstance(
      e, ast.Subscript)}
  indices = [e.slice.value for e in elements if isinstance(
      e, ast.Subscript) and isinstance(e.slice, ast.Constant)]
  if len(bases) != 1 or len(set(indices)) != len(indices):
    return None
  first = elements[0]
  return first.value if isinstance(first, ast.Subscript) else None
