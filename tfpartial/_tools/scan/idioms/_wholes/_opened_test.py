"""A comprehension that keeps the variables whose names start with, or
hold, a scope its function opens itself around what it builds (`with
tf.variable_scope(name): logits = self.get_logits_op(x)`, then `[v for v
in tf.trainable_variables() if v.name.startswith(name)]`, HazyResearch/
tanda's discriminator): the same list as `get_collection(
TRAINABLE_VARIABLES, scope=name)`, the whole network that function
builds (`_train_step._opened_here`), not a part of one. A test against a
literal, against two names, or negated, tells nothing here; nor does
a function that opens another variable scope beside the kept one (a
body built beside a head)."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import _opened_here


def keeps_opened(node: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `node` is a comprehension whose every test keeps names by
  one expression (`v.name.startswith(name)`, `name in v.name`) that
  `home` opens as a scope around what it builds."""
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
    return False
  tests = [t for g in node.generators for t in g.ifs]
  chosen = {ast.unparse(c) for c in (_chosen(t) for t in tests)
            if c is not None}
  if not tests or len(chosen) != 1 or any(_chosen(t) is None for t in tests):
    return False
  first = _chosen(tests[0])
  return isinstance(first, (ast.Name, ast.Attribute)) and _opened_here(
      first, home) and not _other_scopes(ast.unparse(first), home)


def _other_scopes(text: str, home: _scopes.Scope) -> bool:
  """Whether `home` opens a variable scope other than `text` outside
  every block it opens `text` in (a body built beside the kept head)."""
  opened = [(n, _opened_scopes.opened_on(i.context_expr, {
      "variable_scope"})) for n in home.nodes if isinstance(n, ast.With)
            for i in n.items]
  mine = [n for n, o in opened if o is not None and ast.unparse(o) == text]
  return any(o is not None and ast.unparse(o) != text and not any(
      m.lineno <= n.lineno <= (m.end_lineno or 0) for m in mine)
             for n, o in opened)


def _chosen(test: ast.AST) -> "ast.expr | None":
  """`name` of `v.name.startswith(name)` or `name in v.name`, else None."""
  if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and (
      test.func.attr == "startswith") and len(test.args) == 1 and (
          _a_name(test.func.value)):
    return test.args[0]
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.In) and _a_name(test.comparators[0]):
    return test.left
  return None


def _a_name(node: ast.AST) -> bool:
  """`v.name` (or `v.op.name`)."""
  return isinstance(node, ast.Attribute) and node.attr == "name"
