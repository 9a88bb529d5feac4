"""A step through a helper outside the scanned code: a call the scan
cannot read (`optimize_model(model, trainable_variables=...)` of an
installed library) that names its list by a keyword only a training call
uses. That keyword alone is the decision to train the list, so the call
is a step. Not `var_list=` nor `variables=`: a saver, a checkpoint's
restore and `assign_from_checkpoint_fn` name what they read so."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms._sources._train_step import STEPS

# The keywords that say a call trains what it is given.
KEYWORDS = ("trainable_variables", "variables_to_train")
# The label of a step that is such a call: its keyword.
OUTSIDE = "outside"


def keyword(call: ast.Call) -> Optional[ast.keyword]:
  """The keyword of `call` that names what it trains, if it names one.

  >>> call = ast.parse("fit(m, trainable_variables=v)").body[0].value
  >>> keyword(call).arg
  'trainable_variables'
  """
  return next((k for k in call.keywords if k.arg in KEYWORDS), None)


def calls(analysis: Analysis) -> Iterator[Tuple[_scopes.Scope, ast.Call]]:
  """The calls, not of a step's name, of a function the scan cannot read
  that name what they train by one of `KEYWORDS`, with their scopes."""
  project = analysis.project
  for module in project.modules_with(KEYWORDS):
    for scope in project.scopes_at(module, module.lines_of(KEYWORDS)):
      for call in analysis.calls(scope):
        if _names.call_name(call) not in STEPS and keyword(
            call) is not None and _unread(analysis, call, scope):
          yield scope, call


def _unread(analysis: Analysis, call: ast.Call, scope: _scopes.Scope
            ) -> bool:
  """Whether `call` runs a function outside the scanned code: imported
  from outside the project, or one that no function of the project is
  named and the flow cannot follow (the project's own are read)."""
  name = _names.call_name(call)
  root = (_names.dotted(call.func) or "").split(".")[0]
  if not name or not root:
    return False
  if analysis.project.external(scope, root):
    return True
  # A function of the project of that name is read where it is, not
  # guessed from its keyword (its own steps are found there).
  return next(iter(analysis.project.functions_named(
      (name,), unscanned=True)), None) is None and analysis.flow.callee(
          call, scope) is None


def marked(call: ast.Call, labels: Labels) -> Labels:
  """`labels`, with the keyword of a call of `calls` (not a step's
  name) as `OUTSIDE`."""
  found = keyword(call) if _names.call_name(call) not in STEPS else None
  return {**labels, OUTSIDE: found} if found is not None else labels


def mention(labels: Labels) -> str:
  """`, a helper outside the scanned code given `trainable_variables=``
  for a step of `calls`, else the empty string.

  >>> mention({OUTSIDE: ast.keyword("variables_to_train", ast.Name("v"))})
  ', a helper outside the scanned code given `variables_to_train=`'
  """
  found = labels.get(OUTSIDE)
  if not isinstance(found, ast.keyword):
    return ""
  return f", a helper outside the scanned code given `{found.arg}=`"
