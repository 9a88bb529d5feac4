"""The (loss, list) pairs a helper of the project passes on to its steps
(`def train(G_loss, D_loss, G_vars, D_vars): ... compute_gradients(G_loss,
var_list=G_vars) ... compute_gradients(D_loss, var_list=D_vars)`), each a
step where the helper is called, so a GAN's two halves stepped by one
helper are both seen (part forty-one's RegCGAN).

Every pair is kept only where each of the helper's steps is a statement
of the helper's own body (no `if`, loop or `try` around it, no `x if c
else y`, `and`/`or`, comprehension or lambda in it: all of them run on
every call) and each passes a list parameter of its own; else the
last pair alone stands for the helper, as it always did.

>>> import ast
>>> helper = ast.parse("def f(a, b, x, y):\\n  m(a, x)\\n  m(b, y)\\n").body[0]
>>> first, second = [s.value for s in helper.body]
>>> kept = add([], (0, 2), first, helper)
>>> passed(add(kept, (1, 3), second, helper))
[(0, 2), (1, 3)]
>>> chosen = ast.parse("def f(a, x):\\n  if a:\\n    m(a, x)\\n").body[0]
>>> passed(add(kept, (0, 1), chosen.body[0].body[0], chosen))
[(0, 1)]
"""

from __future__ import annotations

import ast
from typing import List, Tuple

Pair = Tuple[int, int]  # (loss, var_list) parameter positions.
# Each pair, and whether its step is a plain statement of the helper.
Pairs = List[Tuple[Pair, bool]]

_PLAIN = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
# What may run a step of a plain statement never, or more than once.
_CHOOSING = (ast.Lambda, ast.comprehension, ast.IfExp, ast.BoolOp)


def add(pairs: Pairs, pair: Pair, call: ast.Call, helper: ast.AST
        ) -> Pairs:
  """`pairs` with the helper's step `call`, passing on `pair`, added."""
  return [*pairs, (pair, _plain(call, helper))]


def passed(pairs: Pairs) -> List[Pair]:
  """The pairs each a step at the helper's calls: all of them where all
  run on every call with lists of their own, else the last."""
  lists = [pair[1] for pair, _ in pairs]
  if len(pairs) > 1 and all(plain for _, plain in pairs) and (
      len(set(lists)) == len(lists)):
    return [pair for pair, _ in pairs]
  return [pairs[-1][0]] if pairs else []


def _plain(call: ast.Call, helper: ast.AST) -> bool:
  """Whether `call` is in a plain statement of the helper's own body (one
  statement per call, found by its lines: no walk of the body)."""
  line = getattr(call, "lineno", -1)
  for statement in getattr(helper, "body", ()):
    end = getattr(statement, "end_lineno", None) or statement.lineno
    if statement.lineno <= line <= end:
      return isinstance(statement, _PLAIN) and not any(
          isinstance(n, _CHOOSING) for n in ast.walk(statement))
  return False
