"""A project where nothing trains: no step, no loss's gradients, no fit,
no optimizer, except under an `if flag:` that no run takes
(deep_lip_reading's language model builds its optimizer only
`if training:`, and every construction passes `training=False`; the
lip-reading graph is restored and run). What a forward pass does to a
variable's rows there keeps nothing from training: nothing trains.

A flag the command line may set (a function passed to `fire.Fire` or
`app.run`, or called by no call the project spells) may be on, and a
module read only in part (blocks left out, a notebook's cell skipped,
a file read in several versions) may train in what was not read. A
layers library with no training code at all counts as a project where
nothing trains: its padding rows are no finding in it, though its
users' own training scripts (scanned with it) would make them one."""

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
  no call, default or command line turns on (`_rows.gates_open` with
  `unseen`); a module that does not parse, or is read only in part,
  may train. Found once per analysis."""
  found = analysis.once("nothing trains", lambda: _nothing_trains(analysis))
  assert isinstance(found, bool)
  return found


def _nothing_trains(analysis: Analysis) -> bool:
  project = analysis.project
  for module in project.modules:
    if module.source.notes:  # A notebook's cell left out: it may train.
      return False
    words = [w for w in module.words
             if w in STEPS or w in _MAKERS or "ptimizer" in w]
    if not words:
      continue
    if project.parsed(module) is None or module.dropped or (
        module.versions > 1):
      return False
    for scope in analysis.scopes_with(module, words):
      for node in scope.nodes:
        if isinstance(node, ast.Call) and _trains(node) and gates_open(
            analysis, node, scope, unseen=True):
          return False
  return True


def _trains(call: ast.Call) -> bool:
  """Whether `call` steps, takes a loss's gradients, fits or makes an
  optimizer (`tf.train.AdamOptimizer(lr)`)."""
  name = _names.call_name(call)
  return name in STEPS or name in _MAKERS or "ptimizer" in name
