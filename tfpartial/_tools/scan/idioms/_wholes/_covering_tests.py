"""Whether the lists a step applies together keep every name between
them: gradient pairs of two losses, each kept by a test of its
variable's name, joined and applied as one (`grads1 = [(g, v) for g, v
in grads1 if not v.name.startswith('Latentpos')]`, `grads2 = [(g, v) for
g, v in grads2 if v.name.startswith('Latent')]`, `apply_gradients(grads1
+ grads2)`, or each in turn as a parity of the epoch alternates): a
name the first test drops starts with `Latentpos`, so with `Latent`,
and the second keeps it. Each loss reaches its own
variables; none is left untrained (a VHRED's latent and decoder
routing). Two tests that leave a name to neither (`startswith('Decoder')`
beside `not startswith('Latentpos')`) still leave it out.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# A test of a name: (kept when it holds, "prefix" or "part", the text).
_Test = Tuple[bool, str, str]


def keeps_every_name(var_list: Optional[ast.AST], scope: _scopes.Scope
                     ) -> bool:
  """Whether `var_list` is lists joined by `+` (or a name bound to that)
  of which two keep, by tests of names, every name between them.

  >>> tree = ast.parse(
  ...     "def f(a, b):\\n"
  ...     "  a = [(g, v) for g, v in a if not v.name.startswith('Lp')]\\n"
  ...     "  b = [(g, v) for g, v in b if v.name.startswith('L')]\\n"
  ...     "  opt.apply_gradients(a + b)\\n")
  >>> scope = _scopes.collect(tree).children[0]
  >>> keeps_every_name(tree.body[0].body[2].value.args[0], scope)
  True
  """
  parts = _alternated(var_list, scope) or _summands(_value(var_list, scope))
  tests = [_test_of(_value(part, scope)) for part in parts]
  known = [test for test in tests if test is not None]
  return len(tests) >= 2 and any(
      _together(one, other) for one in known for other in known)


def _value(node: Optional[ast.AST], scope: _scopes.Scope
           ) -> Optional[ast.AST]:
  """What a name holds where it is read, when one assignment reaches
  it; else `node`."""
  if isinstance(node, ast.Name):
    values = _scopes.values_reaching(node, scope)
    return values[0] if len(values) == 1 else None
  return node


def _alternated(node: Optional[ast.AST], scope: _scopes.Scope
                ) -> List[ast.AST]:
  """The two lists a name is set to in the arms of an `if` on a parity
  (`if self.epoch % 2 == 1: grads = grads1 else: grads = grads2`), when
  they are all that reaches the read: the step trains each in turn as
  training goes on; none if it is not, or if a later assignment (a
  filter of the chosen list) is what the step reads."""
  if not isinstance(node, ast.Name):
    return []
  reaching = {id(value) for value in _scopes.values_reaching(node, scope)}
  for each in scope.nodes:
    if isinstance(each, ast.If) and any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
        for n in ast.walk(each.test)):
      arms = [_set_to(each.body, node.id), _set_to(each.orelse, node.id)]
      if arms[0] is not None and arms[1] is not None and reaching == {
          id(arms[0]), id(arms[1])}:
        return [arms[0], arms[1]]
  return []


def _set_to(body: List[ast.stmt], name: str) -> Optional[ast.expr]:
  """The value of `body` when it is one assignment to `name`."""
  if len(body) == 1 and isinstance(body[0], ast.Assign) and len(
      body[0].targets) == 1 and isinstance(body[0].targets[0], ast.Name) and (
          body[0].targets[0].id == name):
    return body[0].value
  return None


def _summands(node: Optional[ast.AST]) -> List[ast.AST]:
  """The lists `a + b + c` joins."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return _summands(node.left) + _summands(node.right)
  return [node] if node is not None else []


def _test_of(node: Optional[ast.AST]) -> Optional[_Test]:
  """The one test of names a comprehension over gradient pairs keeps
  them by (tests of other things, `g is not None`, aside); none for a
  list of variables alone (`tvars + ntvars`, zipped with `None`s)."""
  if not isinstance(node, ast.ListComp) or len(node.generators) != 1 or (
      not _pairs(node.elt)) or not _pairs(node.generators[0].target):
    return None
  tests = [part for each in node.generators[0].ifs for part in (
      each.values if isinstance(each, ast.BoolOp) and isinstance(
          each.op, ast.And) else [each])]
  found = [test for test in map(_name_test, tests) if test is not None]
  return found[0] if len(found) == 1 else None


def _pairs(node: ast.AST) -> bool:
  """Whether `node` is a pair (`(g, v)`, `grad, var`)."""
  return isinstance(node, ast.Tuple) and len(node.elts) == 2


def _name_test(node: ast.expr) -> Optional[_Test]:
  """`x.name.startswith('p')`, `'p' in x.name`, or their negations."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
    inner = _name_test(node.operand)
    return None if inner is None else (not inner[0], inner[1], inner[2])
  if isinstance(node, ast.Call) and _names.call_name(node) == "startswith" \
      and isinstance(node.func, ast.Attribute) and _reads_name(
          node.func.value) and len(node.args) == 1 and isinstance(
              node.args[0], ast.Constant) and isinstance(
                  node.args[0].value, str) and not node.keywords:
    return True, "prefix", node.args[0].value
  if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
      node.ops[0], (ast.In, ast.NotIn)) and isinstance(
          node.left, ast.Constant) and isinstance(
              node.left.value, str) and _reads_name(node.comparators[0]):
    return isinstance(node.ops[0], ast.In), "part", node.left.value
  return None


def _reads_name(node: ast.AST) -> bool:
  """Whether `node` is a variable's name (`v.name`, `v.op.name`)."""
  return isinstance(node, ast.Attribute) and node.attr == "name"


def _together(one: _Test, other: _Test) -> bool:
  """Whether every name `one` drops, `other` keeps: `one` keeps names
  without a text, `other` those with a text that each of them holds in
  the same way (a shorter prefix, a part of it)."""
  kept, kind, text = one
  other_kept, other_kind, other_text = other
  if kept or not other_kept or not text:
    return False
  if other_kind == "prefix":
    return kind == "prefix" and text.startswith(other_text)
  return other_text in text
