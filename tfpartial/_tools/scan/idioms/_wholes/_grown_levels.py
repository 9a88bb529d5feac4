"""A list grown level by level up to a stage (progressive growing,
curriculum upsampling: `for k in range(i + 1): var_all += [v for v in
tf.trainable_variables() if 'level_%d' % (k + 1) in v.name]`): it keeps
every level the stage has built, from the first to the stage's own, so
a step over it trains that stage's whole network, not a part left out
on purpose. What says the loop's bound is the stage is the same
function's filter of the stage's newest level alone (`'level_%d' % (i +
1)`, the level that fades in), which names the loop's last level: that
filter keeps the earlier levels fixed, and stays a finding of its own.
Without it, or when the loop stops short of that level (`range(i)`),
the list is read as any other filter (`for k in range(n_trainable)`:
the first blocks). Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step

# What grows a list in place.
_GROWS = {"append", "extend"}


# A name a string makes of one value: (its text, the value).
_Named = Tuple[str, ast.expr]

# A sum of names times whole numbers, plus a number (the key "").
_Linear = Dict[str, int]


def every_level(step: Step) -> bool:
  """Whether the step's list (a name) is empty where it is made and
  grown only in a loop over every level from the first
  (`for k in range(i + 1)`), each turn by variables chosen by a name
  made from the loop's level (`'level_%d' % (k + 1)`), up to the level a
  filter of the same function names alone (`'level_%d' % (i + 1)`).

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> code = ("def f(i, loss, opt):\\n"
  ...         "    var_all = []\\n"
  ...         "    for k in range(i + 1):\\n"
  ...         "        var_all += [v for v in tf.trainable_variables()\\n"
  ...         "                    if 'level_%d' % (k + 1) in v.name]\\n"
  ...         "    newest = [v for v in tf.trainable_variables()\\n"
  ...         "              if 'level_%d' % (i + 1) in v.name]\\n"
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
  made = [d for d in step.scope.defs.get(name, ()) if d.replaces]
  if len(made) != 1 or not isinstance(made[0].value, ast.List) or (
      made[0].value.elts):
    return False
  named = [each for node in _scopes.walk(step.scope.node)
           for each in [_named(node)] if each is not None]
  for node in _scopes.walk(step.scope.node):
    if isinstance(node, ast.For):
      counted = _level_counter(node)
      if counted is not None and _up_to_newest(node, name, counted, named):
        return True
  return False


def _level_counter(loop: ast.For) -> Optional[Tuple[str, ast.expr]]:
  """`k` and `n` of `for k in range(n)` (or `range(0, n)`): every level
  from the first up to a bound."""
  bounds = loop.iter
  if not isinstance(loop.target, ast.Name) or not isinstance(
      bounds, ast.Call) or _names.call_name(bounds) != "range" or (
          bounds.keywords) or not 1 <= len(bounds.args) <= 2:
    return None
  if len(bounds.args) == 2 and not (isinstance(
      bounds.args[0], ast.Constant) and bounds.args[0].value == 0):
    return None
  return loop.target.id, bounds.args[-1]


def _up_to_newest(loop: ast.For, name: str, counted: Tuple[str, ast.expr],
                  named: List[_Named]) -> bool:
  """Whether `loop` grows the list `name` by a name made from its level
  whose last turn (the level at the bound less one) is a name `named`
  holds that reads the bound's stage and not the level: the newest
  level, which a filter of the function trains alone."""
  level, bound = counted
  stage = _linear(bound)
  if not stage or set(stage) <= {""}:
    return False  # A number of levels, no stage.
  for text, value in _grown_names(loop, name, level):
    grown = _linear(value)
    if grown is None or set(grown) - {"", level}:
      continue
    last = _plus(_plus({"": grown.get("", 0)}, stage, grown.get(level, 0)),
                 {"": -1}, grown.get(level, 0))
    if any(other_text == text and _linear(other) == last
           for other_text, other in named):
      return True
  return False


def _grown_names(loop: ast.For, name: str, level: str) -> List[_Named]:
  """The names made from `level` by which a statement of `loop` adds
  to the list `name` (`name += ...`, `name.extend(...)`)."""
  found: List[_Named] = []
  for statement in loop.body:
    added: Optional[ast.expr] = None
    if isinstance(statement, ast.AugAssign) and isinstance(
        statement.op, ast.Add) and isinstance(
            statement.target, ast.Name) and statement.target.id == name:
      added = statement.value
    elif isinstance(statement, ast.Expr) and isinstance(
        statement.value, ast.Call) and isinstance(
            statement.value.func, ast.Attribute) and (
                statement.value.func.attr in _GROWS) and _names.dotted(
                    statement.value.func.value) == name:
      added = statement.value
    if added is not None:
      found += [each for node in ast.walk(added) for each in [_named(node)]
                if each is not None and _reads(each[1], level)]
  return found


def _named(node: ast.AST) -> Optional[_Named]:
  """The text and the one value of a name a string makes:
  `'level_%d' % (k + 1)`, `'level_{}'.format(k)`, `f'level_{k}'`."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (
      isinstance(node.left, ast.Constant)) and isinstance(
          node.left.value, str) and not isinstance(node.right, ast.Tuple):
    return node.left.value, node.right
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "format" and (
          isinstance(node.func.value, ast.Constant)) and isinstance(
              node.func.value.value, str) and len(node.args) == 1 and (
                  not node.keywords):
    return node.func.value.value, node.args[0]
  if isinstance(node, ast.JoinedStr):
    values = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    if len(values) == 1:
      return "".join(str(v.value) if isinstance(v, ast.Constant) else "{}"
                     for v in node.values), values[0].value
  return None


def _linear(node: ast.expr) -> Optional[_Linear]:
  """`node` as a sum of names times whole numbers plus a number
  (`i + 1`: {"i": 1, "": 1}), zero terms left out; None if it is not one.

  >>> _linear(ast.parse("k + 1 - 1", mode="eval").body)
  {'k': 1}
  """
  if isinstance(node, ast.Constant) and type(node.value) is int:
    return _plus({}, {"": node.value}, 1)
  if isinstance(node, ast.Name):
    return {node.id: 1}
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
    inner = _linear(node.operand)
    return None if inner is None else _plus({}, inner, -1)
  if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
    left, right = _linear(node.left), _linear(node.right)
    if left is None or right is None:
      return None
    return _plus(left, right, 1 if isinstance(node.op, ast.Add) else -1)
  return None


def _plus(one: _Linear, other: _Linear, times: int) -> _Linear:
  """`one + times * other`, zero terms left out."""
  total = dict(one)
  for key, count in other.items():
    total[key] = total.get(key, 0) + times * count
  return {key: count for key, count in total.items() if count}


def _reads(node: ast.AST, level: str) -> bool:
  """Whether `node` reads the name `level`."""
  return any(isinstance(n, ast.Name) and n.id == level
             for n in ast.walk(node))
