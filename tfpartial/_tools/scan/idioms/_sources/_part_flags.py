"""A step run only while a flag named after its part is on, and a script
that turns one part's flag off beside another's on before handing the
flags on (DETR's fine-tuning: `if getattr(config, "train_{}".format(
name)):` around each part's `apply_gradients`, and `config.train_backbone
= False`, `config.train_nlayers = True` in the script): the part left
off never gets its step, so it stays fixed while the others train.

What the code does decides: the gate must hold a step and run it while
the flag is on (not a negated test, not a layer built or not); the
script must leave a part off for good (not turned on again later in it:
a warm-up), keep another on (not a config's all-off defaults), and pass
the flags on after setting them. Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _swapped

# A flag's name as the gate computes it: the text around the part's name.
_Pattern = Tuple[str, str]
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# The label of the flag a finding's script turns off.
FLAG = "part_flag"


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """One finding per script and flag holder, at the first part's flag it
  turns off for good, for a step gated by a flag named after its part."""
  gates: Dict[_Pattern, Step] = {}
  # Each function's gated blocks read once, however many steps it holds.
  read: Dict[int, Dict[int, _Pattern]] = {}
  for step in steps:
    if id(step.scope) not in read:
      read[id(step.scope)] = _gated_calls(step.scope)
    pattern = read[id(step.scope)].get(id(step.call))
    if pattern is not None:
      gates.setdefault(pattern, step)
  if not gates:
    return []
  found: List[_idiom.Hit] = []
  project = analysis.project
  for module in project.modules:
    if module.is_test or not any(
        prefix + suffix in module.source.text for prefix, suffix in gates):
      continue
    root = project.parsed(module)
    if root is None:
      continue
    for scope in root.all():
      for pattern, step in gates.items():
        node = _left_off(scope, pattern)
        if node is None:
          continue
        labels = dict(step.labels)
        labels["filtered"] = labels[FLAG] = node
        path = analysis.module(step.scope).source.path
        if module.source.path != path:
          labels[_swapped.STEP_FILE] = ast.Constant(path)
        found.append(_idiom.Hit(node, scope, step.call, labels))
        break
  return found


def _gated_calls(scope: _scopes.Scope) -> Dict[int, _Pattern]:
  """The calls in the body of each `if getattr(holder, <computed name>):`
  of `scope`, by id, with the flag's name pattern."""
  found: Dict[int, _Pattern] = {}
  for node in scope.nodes:
    if isinstance(node, ast.If) and isinstance(node.test, ast.Call):
      pattern = _computed_flag(node.test, scope)
      if pattern is not None:
        found.update((id(each), pattern) for stmt in node.body
                     for each in ast.walk(stmt) if isinstance(each, ast.Call))
  return found


def _computed_flag(test: ast.expr, scope: _scopes.Scope
                   ) -> Optional[_Pattern]:
  """(prefix, suffix) of `getattr(holder, name)` whose name is a text
  around another value: `"train_{}".format(part)`, `"train_" + part`,
  `f"train_{part}"`, `"train_%s" % part`, or a name bound once to one.

  >>> from tfpartial._tools.scan import _scopes
  >>> module = _scopes.collect(ast.parse("pass"))
  >>> test = ast.parse('getattr(c, "train_{}".format(n))').body[0].value
  >>> _computed_flag(test, module)
  ('train_', '')
  >>> _computed_flag(ast.parse('getattr(c, "train")').body[0].value, module)
  """
  if not isinstance(test, ast.Call) or _names.dotted(test.func) != (
      "getattr") or len(test.args) < 2:
    return None
  name = test.args[1]
  if isinstance(name, ast.Name):
    defs = scope.defs.get(name.id, [])
    if len(defs) != 1 or not isinstance(defs[0].value, ast.expr):
      return None
    name = defs[0].value
  found = _around(name)
  if found is None or not "".join(found) or not _IDENTIFIER.match(
      "".join(found) + "x"):
    return None
  return found


def _around(name: ast.expr) -> Optional[_Pattern]:
  """The constant text before and after the one computed part of
  `name`."""
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
    left, right = _text(name.left), _text(name.right)
    if left is not None and right is None:
      return left, ""
    if right is not None and left is None:
      return "", right
    return None
  if isinstance(name, ast.JoinedStr):
    values = name.values
    parts = [i for i, v in enumerate(values)
             if isinstance(v, ast.FormattedValue)]
    if len(parts) != 1:
      return None
    return ("".join(_text(v) or "" for v in values[:parts[0]]),
            "".join(_text(v) or "" for v in values[parts[0] + 1:]))
  if isinstance(name, ast.Call) and isinstance(name.func, ast.Attribute) and (
      name.func.attr == "format") and len(name.args) == 1:
    return _split(_text(name.func.value), ("{}", "{0}"))
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Mod):
    return _split(_text(name.left), ("%s",))
  return None


def _split(text: Optional[str], holes: Tuple[str, ...]
           ) -> Optional[_Pattern]:
  """The text before and after its one hole."""
  if text is None:
    return None
  for hole in holes:
    if text.count(hole) == 1 and "{" not in text.replace(hole, ""):
      before, after = text.split(hole)
      return before, after
  return None


def _text(node: ast.AST) -> Optional[str]:
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  return None


def _left_off(scope: _scopes.Scope, pattern: _Pattern
              ) -> Optional[ast.expr]:
  """Where `scope` first sets a part's flag of `pattern` off on a holder
  (a name) that it never sets on again, while it sets another part's
  flag on, and passes the holder on afterwards."""
  prefix, suffix = pattern
  values: Dict[Tuple[str, str], List[Tuple[bool, ast.expr]]] = {}
  for node in scope.nodes:
    for target, value in _flag_sets(node):
      attr = target.attr
      if not isinstance(target.value, ast.Name) or not attr.startswith(
          prefix) or not attr.endswith(suffix) or len(attr) <= len(
              prefix) + len(suffix):
        continue
      values.setdefault((target.value.id, attr), []).append((value, target))
  by_holder: Dict[str, List[Tuple[str, List[Tuple[bool, ast.expr]]]]] = {}
  for (name, attr), sets in values.items():
    by_holder.setdefault(name, []).append((attr, sets))
  for holder, flags in by_holder.items():
    on = any(value for _, sets in flags for value, _ in sets)
    off = sorted((sets[0][1] for _, sets in flags
                  if not any(value for value, _ in sets)),
                 key=_idiom.position)
    if on and off and _passed_on(scope, holder, off[0]):
      return off[0]
  return None


def _flag_sets(node: ast.AST) -> Iterator[Tuple[ast.Attribute, bool]]:
  """`holder.attr = True`, `= tf.Variable(False)`, `holder.attr.assign(
  True)`: the attribute and the value set."""
  if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
      node.targets[0], ast.Attribute):
    value = _boolean(node.value)
    if value is not None:
      yield node.targets[0], value
  elif isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "assign" and (
          isinstance(node.func.value, ast.Attribute)) and len(node.args) == 1:
    value = _boolean(node.args[0])
    if value is not None:
      yield node.func.value, value


def _boolean(node: ast.expr) -> Optional[bool]:
  """`True`, `False`, or a variable made of one (`tf.Variable(False)`)."""
  if isinstance(node, ast.Call) and _names.call_name(node) == "Variable" and (
      node.args):
    node = node.args[0]
  if isinstance(node, ast.Constant) and isinstance(node.value, bool):
    return node.value
  return None


def _passed_on(scope: _scopes.Scope, holder: str, after: ast.AST) -> bool:
  """Whether a call of `scope` after `after` is given the holder."""
  start = _idiom.position(after)
  return any(isinstance(node, ast.Call) and _idiom.position(node) > start
             and any(isinstance(arg, ast.Name) and arg.id == holder
                     for arg in [*node.args,
                                 *(k.value for k in node.keywords)])
             for node in scope.nodes)
