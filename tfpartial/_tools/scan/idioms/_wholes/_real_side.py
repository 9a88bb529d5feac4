"""Whether what an adversarial pair's steps leave out only makes the
discriminator's real samples: the discriminator is called twice, once on
what a trained builder makes (the generator's fakes) and once on what a
builder no step trains makes (`real = self.feature_extractor(images)`,
a pretrained network's features, read nowhere else). That network is
the data the generator learns to imitate, no part of the model the
steps train: leaving it out freezes nothing. Read in the branch that
holds the step (`if mode == 'train_gan': ...`), each branch its own.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def real_samples_only(scope: _scopes.Scope, call: ast.Call,
                      lists: List[ast.AST]) -> bool:
  """Whether, in the branch of `scope` that holds `call`, a discriminator
  named by the filters of the steps' lists there (`lists`, two at
  least) is called on the output of a builder they name and on that of
  one they do not, that output read only there."""
  block = {id(n) for n in _branch_nodes(scope.node, call)}
  nodes = [n for n in scope.nodes if id(n) in block]
  lists = [each for each in lists if id(each) in block]
  kept: Set[str] = set()
  for each in lists:
    kept |= _kept_words(each, scope, block)
  if len(lists) < 2 or not kept:
    return False
  calls = [n for n in nodes if isinstance(n, ast.Call) and (
      _last(n.func) in kept) and n.args]
  for fake in calls:
    for real in calls:
      if real is fake or ast.unparse(real.func) != ast.unparse(fake.func):
        continue
      made_real = _builder(real.args[0], scope, block)
      if _builder(fake.args[0], scope, block) in kept and (
          made_real is not None) and made_real not in kept and _read_once(
              real.args[0], nodes):
        return True
  return False


def _branch_nodes(function: ast.AST, call: ast.Call) -> List[ast.AST]:
  """Every node of the innermost branch of an `if` holding `call` (the
  whole function where none does)."""
  body: List[ast.stmt] = list(getattr(function, "body", []))
  while True:
    inner = next((block for statement in body if isinstance(
        statement, ast.If) for block in (statement.body, statement.orelse)
                  if any(n is call for s in block for n in ast.walk(s))),
                 None)
    if inner is None:
      return [n for s in body for n in ast.walk(s)]
    body = inner


def _kept_words(var_list: ast.AST, scope: _scopes.Scope,
                block: Set[int]) -> Set[str]:
  """The names a list's filter keeps (`'feature_generator' in v.name`)."""
  values = [d.value for d in scope.defs.get(ast.unparse(var_list), [])
            if id(d.value) in block]
  return {n.value for value in values for n in ast.walk(value)
          if isinstance(n, ast.Constant) and isinstance(n.value, str)
          and n.value.isidentifier()}


def _last(func: ast.expr) -> str:
  return func.attr if isinstance(func, ast.Attribute) else (
      func.id if isinstance(func, ast.Name) else "")


def _builder(value: ast.expr, scope: _scopes.Scope, block: Set[int]
             ) -> Optional[str]:
  """The name of the call that made `value` (a name or attribute bound
  once in the branch to a call)."""
  text = _names.dotted(value) or ""
  info = _scopes.enclosing_class(scope)
  values = [v for v, _ in info.attributes.get(text, [])] if (
      text.startswith("self.") and info is not None) else [
          d.value for d in scope.defs.get(text, [])]
  made = [v for v in values if id(v) in block]
  if len(made) != 1 or not isinstance(made[0], ast.Call):
    return None
  return _last(made[0].func)


def _read_once(value: ast.expr, nodes: List[ast.AST]) -> bool:
  """Whether `value` is read once among `nodes` (as the real samples)."""
  text = _names.dotted(value)
  return sum(1 for n in nodes if isinstance(
      n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and (
          _names.dotted(n) == text)) == 1
