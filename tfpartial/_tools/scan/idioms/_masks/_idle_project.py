"""A project where nothing trains: no step, no loss's gradients, no fit,
no optimizer, except under an `if flag:` that no run takes
(deep_lip_reading's language model builds its optimizer only
`if training:`, and every construction passes `training=False`; the
lip-reading graph is restored and run). What a forward pass does to a
variable's rows there keeps nothing from training: nothing trains."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks._rows import STEPS, gates_open

# Calls that build a step beside `STEPS`' (contrib's and slim's makers).
_MAKERS = frozenset({"optimize_loss", "create_train_op"})


def nothing_trains(analysis: Analysis) -> bool:
  """Whether no call of the project that trains (a step, gradients, a
  fit, an optimizer made) may run: each sits under an `if` whose flag
  no call or default turns on (`_rows.gates_open`); a module that does
  not parse may train. Found once per analysis."""
  found = analysis.once("nothing trains", lambda: _nothing_trains(analysis))
  assert isinstance(found, bool)
  return found


def _nothing_trains(analysis: Analysis) -> bool:
  project = analysis.project
  for module in project.modules:
    words = [w for w in module.words
             if w in STEPS or w in _MAKERS or "ptimizer" in w]
    if not words:
      continue
    if project.parsed(module) is None:
      return False
    for scope in analysis.scopes_with(module, words):
      for node in scope.nodes:
        if isinstance(node, ast.Call) and _trains(node) and gates_open(
            analysis, node, scope):
          return False
  return True


def _trains(call: ast.Call) -> bool:
  """Whether `call` steps, takes a loss's gradients, fits or makes an
  optimizer (`tf.train.AdamOptimizer(lr)`)."""
  name = _names.call_name(call)
  return name in STEPS or name in _MAKERS or "ptimizer" in name
