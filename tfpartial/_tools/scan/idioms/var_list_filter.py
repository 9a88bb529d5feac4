"""`var-list-filter`: the variables a step trains filtered by name or
scope, leaving the others untrained on purpose (fine-tuning, slim's
`--trainable_scopes`). Whole variables only: exact as it is, a candidate
for a spec file.

What the code does decides, not how a scope is written: a module whose
steps train two or more filtered groups (a GAN's generator and
discriminator, an actor and a critic) trains everything between them;
a filtered group that is also written (a target network's sync) is not
left out; a filter naming a scope that the project opens around the
whole model (`with tf.variable_scope("ppo2_model")`) selects the model.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms import _writes

STEPS = {"minimize", "compute_gradients", "gradients", "gradient",
         "apply_gradients", "create_train_op"}
_VAR_LIST_KEYWORDS = {"var_list", "variables_to_train", "sources",
                      "xs", "variables"}
_SCOPES = {"variable_scope", "name_scope", "VariableScope"}


class VarListFilter(_idiom.Idiom):
  """A `var_list` filtered by name or scope that leaves variables out."""

  id = "var-list-filter"
  order = 5
  entry = _idiom.Entry(
      "`var_list` built by filtering variables by name or scope (whole "
      "variables only)", "var_list-filtering-slims-trainable_scopes",
      "keep the filter (it is exact); to keep part of a variable too, "
      "`spec.minimize(optimizer, loss, var_list=var_list)`, or write the "
      "filter as a spec file (`{\"scope/**\": {\"freeze\": \"...\"}}`)",
      level="note")
  by_hand = ("nothing to port: the filter is exact; add a spec only if part "
             "of a variable must stay too")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    hits: List[_idiom.Hit] = []
    for scope in analysis.scopes():
      for call in analysis.calls(scope):
        if _names.call_name(call) not in STEPS:
          continue
        chosen = var_list_of(call)
        found = analysis.flow.labels(chosen, scope) if chosen else {}
        node = found.get("filtered")
        if isinstance(node, ast.expr):
          hits.append(_idiom.Hit(node, scope, call, found))
    return _leaving_some_out(hits, analysis)

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    del context
    name = _names.call_name(hit.sink) if hit.sink is not None else "a step"
    message = (f"`var_list` filtered by name or scope for `{name}` (line "
               f"{_idiom.line(hit.sink)}): whole variables only; exact as "
               "it is, not a drift; a candidate for a spec file")
    reasons = []
    for keyword in getattr(hit.sink, "keywords", []):
      if keyword.arg == "decay_var_list":
        reasons.append("`decay_var_list` decays variables the filter "
                       "leaves out")
    return message, reasons or [
        "none: the variables left out get no update and no optimizer slots"]


def var_list_of(call: ast.Call) -> Optional[ast.AST]:
  """The variables a step trains, as the call names them."""
  name = _names.call_name(call)
  for keyword in call.keywords:
    if keyword.arg in _VAR_LIST_KEYWORDS:
      return keyword.value
  if name in {"gradients", "gradient", "compute_gradients"} and len(
      call.args) >= 2:
    return call.args[1]
  if name == "minimize" and len(call.args) >= 2:
    return call.args[-1]
  if name == "apply_gradients" and call.args:
    return call.args[0]
  if name == "create_train_op" and len(call.args) >= 6:
    return call.args[5]
  return None


def _leaving_some_out(hits: List[_idiom.Hit], analysis: Analysis
                      ) -> List[_idiom.Hit]:
  """The filters that leave trainable variables untrained on purpose."""
  groups: Dict[int, Set[int]] = {}
  for hit in hits:
    groups.setdefault(id(analysis.module(hit.scope)), set()).add(
        id(hit.node))
  synced = _synced_modules(analysis)
  opened = _root_scopes(analysis)
  kept = []
  for hit in hits:
    module = id(analysis.module(hit.scope))
    if len(groups[module]) >= 2 or module in synced:
      continue  # Split training, or a target network's sync.
    if _names_the_model(hit.node, opened):
      continue
    kept.append(hit)
  return kept


def _synced_modules(analysis: Analysis) -> Set[int]:
  """Modules that write into a filtered group of variables (a target
  network updated from the trained one)."""
  found = set()
  for scope in analysis.scopes():
    for call in analysis.calls(scope):
      parts = _writes.target_and_value(call)
      if parts and "filtered" in analysis.flow.labels(parts[0], scope):
        found.add(id(analysis.module(scope)))
  return found


def _root_scopes(analysis: Analysis) -> Set[str]:
  """The literal scopes the project opens outside any other scope: the
  scopes whole models are built under."""
  opened: Set[str] = set()
  for module in analysis.project.scanned():
    if module.tree is not None and "_scope" in module.source.text:
      _open_scopes(module.tree.body, False, opened)
  return opened


def _open_scopes(body: List[ast.stmt], inside: bool, opened: Set[str]
                 ) -> None:
  for statement in body:
    here = inside
    if isinstance(statement, ast.With):
      names = [_literal_scope(i.context_expr) for i in statement.items]
      if not inside:
        opened.update(n for n in names if n)
      here = inside or any(
          isinstance(i.context_expr, ast.Call) and _names.call_name(
              i.context_expr) in _SCOPES for i in statement.items)
    for field in ("body", "orelse", "finalbody", "handlers"):
      inner = getattr(statement, field, None)
      if isinstance(inner, list):
        _open_scopes([s for s in inner if isinstance(s, ast.stmt)] + [
            s for h in inner if isinstance(h, ast.ExceptHandler)
            for s in h.body], here, opened)


def _literal_scope(expr: ast.AST) -> Optional[str]:
  if isinstance(expr, ast.Call) and _names.call_name(expr) in _SCOPES and (
      expr.args) and isinstance(expr.args[0], ast.Constant) and isinstance(
          expr.args[0].value, str):
    return expr.args[0].value
  return None


def _names_the_model(node: ast.AST, opened: Set[str]) -> bool:
  """Whether a filter selects by literal scopes that are all model roots."""
  literals = [n.value for n in ast.walk(node)
              if isinstance(n, ast.Constant) and isinstance(n.value, str)
              and n.value]
  if isinstance(node, ast.Call):
    chosen = _names.scope_argument(node)
    if chosen is not None and not isinstance(chosen, ast.Constant):
      return False
  return bool(literals) and all(
      s.strip("/").split("/")[0] in opened and "/" not in s.strip("/")
      for s in literals)


IDIOM = VarListFilter()
