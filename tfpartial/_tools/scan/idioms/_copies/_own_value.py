"""Whether a write sets a variable to its own value read out now and
changed only by settings: a temperature or a rate annealed in a callback
(`t = K.get_value(self.temp)`, `t = max(t - .01, self.min_temp)`,
`K.set_value(self.temp, K.constant(t))`), or read out inline in a sum
(`K.set_value(self.beta, K.get_value(self.beta) + self.kappa)`, a KL
warm-up). Nothing from before a step is kept: the value is read in
the same call that writes it, so it is a schedule (or a constraint),
not saved values put back. A read-out whose elements take another
array's (`t[:3] = saved[:3]`) is not one. Part of the writes
`write-back` reads."""

from __future__ import annotations

import ast
import bisect
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom

# The calls that read a variable's value out now.
_READS = {"get_value", "numpy", "read_value", "get_weights", "eval"}
# The calls that train.
_STEPS = _names.TRAIN_STEPS | {"fit", "train_on_batch", "fit_generator",
                              "train_step", "step", "run", "gradient"}
# The calls that only change a value's type or take a bound.
_CASTS = {"constant", "float", "int", "float32", "asarray", "array",
          "convert_to_tensor", "cast", "max", "min", "abs", "round"}


def of_itself(scope: _scopes.Scope, call: ast.AST, target: ast.AST,
              value: ast.AST) -> bool:
  """Whether `value`, written into `target` by `call`, is made only of
  `target`'s value read out in this function with no step between the
  read and the write, numbers and `self`'s settings.

  >>> import ast
  >>> f = ast.parse('''
  ... from keras import backend as K
  ... def on_batch_end(self, batch, logs=None):
  ...   t = K.get_value(self.temp)
  ...   t = max(t - .01, self.low)
  ...   K.set_value(self.temp, K.constant(t))''')
  >>> scope = list(_scopes.collect(f).all())[1]
  >>> write = f.body[1].body[-1].value
  >>> of_itself(scope, write, ast.parse("self.temp").body[0].value,
  ...           ast.parse("K.constant(t)").body[0].value)
  True
  """
  mine = ast.unparse(target)
  seen: List[str] = []
  pending: List[ast.AST] = [value]
  read_out = False
  while pending:
    node = pending.pop()
    if _terms(node, mine):
      pending += _terms(node, mine)
      continue
    verdict = _part(node, mine)
    if verdict is None or verdict == "read" and _trains_between(
        scope, node, call):
      return False
    read_out = read_out or verdict == "read"
    for name in _locals(node, verdict):
      if name in seen:
        continue
      seen.append(name)
      if _stored_into(scope, name):
        return False  # Elements of it replaced: maybe saved values.
      defs = scope.defs.get(name, [])
      if not defs and name in _scopes.imported_names(scope):
        continue  # `K` of `K.constant`.
      if not defs or len(seen) > 12:
        return False  # A parameter, a loop's value: not a setting.
      pending += [d.value for d in defs]
  return read_out


def _terms(node: ast.AST, mine: str) -> List[ast.AST]:
  """The terms of a sum or a bound (`min`, `K.constant`) that reads the
  variable out inline (`K.get_value(self.beta) + self.kappa`), each then
  judged alone; none for anything else (a product of the read-out with
  a mask stays one part, so a blend with a saved copy is no setting).

  >>> [ast.unparse(t) for t in _terms(ast.parse(
  ...     "min(K.get_value(b) + k, 1.0)").body[0].value, "b")]
  ['K.get_value(b) + k', '1.0']
  >>> _terms(ast.parse("K.get_value(b) * m").body[0].value, "b")
  []
  """
  if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
    terms: List[ast.AST] = [node.left, node.right]
  elif isinstance(node, ast.Call) and not node.keywords and (
      _names.call_name(node) in _CASTS):
    terms = list(node.args)
  else:
    return []
  return terms if any(_part(n, mine) == "read" or _terms(n, mine)
                      for n in terms) else []


def _trains_between(scope: _scopes.Scope, read: ast.AST, write: ast.AST
                    ) -> bool:
  """Whether a step or a fit runs between the read and the write (none
  for a read inside the write's own arguments)."""
  if any(n is read for n in ast.walk(write)):
    return False
  start, end = _idiom.position(read), _idiom.position(write)
  if not start < end:
    return True
  steps = _steps_at(scope)
  at = bisect.bisect_right(steps, start)
  return at < len(steps) and steps[at] < end


def _steps_at(scope: _scopes.Scope) -> List[Tuple[int, int]]:
  """Where the function calls a step or a fit, in order; found once per
  function (each read asks)."""
  key = (_steps_at, 0, 0)
  found = scope.judged.get(key)
  if not isinstance(found, list):
    found = scope.judged[key] = sorted(
        _idiom.position(n) for n in scope.nodes
        if isinstance(n, ast.Call) and _names.call_name(n) in _STEPS)
  return found


def _part(node: ast.AST, mine: str) -> Optional[str]:
  """"read" for a read-out of the variable, "ok" for settings and
  arithmetic, None for anything else."""
  if isinstance(node, ast.Call):
    name = _names.call_name(node)
    if name in _READS and any(ast.unparse(a) == mine for a in [
        *node.args, getattr(node.func, "value", node)]):
      return "read"
    if name not in _CASTS or node.keywords:
      return None
  for sub in ast.walk(node):
    if isinstance(sub, ast.Subscript) or isinstance(sub, ast.Call) and (
        sub is not node and _names.call_name(sub) not in _CASTS):
      return None
  return "ok"


def _locals(node: ast.AST, verdict: str) -> List[str]:
  """The local names `node` reads (none past a read-out)."""
  if verdict == "read":
    return []
  called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
  return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and (
      isinstance(n.ctx, ast.Load)) and n.id != "self" and id(n) not in called]


def _stored_into(scope: _scopes.Scope, name: str) -> bool:
  """Whether the function stores into elements of `name` (`w[0][r] = s`);
  the names so stored into found once per function (each written name
  asks)."""
  key = (_stored_into, 0, 0)
  found = scope.judged.get(key)
  if not isinstance(found, set):
    found = scope.judged[key] = {
        _names.base_name(t) for n in scope.nodes
        if isinstance(n, (ast.Assign, ast.AugAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Subscript)}
  return name in found
