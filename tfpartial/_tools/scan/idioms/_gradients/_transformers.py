"""Gradients masked by a Keras optimizer's `gradient_transformers`
(`tf.keras.optimizers.Adam(1e-3, gradient_transformers=[fn])`, TF 2.4
to 2.10, and `tf.keras.optimizers.legacy` after), by the
`transform_grads_fn` of `tf.contrib.training.create_train_op`, or by a
function as `optimize_loss`'s `clip_gradients`: each is called as
`fn(grads_and_vars)` before the pairs are applied, so a `fn` that
multiplies them by a mask, or rebuilds them with zeros, masks every step
of that optimizer. No call of `fn` is written in the project; its first
parameter is given the gradients here. A transformer that clips or adds
noise masks nothing.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Tuple, Union

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels

# Keras' list, `tf.contrib.training.create_train_op`'s (and TF-Agents')
# function, `optimize_loss`'s `clip_gradients` when a function.
_KEYWORDS = ("gradient_transformers", "transform_grads_fn", "clip_gradients")
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(the labels of what a transformer returns, its scope, the optimizer
  made with it) for each transformer that masks the pairs it is given."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  project = analysis.project
  for module in project.modules_with(_KEYWORDS):
    if module.is_test:
      continue
    for scope in analysis.scopes_with(module, _KEYWORDS):
      for call in analysis.calls(scope):
        for given in (k.value for k in call.keywords
                      if k.arg in _KEYWORDS):
          for function, home in _functions(analysis, given, scope):
            labels = _returned(analysis, function, home)
            if "masked" in labels:
              found.append((labels, home, call))
  return found


def _functions(analysis: Analysis, given: ast.expr, scope: _scopes.Scope
               ) -> Iterator[Tuple[Function, _scopes.Scope]]:
  """The functions a `gradient_transformers=` list names: lambdas there,
  or the project's functions of each name (with their scopes)."""
  elements = given.elts if isinstance(given, (ast.List, ast.Tuple)) else [
      given]
  names = set()
  for element in elements:
    if isinstance(element, ast.Lambda):
      yield element, scope
    elif isinstance(element, ast.Name):
      names.add(element.id)
  for function in analysis.functions_named(names) if names else ():
    if isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      yield function.node, function


def _returned(analysis: Analysis, function: Function,
              home: _scopes.Scope) -> Labels:
  """The labels of what `function` returns, its first parameter given
  the gradients (and their variables)."""
  given = function.args.args
  if not given:
    return {}
  env: Dict[str, Labels] = {given[0].arg: {"grad": given[0]}}
  if isinstance(function, ast.Lambda):
    return analysis.flow.labels(function.body, home, env)
  for node in home.nodes:
    if isinstance(node, ast.Return) and node.value is not None:
      labels = analysis.flow.labels(node.value, home, env)
      if "masked" in labels:
        return labels
  return {}
