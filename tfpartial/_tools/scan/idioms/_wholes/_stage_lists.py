"""Which scopes of a function a step's list may keep, for the
later-stage rule (`_later_stage`): the list read as exactly one filter
(not joined by `+`, grown by `+=`, `.extend`, `.append` or `.insert`,
nor passed anywhere), its literals resolved against the scope paths the
function opens. A prefix (`startswith('ma')`, a scope argument) keeps
every path it begins; a substring (`'conv2d' in v.name`) every path it
may occur in, the names of the layers made there included. Anything
else (a name left out, `or v in main_vars`, a pattern) may keep every
scope: the answer is None. Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Words a layer's or a variable's own name may hold, whatever the code
# spells: the suffixes TensorFlow gives variables.
_SUFFIXES = ("kernel", "bias", "weights", "biases", "gamma", "beta",
             "moving_mean", "moving_variance", "embeddings", "Adam",
             "Momentum", "BatchNorm", "depthwise_kernel",
             "pointwise_kernel", "recurrent_kernel")
_PATTERN = re.compile(r"[\\^$.*+?{}\[\]|()]")
# A block's words: None where a call's own layers are not seen.
Words = Optional[FrozenSet[str]]


Index = Tuple[Dict[str, List[ast.Name]], Dict[int, ast.AST]]


def index(home: ast.AST) -> Index:
  """A module's names by spelling, and the value each plain assignment
  binds to its one target, read once."""
  names: Dict[str, List[ast.Name]] = {}
  values: Dict[int, ast.AST] = {}
  for each in ast.walk(home):
    if isinstance(each, ast.Name):
      names.setdefault(each.id, []).append(each)
    if isinstance(each, ast.Assign) and len(each.targets) == 1:
      values[id(each.targets[0])] = each.value
  return names, values


def kept(step_list: Optional[ast.AST], node: object, found: Index,
         words: Dict[str, Words]) -> Optional[FrozenSet[str]]:
  """The scope paths of `words` the list may keep; None for every one.

  >>> code = "vs = [v for v in tf.global_variables() if " + (
  ...     "v.name.startswith('dd')]\\nop = f(var_list=vs)\\n")
  >>> tree = ast.parse(code)
  >>> comp, name = tree.body[0].value, tree.body[1].value.keywords[0].value
  >>> sorted(kept(name, comp, index(tree),
  ...        {"ddpm": frozenset(), "main": frozenset()}))
  ['ddpm']
  >>> kept(name, comp, index(ast.parse(code + "vs += more\\n")), {})
  """
  if not isinstance(node, ast.AST) or not _exact(step_list, node, found):
    return None
  literals = list(_literals(node))
  if not literals or any(kind is None for kind, _ in literals):
    return None
  return frozenset(path for path, said in words.items() if any(
      _covers(kind, text, path, said) for kind, text in literals))


def _covers(kind: Optional[str], text: str, path: str, said: Words
            ) -> bool:
  """Whether a literal may match a variable made under `path`."""
  if kind == "prefix":
    return path.startswith(text) or text.startswith(path + "/")
  if text in path or said is None:
    return True
  return any(text in w or w in text for w in (*said, *_SUFFIXES))


def _literals(node: ast.AST) -> Iterator[Tuple[Optional[str], str]]:
  """(kind, text) of each test of a filter: "prefix", "substring", or
  None where the test is not a literal's (`v in main_vars`, `not`)."""
  prefixes = set()
  for each in _scopes.walk(node):
    if isinstance(each, (ast.Not, ast.NotIn)) or isinstance(
        each, ast.BoolOp) and isinstance(each.op, ast.Or) and not all(
            _tested(v) for v in each.values):
      yield None, ""  # A name left out, or an `or` of something else.
    if isinstance(each, ast.Compare):
      if not (isinstance(each.left, ast.Constant) and isinstance(
          each.left.value, str)) or not all(
              isinstance(o, ast.In) for o in each.ops):
        yield None, ""
      else:
        prefixes.add(id(each.left))
        yield "substring", each.left.value
    if isinstance(each, ast.Call):
      chosen = _prefix_argument(each)
      prefixes |= {id(c) for c in ast.walk(chosen)} if chosen else set()
      if chosen is not None and not _strings(chosen):
        yield None, ""  # A scope the code computes.
      for text in _strings(chosen):
        yield ("prefix" if not _PATTERN.search(text) or (
            isinstance(each.func, ast.Attribute) and each.func.attr == (
                "startswith")) else None), text
  if any(isinstance(c, ast.Constant) and isinstance(c.value, str) and (
      id(c) not in prefixes) for c in _scopes.walk(node)):
    yield None, ""  # A string used otherwise: not read.


def _tested(node: ast.expr) -> bool:
  """Whether an operand of `or` is a literal's test of a name."""
  return isinstance(node, ast.Compare) and isinstance(
      node.left, ast.Constant) or isinstance(node, ast.Call) and bool(
          _strings(_prefix_argument(node)))


def _prefix_argument(call: ast.Call) -> Optional[ast.AST]:
  """The argument a `startswith` call or a scope argument matches."""
  if isinstance(call.func, ast.Attribute) and call.func.attr == (
      "startswith") and call.args:
    return call.args[0]
  return _names.scope_argument(call)


def _strings(node: Optional[ast.AST]) -> List[str]:
  """The strings a literal (or a tuple of literals) holds."""
  each = node.elts if isinstance(node, ast.Tuple) else [node]
  return [e.value for e in each if isinstance(e, ast.Constant) and (
      isinstance(e.value, str))] if all(isinstance(e, ast.Constant) and (
          isinstance(e.value, str)) for e in each) else []


def _exact(step_list: Optional[ast.AST], node: ast.AST, found: Index
           ) -> bool:
  """Whether the step's list is the filter itself, or a name bound to
  it once that nothing else in the module reads (so never joined,
  grown, or handed to a helper)."""
  if step_list is node:
    return True
  if not isinstance(step_list, ast.Name):
    return False
  names, values = found
  uses = names.get(step_list.id, [])
  binds = [n for n in uses if not isinstance(n.ctx, ast.Load)]
  return len(binds) == 1 and values.get(id(binds[0])) is node and all(
      n is step_list for n in uses if isinstance(n.ctx, ast.Load))
