"""The mechanical ports, as edits of line ranges of the original text.

A port is made only when it is certain: a constant mask, one variable, the
sink in the same function. Anything else is left "by hand", with the
reason. The edits never regenerate code from the AST: the file's own text,
comments and layout stay, and only the ranges named change.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _port_mix
from tfpartial._tools.scan._detect import Hit
from tfpartial._tools.scan._edits import (
    Port, apply_with, import_edit, replace, statement_of, text, before,
    spec_site, tf_alias, with_import, frozen_where_zero)
from tfpartial._tools.scan._flow import Flow



def port(hit: Hit, module: ast.Module, lines: List[str], flow: Flow) -> Port:
  """The edits porting `hit`, or the reason it is by hand."""
  if hit.idiom == "grads-mask":
    return _grads_mask(hit, module, lines, flow)
  if hit.idiom == "stop-gradient-mix":
    return _port_mix.mix(hit, module, lines, flow)
  if hit.idiom == "shadow-variable":
    return _port_mix.shadow(hit, module, lines)
  return {
      "write-back": "the saved values come from outside the step: say "
                    "which elements they keep in a `tfpartial.freeze` and "
                    "drop the write",
      "var-list-filter": "nothing to port: the filter is exact; add a spec "
                         "only if part of a variable must stay too",
      "weight-remask": "the mask may change between re-maskings: port it "
                       "as `tfpartial.train_only(w, mask)` on the optimizer "
                       "and drop the re-masking",
  }[hit.idiom]


def _grads_mask(hit: Hit, module: ast.Module, lines: List[str],
                flow: Flow) -> Port:
  node, sink, tf = hit.node, hit.sink, tf_alias(module)
  if not isinstance(sink, ast.Call) or tf is None:
    return "the optimizer call or TensorFlow's import is not plain here"
  if isinstance(node, ast.BinOp):
    pairs = [(node.left, node.right), (node.right, node.left)]
  elif isinstance(node, ast.Call) and _names.call_name(node) in {
      "multiply", "mul"}:
    pairs = [(node.args[0], node.args[1]), (node.args[1], node.args[0])]
  else:
    return "the gradients are rebuilt with `tf.where`: say which elements " \
           "it keeps in a `tfpartial.freeze`"
  grad, mask = next(((g, m) for g, m in pairs
                     if "grad" in flow.labels(g, hit.scope)), pairs[0])
  while isinstance(mask, ast.Subscript) or isinstance(
      mask, ast.Call) and _names.call_name(mask) in {"gather", "cast"}:
    mask = mask.value if isinstance(mask, ast.Subscript) else mask.args[0]
  if not _constants.is_constant(mask, hit.scope):
    return f"the mask `{text(mask, lines)}` is not a constant: it may " \
           "change while training (see the guide's dynamic masks)"
  variable = _the_variable(hit, sink, lines)
  if variable is None:
    return "the mask applies to every gradient in the list: name the " \
           "variable it is for in a `tfpartial.freeze`"
  statement = statement_of(sink, module)
  apply = apply_with(sink, "spec", lines)
  if statement is None or apply is None:
    return "the apply is not a plain statement"
  spec = (f"spec = tfpartial.freeze({variable}, "
          f"{frozen_where_zero(text(mask, lines), tf)})")
  site = spec_site(statement, hit.scope.node)
  return with_import(module, [replace(node, text(grad, lines)),
                               before(site, lines, spec), apply])


def _the_variable(hit: Hit, sink: ast.Call, lines: List[str]) -> Optional[str]:
  """The one variable whose gradients are masked, if the code says it."""
  source = hit.labels.get("grad")
  lists = []
  if isinstance(source, ast.Call):
    lists += [k.value for k in source.keywords if k.arg == "var_list"]
    if _names.call_name(source) in {"gradient", "gradients"} and len(
        source.args) >= 2:
      lists.append(source.args[1])
  for item in lists:
    if isinstance(item, (ast.List, ast.Tuple)) and len(item.elts) == 1:
      return text(item.elts[0], lines)
  if isinstance(source, ast.Call) and not lists:
    made = [n for s in _root_scope(hit.scope).all() for n in s.nodes
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            and _names.call_name(n.value) in _names.VARIABLES
            and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            and not any(k.arg == "trainable" for k in n.value.keywords)]
    if len(made) == 1:
      target = made[0].targets[0]
      return target.id if isinstance(target, ast.Name) else None
  return None


def _root_scope(scope: _scopes.Scope) -> _scopes.Scope:
  while scope.parent is not None:
    scope = scope.parent
  return scope
