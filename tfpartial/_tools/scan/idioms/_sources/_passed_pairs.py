"""The (loss, list) pairs a helper of the project passes on to its steps
(`def train(G_loss, D_loss, G_vars, D_vars): ... compute_gradients(G_loss,
var_list=G_vars) ... compute_gradients(D_loss, var_list=D_vars)`), each a
step where the helper is called, so a GAN's two halves stepped by one
helper are both seen (part forty-one's RegCGAN).

Every pair is kept only where each of the helper's steps is in a
statement of the helper's own body (no `if`, loop or `try` around it, no
`x if c else y`, `and`/`or`, comprehension or lambda in it, no `return`
in a statement before it: all of them run on every call) and the caller
runs every op the helper returns (`g_op, d_op = train(...)`, each name
run, grouped or returned where the call is); else the last pair alone
stands for the helper, as it always did.

>>> import ast
>>> helper = ast.parse("def f(a, b, x, y):\\n  m(a, x)\\n  m(b, y)\\n").body[0]
>>> first, second = [s.value for s in helper.body]
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

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

Pair = Tuple[int, int]  # (loss, var_list) parameter positions.
# Each pair, and whether its step is a plain statement of the helper.
Pairs = List[Tuple[Pair, bool]]

_PLAIN = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
# What may run a step of a plain statement never, or more than once.
_CHOOSING = (ast.Lambda, ast.comprehension, ast.IfExp, ast.BoolOp)


# A helper -> the plain-or-not answer of each node of its body's
# top-level statements, made once per helper.
Known = Dict[int, Dict[int, bool]]
# A caller's scope -> (its assignments unpacking a call: id(call) ->
# the names, the names it runs, groups or returns).
Runs = Dict[int, Tuple[Dict[int, List[str]], Set[str]]]


def add(pairs: Pairs, pair: Pair, call: ast.Call, helper: ast.AST,
        known: Known) -> Pairs:
  """`pairs` with the helper's step `call`, passing on `pair`, appended
  (in place: no copy per step)."""
  if id(helper) not in known:
    known[id(helper)] = _plain_nodes(helper)
  pairs.append((pair, known[id(helper)].get(id(call), False)))
  return pairs


def passed(pairs: Pairs) -> List[Pair]:
  """The pairs each a step at the helper's calls: all of them where all
  run on every call, else the last."""
  if len(pairs) > 1 and all(plain for _, plain in pairs):
    return [pair for pair, _ in pairs]
  return [pairs[-1][0]] if pairs else []


def all_run(call: ast.Call, scope: _scopes.Scope, count: int,
            runs: Runs) -> bool:
  """Whether the caller unpacks `call` into names (at least `count`) and
  runs, groups or returns each of them in `scope`."""
  if id(scope) not in runs:
    runs[id(scope)] = _unpacked_and_run(scope.nodes)
  unpacked, run = runs[id(scope)]
  names = unpacked.get(id(call), [])
  return len(names) >= count and all(name in run for name in names)


def _unpacked_and_run(nodes: Iterable[ast.AST]
                      ) -> Tuple[Dict[int, List[str]], Set[str]]:
  """The calls unpacked into names (`a, b = f()`) among `nodes`, and the
  names read in a call of `run` or `group` or in a `return`."""
  unpacked: Dict[int, List[str]] = {}
  run: Set[str] = set()
  for node in nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], (ast.Tuple, ast.List))) and all(
            isinstance(e, ast.Name) for e in node.targets[0].elts):
      unpacked[id(node.value)] = [
          getattr(e, "id") for e in node.targets[0].elts]
    taking: List[ast.AST] = []
    if isinstance(node, ast.Call) and _names.call_name(node) in _RUNS:
      taking = [*node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, ast.Return) and node.value is not None:
      taking = [node.value]
    run.update(n.id for t in taking for n in ast.walk(t)
               if isinstance(n, ast.Name))
  return unpacked, run


_RUNS = {"run", "group"}


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
