"""A forward 0/1 mask evaluated out of the graph from the trained
weights: `mask = tf.constant(sess.run(tf.abs(w) > threshold))` after a
first stage of training, then `w * mask` in place of `w` while the model
fine-tunes; or a placeholder `w * mask_ph` fed, by its name or its graph
name (`feed["mask:0"]`), a thresholding `np.abs(sess.run(w)) > t` of
the session's values (sequential thresholding, then a refinement with
the last mask). The comparison runs once, in the session, so the mask is a
constant of the graph: the elements it zeroes get no gradient and keep
their value (a pruning mask fixed after a round, BUILDING.md's
"structural masks" ruling: it comes from training).

Not this: the same comparison in the graph (`w * tf.cast(tf.abs(w) > t,
w.dtype)`: magnitude pruning recomputed with each step), or evaluated in
a method that runs with each step (`call`, `train_step`: eager code
reads `.numpy()` anew each time), or a comparison of what is no weight
(a MADE's degrees, a causal triangle: constants)."""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterator, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# What evaluates a tensor once, in the session: its value is a constant.
_EVALUATE = {"run", "eval", "get_value", "batch_get_value"}
# Methods that run with each step: a value evaluated there is made anew.
_PER_STEP = re.compile(r"^(call|__call__|train_step|_?update\w*|step|"
                       r"on_(train_)?batch_\w+)$")


def once(mask: ast.expr, weight: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `mask` (itself or a local name it is assigned) is a
  comparison of the weight it multiplies, evaluated in the session,
  outside a method that runs with each step."""
  spelled = _names.dotted(weight)
  if spelled is None or _PER_STEP.match(scope.name):
    return False
  if isinstance(mask, ast.Name):
    values = [d.value for d in scope.defs.get(mask.id, [])[:4]
              if d.value is not None]
    return bool(values) and all(
        _evaluated(v, spelled, scope) for v in values)
  return _evaluated(mask, spelled, scope)


def _evaluated(value: ast.expr, weight: str, scope: _scopes.Scope
               ) -> bool:
  """`tf.constant(sess.run(tf.abs(w) > t))`, `K.get_value(w) > t`."""
  for item in ast.walk(value):
    if isinstance(item, ast.Call) and _names.call_name(item) in _EVALUATE:
      compared = _compared(value)
      return compared is not None and not _constants.is_constant(
          compared, scope) and any(
              _names.dotted(n) == weight for n in ast.walk(compared))
  return False


def _compared(value: ast.expr) -> Optional[ast.Compare]:
  """The first comparison of order (`>`, `<=`) in a value, if any."""
  for item in ast.walk(value):
    if isinstance(item, ast.Compare) and any(isinstance(o, (
        ast.Gt, ast.GtE, ast.Lt, ast.LtE)) for o in item.ops):
      return item
  return None


def fed(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether a placeholder `mask` is fed, by its Python name or its graph
  name (`"coefficient_mask:0"`), a thresholding of values evaluated in
  the session: a mask training chose, not a draw (dropout), a triangle
  (causal, MADE) or a batch's padding."""
  return _feeding(mask, scope, analysis, _thresholded)


def fed_otherwise(mask: ast.expr, scope: _scopes.Scope,
                  analysis: Analysis) -> bool:
  """Whether a placeholder `mask` is fed, as written where it is fed, a
  draw (DropConnect), a triangle or band (causal, MADE) or a comparison
  of what the session did not evaluate (the batch's padding)."""
  return _feeding(mask, scope, analysis, _otherwise)


def _otherwise(value: ast.expr, compared: Callable[[], Set[str]]) -> bool:
  del compared
  for item in ast.walk(value):
    if isinstance(item, ast.Call) and ("random" in (_names.dotted(
        item.func) or "") or _names.call_name(item) in _SHAPES):
      return True
  return isinstance(value, ast.Compare) and not _session_compare(value)


_SHAPES = {"tril", "triu", "band_part", "matrix_band_part", "eye"}


def _feeding(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis,
             judge: Callable[[ast.expr, Callable[[], Set[str]]], bool]
             ) -> bool:
  """Whether a placeholder `mask` is fed a value `judge` holds for."""
  if not isinstance(mask, ast.Name):
    return False
  defs = scope.defs.get(mask.id, [])
  if not defs:
    return False  # Made elsewhere: no placeholder of this function.
  keys: Set[str] = set()
  for d in defs[:2]:
    value = d.value
    if not (isinstance(value, ast.Call) and _names.call_name(value) == (
        "placeholder")):
      return False
    keys |= {f"{k.value.value}:0" for k in value.keywords
             if k.arg == "name" and isinstance(k.value, ast.Constant)
             and isinstance(k.value.value, str)}
  words = {mask.id, *(k[:-2] for k in keys)}
  # A module's keyed values, listed once a scan: many masks ask one module.
  listed = analysis.once("evaluated:keyed", dict)
  assert isinstance(listed, dict)
  # A module's names assigned a comparison in the session, once a scan.
  compared = analysis.once("evaluated:compared", dict)
  assert isinstance(compared, dict)
  # Notebooks that only read the mask may outnumber the script that feeds
  # it: look first where its graph name is spelled.
  modules = sorted(analysis.project.all_modules_with(words), key=lambda m: (
      not any(k in m.source.text for k in keys)))
  for module in modules[:12]:
    tree = module.tree
    if tree is None:
      continue
    if id(module) not in listed:
      listed[id(module)] = list(_keyed(tree))

    def names(tree: ast.AST = tree, key: int = id(module)) -> Set[str]:
      if key not in compared:
        compared[key] = {ast.unparse(t) for n in ast.walk(tree) if isinstance(
            n, ast.Assign) and _session_compare(n.value) for t in n.targets}
      found: Set[str] = compared[key]
      return found

    if any(judge(v, names) for v in _feeds(listed[id(module)], mask.id,
                                           keys)):
      return True
  return False


def _keyed(tree: ast.AST) -> Iterator[Tuple[Optional[ast.expr], ast.expr]]:
  """Every value written under a key in `tree`, with its key: `{k: v}`,
  `feed[k] = v`.

  >>> tree = ast.parse("f = {m: a, **b}\\nf['m:0'] = c\\n")
  >>> [(ast.unparse(k) if k else None, ast.unparse(v))
  ...  for k, v in _keyed(tree)]
  [("'m:0'", 'c'), ('m', 'a'), (None, 'b')]
  """
  for node in ast.walk(tree):
    if isinstance(node, ast.Dict):
      yield from zip(node.keys, node.values)
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
      target = node.targets[0]
      if isinstance(target, ast.Subscript):
        yield target.slice, node.value


def _feeds(keyed: Sequence[Tuple[Optional[ast.expr], ast.expr]], name: str,
           keys: Set[str]) -> Iterator[ast.expr]:
  """The values fed under `name` or a graph name in `keys`: `{m: v}`,
  `feed["m:0"] = v`."""
  for key, value in keyed:
    if isinstance(key, ast.Name) and key.id == name or isinstance(
        key, ast.Constant) and key.value in keys:
      yield value


def _thresholded(value: ast.expr, compared: Callable[[], Set[str]]
                 ) -> bool:
  """Whether a fed value is, or is kept under a name (`params["mask"]`)
  assigned somewhere in the module, a comparison of values evaluated in
  the session (`np.abs(sess.run(w)) > t`)."""
  if _session_compare(value):
    return True
  return ast.unparse(value) in compared()


def _session_compare(value: ast.expr) -> bool:
  return isinstance(value, ast.Compare) and any(
      isinstance(n, ast.Call) and _names.call_name(n) in _EVALUATE
      for n in ast.walk(value))
