"""A list grown level by level up to a stage (progressive growing,
curriculum upsampling: `for k in range(i + 1): var_all += [v for v in
tf.trainable_variables() if 'level_%d' % (k + 1) in v.name]`): it keeps
every level the stage has built, from the first to the stage's own, so
a step over it trains that stage's whole network, not a part left out
on purpose. A step of the same function over the stage's newest level
alone (`'level_%d' % (i + 1)`, while it fades in) is the filter that
keeps the earlier levels fixed, and stays a finding of its own. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step

# What grows a list in place.
_GROWS = {"append", "extend"}


def every_level(step: Step) -> bool:
  """Whether the step's list (a name) is empty where it is made and
  grown only in a loop over every level from the first
  (`for k in range(i + 1)`), each turn by variables chosen by a name
  made from the loop's level (`'level_%d' % (k + 1)`).

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> code = ("def f(i, loss, opt):\\n"
  ...         "    var_all = []\\n"
  ...         "    for k in range(i + 1):\\n"
  ...         "        var_all += [v for v in tf.trainable_variables()\\n"
  ...         "                    if 'level_%d' % (k + 1) in v.name]\\n"
  ...         "    return opt.minimize(loss, var_list=var_all)\\n")
  >>> module = _scopes.collect(ast.parse(code))
  >>> scope = module.children[0]
  >>> call = [n for n in ast.walk(scope.node) if isinstance(n, ast.Call)
  ...         and _names.call_name(n) == "minimize"][0]
  >>> every_level(Step(call, scope, call.keywords[0].value, "loss", {}))
  True
  """
  chosen = step.var_list
  if not isinstance(chosen, ast.Name):
    return False
  name = chosen.id
  grown = False
  for node in _scopes.walk(step.scope.node):
    if isinstance(node, ast.For):
      level = _level_counter(node)
      if level is not None and any(_grows_by_level(each, name, level)
                                   for each in node.body):
        grown = True
  made = [d for d in step.scope.defs.get(name, ()) if d.replaces]
  return grown and len(made) == 1 and isinstance(
      made[0].value, ast.List) and not made[0].value.elts


def _level_counter(loop: ast.For) -> Optional[str]:
  """`k` of `for k in range(n)` (or `range(0, n)`): every level from
  the first up to a bound."""
  bounds = loop.iter
  if not isinstance(loop.target, ast.Name) or not isinstance(
      bounds, ast.Call) or _names.call_name(bounds) != "range" or (
          bounds.keywords) or not 1 <= len(bounds.args) <= 2:
    return None
  if len(bounds.args) == 2 and not (isinstance(
      bounds.args[0], ast.Constant) and bounds.args[0].value == 0):
    return None
  return loop.target.id


def _grows_by_level(statement: ast.stmt, name: str, level: str) -> bool:
  """Whether `statement` adds to the list `name` (`name += ...`,
  `name.extend(...)`) what a name made from `level` chooses."""
  added: Optional[ast.expr] = None
  if isinstance(statement, ast.AugAssign) and isinstance(
      statement.op, ast.Add) and isinstance(statement.target, ast.Name) and (
          statement.target.id == name):
    added = statement.value
  elif isinstance(statement, ast.Expr) and isinstance(
      statement.value, ast.Call) and isinstance(
          statement.value.func, ast.Attribute) and (
              statement.value.func.attr in _GROWS) and _names.dotted(
                  statement.value.func.value) == name:
    added = statement.value
  return added is not None and any(
      _named_by(node, level) for node in ast.walk(added))


def _named_by(node: ast.AST, level: str) -> bool:
  """Whether `node` is a name made from `level`: `'level_%d' % (k + 1)`,
  `'level_{}'.format(k)`, `f'level_{k}'`."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (
      isinstance(node.left, ast.Constant)) and isinstance(
          node.left.value, str):
    return _reads(node.right, level)
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "format" and (
          isinstance(node.func.value, ast.Constant)):
    return any(_reads(a, level) for a in node.args)
  if isinstance(node, ast.JoinedStr):
    return any(_reads(v, level) for v in node.values
               if isinstance(v, ast.FormattedValue))
  return False


def _reads(node: ast.AST, level: str) -> bool:
  """Whether `node` reads the name `level`."""
  return any(isinstance(n, ast.Name) and n.id == level
             for n in ast.walk(node))
