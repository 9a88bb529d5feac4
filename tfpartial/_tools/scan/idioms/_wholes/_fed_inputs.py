"""Whether a step trains inputs set from data, not weights: every
variable of its list (`var_list=[self.slack]`) is written by an assign
from a placeholder (`tf.assign(self.slack, self.assign_slack)`), and
that setter is run with its placeholder fed where the step is run, on
each pass of the loop that runs it. An attack (EAD, C&W) optimises such
a copy of each batch; the model it runs was never in the list, and no
part of a variable is frozen. A variable no placeholder writes, or one
set once (a soft prompt loaded before training), stays a candidate.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_PLACEHOLDERS = {"placeholder", "placeholder_with_default"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclasses.dataclass
class _Run:
  """A `session.run` in a method: where, in which loops, what it fetches
  and feeds (`self.` attributes, as `x` of `self.x`)."""

  method: ast.AST
  at: Tuple[int, int]
  loops: Tuple[int, ...]
  fetched: Set[str]
  fed: Set[str]


@dataclasses.dataclass
class _Facts:
  """What a class's methods set and run, read once per class."""

  # `x` -> (the attribute holding the assign, its source's attribute).
  written: Dict[str, List[Tuple[str, Optional[str]]]]
  holders: Dict[int, str]  # id of a call -> the attribute that keeps it
  placeholders: Set[str]
  runs: List[_Run]


def set_from_feeds(var_list: Optional[ast.AST], step: ast.Call,
                   scope: _scopes.Scope) -> bool:
  """Whether `var_list` is a list display of `self.` variables of the
  step's class, each written by an assign from a placeholder that is run
  fed before the step on each pass that runs it."""
  info = _scopes.enclosing_class(scope)
  if info is None or not isinstance(var_list, (ast.List, ast.Tuple)) or (
      not var_list.elts):
    return False
  facts = info.home.once((_read_facts, id(info.node), 0),
                         lambda: _read_facts(info))
  held = facts.holders.get(id(step))
  steps = [r for r in facts.runs if held in r.fetched]
  return held is not None and all(
      _own(each) is not None and any(
          source in facts.placeholders and _set_before(
              setter, source, facts.runs, steps)
          for setter, source in facts.written.get(str(_own(each)), ()))
      for each in var_list.elts)


def _set_before(setter: str, source: Optional[str], runs: List[_Run],
                steps: List[_Run]) -> bool:
  """Whether every run of the step follows, in its method, a run of
  `setter` feeding `source` that no loop of the step's passes by."""
  return bool(steps) and all(any(
      setter in r.fetched and source in r.fed and r.method is t.method and (
          r.at < t.at) and t.loops[:len(r.loops)] == r.loops
      for r in runs) for t in steps)


def _own(node: ast.AST) -> Optional[str]:
  """`x` of `self.x`."""
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self":
    return node.attr
  return None


def _read_facts(info: _scopes.ClassInfo) -> _Facts:
  facts = _Facts({}, {}, set(), [])
  for key, values in info.attributes.items():
    name = key[len("self."):]
    for value, _ in values:
      if isinstance(value, ast.Call) and _names.call_name(
          value) in _PLACEHOLDERS:
        facts.placeholders.add(name)
      for node in ast.walk(value):
        if isinstance(node, ast.Call):
          facts.holders.setdefault(id(node), name)
          written = _assigned(node)
          if written is not None:
            facts.written.setdefault(written[0], []).append(
                (name, _own(written[1])))
  for method in info.methods.values():
    _read_runs(method.node, method.node, (), facts.runs)
  return facts


def _assigned(node: ast.Call) -> Optional[Tuple[str, ast.expr]]:
  """(`x`, source) of `tf.assign(self.x, v)` or `self.x.assign(v)`."""
  if _names.call_name(node) != "assign":
    return None
  if isinstance(node.func, ast.Attribute) and _own(
      node.func.value) is not None and len(node.args) == 1:
    target, source = node.func.value, node.args[0]
  elif len(node.args) == 2:
    target, source = node.args
  else:
    return None
  name = _own(target)
  return (name, source) if name is not None else None


def _read_runs(node: ast.AST, method: ast.AST, loops: Tuple[int, ...],
               runs: List[_Run]) -> None:
  """The `.run(fetches, feed_dict)` calls under `node`, with the loops
  around each."""
  for child in ast.iter_child_nodes(node):
    inner = loops + (id(child),) if isinstance(child, _LOOPS) else loops
    if isinstance(child, ast.Call) and isinstance(
        child.func, ast.Attribute) and child.func.attr == "run":
      given = {k.arg: k.value for k in child.keywords}
      fetches = child.args[0] if child.args else given.get("fetches")
      feeds = child.args[1] if len(child.args) > 1 else given.get(
          "feed_dict")
      runs.append(_Run(method, (child.lineno, child.col_offset), loops,
                       _attributes(fetches), _attributes(
                           feeds.keys if isinstance(feeds, ast.Dict)
                           else None)))
    _read_runs(child, method, inner, runs)


def _attributes(fetched: object) -> Set[str]:
  """`x` of each `self.x` fetched (alone, or in a list or tuple)."""
  if isinstance(fetched, (ast.List, ast.Tuple)):
    fetched = fetched.elts
  items = fetched if isinstance(fetched, list) else [fetched]
  return {str(_own(i)) for i in items
          if isinstance(i, ast.AST) and _own(i) is not None}
