"""A step's list by the value its name holds at the step, when the
function binds that name to several lists (`var_list = gen_vars +
im_vars; ... compute_gradients(gen_loss, var_list=var_list)`, then
`var_list = discrim_vars; ... compute_gradients(discrim_loss,
var_list=var_list)`): two lists, not one trained by two losses. A GAN's
halves are told apart so, however the code names them. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _scopes


def at_step(var_list: Optional[ast.AST], call: ast.AST,
            scope: _scopes.Scope) -> Optional[ast.AST]:
  """The value a list named by a local name rebound in `scope` holds at
  `call` (the last binding before it), else `var_list` itself."""
  if not isinstance(var_list, ast.Name):
    return var_list
  defs = scope.defs.get(var_list.id, ())
  if len(defs) < 2 or not all(d.replaces and d.part is None for d in defs):
    return var_list
  at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
  before = sorted((d for d in defs if d.end <= at), key=lambda d: d.end)
  return before[-1].value if before else var_list


def as_text(var_list: Optional[ast.AST], call: ast.AST,
            scope: _scopes.Scope) -> str:
  """A step's list as text (`at_step`), a local alias of its object
  spelled as what it holds: `model.tvars` of `model = self.generator`
  is `self.generator.tvars`, and of `model = self.discriminator` in
  another method, `self.discriminator.tvars`: two objects' lists, a
  GAN's halves, not one list trained by two losses.

  >>> tree = ast.parse("def f(self):\\n  model = self.gen\\n"
  ...                  "  step(model.tvars)\\n")
  >>> scope = _scopes.collect(tree).scope_of(tree.body[0])
  >>> call = tree.body[0].body[1].value
  >>> as_text(call.args[0], call, scope)
  'self.gen.tvars'
  """
  value = at_step(var_list, call, scope)
  return "None" if value is None else aliased(value, scope)


def aliased(value: ast.AST, scope: _scopes.Scope) -> str:
  """`value` as text, the local name its attribute chain starts from
  (bound once in `scope`, to another attribute) spelled as what it
  holds (`as_text`)."""
  text = ast.unparse(value)
  root = value
  while isinstance(root, ast.Attribute):
    root = root.value
  if root is value or not isinstance(root, ast.Name) or (
      root.id in scope.params):
    return text
  defs = scope.defs.get(root.id, ())
  if len(defs) != 1 or not defs[0].replaces or defs[0].part is not None or (
      not isinstance(defs[0].value, ast.Attribute)):
    return text
  return ast.unparse(defs[0].value) + text[len(root.id):]
