"""The (loss, list) pairs a helper of the project passes on to its steps
(`def train(G_loss, D_loss, G_vars, D_vars): ... compute_gradients(G_loss,
var_list=G_vars) ... compute_gradients(D_loss, var_list=D_vars)`), each a
step where the helper is called, so a GAN's two halves stepped by one
helper are both seen (part forty-one's RegCGAN).

Every pair is kept only where each of the helper's steps is in a
statement of the helper's own body (no `if`, loop or `try` around it, no
`x if c else y`, `and`/`or`, comprehension or lambda in it, no `return`
in a statement before it: all of them run on every call), the helper
ends in its one `return`, a tuple whose n-th element runs its n-th step
(the step's call, or a name bound once at the top level to that call or
to a call given it or a name bound once to it), and the caller unpacks
the call into as many names, each bound once there and read only as a
fetch of a session's `run` in that function (`sess.run(d_op)`,
`sess.run([g_op, d_op])`, `fetches=`: not grouped, returned or given
otherwise); else the last pair alone stands for the helper, as it
always did.

>>> import ast
>>> text = "def f(a, b, x, y):\\n  return m(a, x), m(b, y)\\n"
>>> helper = ast.parse(text).body[0]
>>> first, second = helper.body[0].value.elts
>>> known: Known = {}
>>> kept = add([], (0, 2), first, helper, known)
>>> passed(add(kept, (1, 3), second, helper, known))
[(0, 2), (1, 3)]
>>> chosen = ast.parse("def f(a, x):\\n  if a:\\n    m(a, x)\\n").body[0]
>>> passed(add(kept, (0, 1), chosen.body[0].body[0], chosen, known))
[(0, 1)]
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Set, Tuple

from tfpartial._tools.scan import _scopes

Pair = Tuple[int, int]  # (loss, var_list) parameter positions.
# Each pair, and whether its step is a plain statement of the helper.
Pairs = List[Tuple[Pair, bool]]

_PLAIN = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
# What may run a step of a plain statement never, or more than once.
_CHOOSING = (ast.Lambda, ast.comprehension, ast.IfExp, ast.BoolOp)


# A helper -> the plain-or-not answer of each node of its body's
# top-level statements, and the calls each element of its one `return`
# runs, made once per helper.
Known = Dict[int, Tuple[Dict[int, bool], List[Set[int]]]]
# A caller's scope -> (its assignments unpacking a call: id(call) ->
# the names, the names it runs, groups or returns).
Runs = Dict[int, Tuple[Dict[int, List[str]], Set[str]]]


def add(pairs: Pairs, pair: Pair, call: ast.Call, helper: ast.AST,
        known: Known) -> Pairs:
  """`pairs` with the helper's step `call`, passing on `pair`, appended
  (in place: no copy per step)."""
  if id(helper) not in known:
    known[id(helper)] = (_plain_nodes(helper), _returned(helper))
  plain, returned = known[id(helper)]
  index = len(pairs)  # This step's element of the helper's return.
  pairs.append((pair, plain.get(id(call), False) and (
      index < len(returned) and id(call) in returned[index])))
  return pairs


def passed(pairs: Pairs) -> List[Pair]:
  """The pairs each a step at the helper's calls: all of them where all
  run on every call, else the last."""
  if len(pairs) > 1 and all(plain for _, plain in pairs):
    return [pair for pair, _ in pairs]
  return [pairs[-1][0]] if pairs else []


def all_run(call: ast.Call, scope: _scopes.Scope, count: int,
            runs: Runs) -> bool:
  """Whether the caller unpacks `call` into `count` names, each bound
  there once and read only as a fetch of a session's `run` in `scope`."""
  if id(scope) not in runs:
    runs[id(scope)] = _unpacked_and_run(scope.nodes)
  unpacked, run = runs[id(scope)]
  names = unpacked.get(id(call), [])
  return len(names) == count and all(name in run for name in names)


def _unpacked_and_run(nodes: Iterable[ast.AST]
                      ) -> Tuple[Dict[int, List[str]], Set[str]]:
  """The calls unpacked into names (`a, b = f()`) among `nodes`, and the
  names bound once and read only as fetches (`sess.run(a)`,
  `sess.run([a, b])`, `fetches=`)."""
  unpacked: Dict[int, List[str]] = {}
  stores: Dict[str, int] = {}
  loads: Dict[str, int] = {}
  fetched: Dict[str, int] = {}
  for node in nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], (ast.Tuple, ast.List))) and all(
            isinstance(e, ast.Name) for e in node.targets[0].elts):
      unpacked[id(node.value)] = [
          getattr(e, "id") for e in node.targets[0].elts]
    if isinstance(node, ast.Name):
      counts = loads if isinstance(node.ctx, ast.Load) else stores
      counts[node.id] = counts.get(node.id, 0) + 1
    for name in _fetches(node):
      fetched[name] = fetched.get(name, 0) + 1
  run = {name for name, n in fetched.items()
         if stores.get(name) == 1 and loads.get(name) == n}
  return unpacked, run


def _fetches(node: ast.AST) -> List[str]:
  """The names `node` fetches directly, where it is a call of `run`."""
  if not (isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "run"):
    return []
  taken = [k.value for k in node.keywords if k.arg == "fetches"]
  fetch = node.args[0] if node.args else (taken[0] if taken else None)
  elements = fetch.elts if isinstance(fetch, (ast.Tuple, ast.List)) else [
      fetch]
  return [e.id for e in elements if isinstance(e, ast.Name)]


def _plain_nodes(helper: ast.AST) -> Dict[int, bool]:
  """Each node of the helper's top-level statements -> whether its
  statement is plain and no statement before it may return."""
  found: Dict[int, bool] = {}
  returned = False
  for statement in getattr(helper, "body", ()):
    nodes = list(ast.walk(statement))
    plain = not returned and isinstance(statement, _PLAIN) and not any(
        isinstance(n, _CHOOSING) for n in nodes)
    found.update((id(n), plain) for n in nodes)
    returned = returned or _may_return(statement)
  return found


def _returned(helper: ast.AST) -> List[Set[int]]:
  """Each element of the tuple the helper returns -> the calls it runs:
  the element itself, or the value of a name bound once at the top
  level, a call and the calls or once-bound names given to it; [] where
  the helper has any other `return`."""
  body = getattr(helper, "body", [])
  if not body or not isinstance(body[-1], ast.Return) or any(
      _may_return(s) for s in body[:-1]) or not isinstance(
          body[-1].value, (ast.Tuple, ast.List)):
    return []
  bound: Dict[str, List[ast.AST]] = {}
  for node in ast.walk(helper):
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
      bound.setdefault(node.id, []).append(node)
  values = {s.targets[0].id: s.value for s in body
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], ast.Name) and
            len(bound.get(s.targets[0].id, [])) == 1}

  def runs(node: ast.AST) -> ast.AST:
    return values.get(node.id, node) if isinstance(node, ast.Name) else node

  found = []
  for element in body[-1].value.elts:
    value = runs(element)
    given = getattr(value, "args", []) if isinstance(value, ast.Call) else []
    found.append({id(value), *(id(runs(a)) for a in given)})
  return found


def _may_return(statement: ast.AST) -> bool:
  """Whether `statement` holds a `return` of its function's own."""
  pending = [statement]
  while pending:
    node = pending.pop()
    if isinstance(node, ast.Return):
      return True
    pending.extend(
        n for n in ast.iter_child_nodes(node) if not isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                ast.ClassDef)))
  return False
