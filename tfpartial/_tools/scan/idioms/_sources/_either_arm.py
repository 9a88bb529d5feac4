"""A scope's list chosen by a flag against the list a model gives: `if
flag_bias: minimize(loss, var_list=get_collection(..., scope='bias_opt'))
else: minimize(loss, var_list=variables_graph)`, the second list what the
model built outside that scope returned. The scope is then no whole
model, though the project opens it outside any other (`with
tf.variable_scope('bias_opt'):` around two scalars): while the flag
holds, the model's variables stay fixed. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _arms

# The whole graph's lists (not a model's `model.trainable_variables`).
_WHOLE = {"trainable_variables", "global_variables", "all_variables"}
# Another step of the same function and loss: its call, list, labels.
Other = Tuple[ast.Call, Optional[ast.AST], Labels]


def against_a_model(call: ast.Call, scope: _scopes.Scope,
                    others: List[Other]) -> bool:
  """Whether one of `others`, in the other arm of an `if ... else` from
  `call`, trains a list no filter made that is not every variable of the
  graph (a model's own list)."""
  return any(
      var_list is not None and "filtered" not in labels and (
          not _every_variable(labels)) and _arms.apart(
              scope, _idiom.position(call), _idiom.position(other))
      for other, var_list, labels in others)


def _every_variable(labels: Labels) -> bool:
  """Whether a list is every variable of the graph, unfiltered."""
  chosen = labels.get("var")
  return isinstance(chosen, ast.Call) and _names.call_name(
      chosen) in _WHOLE and not chosen.args and not chosen.keywords
