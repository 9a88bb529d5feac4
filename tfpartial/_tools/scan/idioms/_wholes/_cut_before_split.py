"""Whether a split into halves leaves out a part before splitting: a
captioner trained adversarially takes the trainable variables less its
pretrained encoder (`vars_all = [v for v in tf.trainable_variables() if
v not in model.inception_variables]`) and splits only that list into the
generator and the discriminator (`d_vars = [v for v in vars_all if
'discr' in v.name]`, `g_vars = [... 'discr' not in v.name]`)
(Youngjung/im2txt). Between them the halves train everything but the
encoder: the cut, not the split, is the choice to leave it fixed. Only a
cut of the trainable variables, by a list chosen by scope or collection
that no step of the project trains and nothing assigns into: not a
target network left out and synced by hand (`t.assign(...)` over
`zip(model.target_variables, online)`), nor moving averages (`[v for v in
tf.global_variables() if v not in model.ema_variables]`). Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import Step

# Calls listing the trainable variables, the comprehension's source.
_TRAINABLE = frozenset({"trainable_variables", "get_trainable_variables",
                        "trainable_weights"})
# Calls choosing variables by scope or collection: the list left out
# (the variable lists that take a scope, as every other check reads them).
_SELECTIONS = frozenset(_names.SCOPE_ARGUMENT)
# Calls that write a variable's value by hand.
_WRITES = frozenset({"assign", "assign_add", "assign_sub"})
# Calls that train the list passed to them (beside the loss).
_TRAINS = frozenset({"minimize", "compute_gradients", "gradients",
                     "gradient", "create_train_op", "optimize_loss"})


def cut_before(analysis: Analysis, step: Step, others: List[Step]) -> bool:
  """Whether the step's list and the lists of `others` (the other half's
  steps) are each one comprehension over one list of the step's function,
  and that list is a comprehension over the trainable variables leaving
  out the members of a list (`v not in L`) that the project chooses by
  scope or collection and neither trains nor assigns into
  (`_left_fixed`)."""
  source = _drawn_from(step.var_list, step.scope)
  if source is None or not others or any(
      other.scope is not step.scope or _drawn_from(
          other.var_list, other.scope) != source for other in others):
    return False
  values = [d.value for d in step.scope.defs.get(source, ())]
  if len(values) != 1:
    return False
  left_out = _left_out(values[0])
  return left_out is not None and _left_fixed(analysis, left_out, step)


def _drawn_from(listed: Optional[ast.AST], scope: _scopes.Scope
                ) -> Optional[str]:
  """The local list that the one assignment of the name `listed` draws
  its items from (`[v for v in vars_all if ...]`: `vars_all`)."""
  if not isinstance(listed, ast.Name):
    return None
  values = [d.value for d in scope.defs.get(listed.id, ())]
  if len(values) != 1 or not isinstance(values[0], ast.ListComp) or len(
      values[0].generators) != 1:
    return None
  source = values[0].generators[0].iter
  return source.id if isinstance(source, ast.Name) and (
      source.id in scope.defs) else None


def _left_out(value: ast.AST) -> Optional[ast.expr]:
  """The one list a comprehension over the trainable variables
  (`tf.trainable_variables()`, the `TRAINABLE_VARIABLES` collection, a
  model's `trainable_variables`) leaves out by membership (`if v not in
  model.inception_variables`)."""
  if not isinstance(value, ast.ListComp) or len(value.generators) != 1:
    return None
  loop = value.generators[0]
  if not isinstance(loop.target, ast.Name) or not _trainables(loop.iter):
    return None
  found = [test.comparators[0] for condition in loop.ifs
           for test in _scopes.walk(condition)
           if isinstance(test, ast.Compare) and len(test.ops) == 1 and (
               isinstance(test.ops[0], ast.NotIn)) and isinstance(
                   test.left, ast.Name) and test.left.id == (
                       loop.target.id) and isinstance(
                           test.comparators[0], (ast.Name, ast.Attribute))]
  return found[0] if len(found) == 1 else None


def _trainables(node: ast.AST) -> bool:
  """`tf.trainable_variables()`, `tf.get_collection(tf.GraphKeys.
  TRAINABLE_VARIABLES)` or `model.trainable_variables`."""
  if isinstance(node, ast.Attribute):
    return node.attr in _TRAINABLE
  if not isinstance(node, ast.Call):
    return False
  name = _names.call_name(node)
  return name in _TRAINABLE or name in {
      "get_collection", "get_collection_ref"} and bool(node.args) and (
          "TRAINABLE_VARIABLES" in ast.unparse(node.args[0]) or (
              ast.unparse(node.args[0]) in {"'trainable_variables'",
                                            '"trainable_variables"'}))


def _left_fixed(analysis: Analysis, listed: ast.expr, step: Step) -> bool:
  """Whether every value the project gives the list `listed` (a local of
  the step's function, or an attribute `X.name` set anywhere) chooses
  variables by scope or collection, none of moving averages, and no code
  of the project trains it or writes its members (`_touched`)."""
  name = listed.attr if isinstance(listed, ast.Attribute) else None
  if isinstance(listed, ast.Name):
    values = [d.value for d in step.scope.defs.get(listed.id, ())]
  elif name is not None:
    values = _attribute_values(analysis, name)
  else:
    return False
  chosen = [v for v in values if not (
      isinstance(v, (ast.List, ast.Tuple)) and not v.elts or (
          isinstance(v, ast.Constant) and v.value is None))]
  return bool(chosen) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _SELECTIONS and (
          "MOVING_AVERAGE" not in ast.unparse(v)) for v in chosen) and not (
              _touched(analysis, name or ast.unparse(listed)))


def _attribute_values(analysis: Analysis, name: str) -> List[ast.expr]:
  """The values the project assigns to the attribute `name` (`self.x =
  v`), read once per analysis from the modules that spell it."""
  memo = analysis.once("cut-before-split:attributes", dict)
  assert isinstance(memo, dict)
  if name not in memo:
    memo[name] = [
        node.value for module in analysis.project.modules
        if f".{name}" in module.source.text and analysis.project.parsed(
            module) is not None and module.tree is not None
        for node in ast.walk(module.tree) if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Attribute) and t.attr == name
                for t in node.targets)]
  found: List[ast.expr] = memo[name]
  return found


def _touched(analysis: Analysis, name: str) -> bool:
  """Whether a loop or comprehension of the project over a list naming
  `name` writes values by hand (`t.assign(...)` for `t, s in
  zip(model.target_variables, online)`: a target network synced), or a
  step trains a list naming it (`var_list=model.enc_vars`)."""
  memo = analysis.once("cut-before-split:touched", dict)
  assert isinstance(memo, dict)
  if name not in memo:
    memo[name] = any(
        _touches(module.tree, name) for module in analysis.project.modules
        if name in module.source.text and analysis.project.parsed(
            module) is not None and module.tree is not None)
  return bool(memo[name])


def _touches(tree: ast.AST, name: str) -> bool:
  """`_touched` in one module."""
  for node in ast.walk(tree):
    if isinstance(node, (ast.For, ast.AsyncFor)):
      loops = [node.iter]
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp,
                           ast.DictComp)):
      loops = [g.iter for g in node.generators]
    else:
      loops = []
    if any(name in ast.unparse(loop) for loop in loops) and any(
        isinstance(n, ast.Call) and _names.call_name(n) in _WRITES
        for n in ast.walk(node)):
      return True
    if isinstance(node, ast.Call) and _names.call_name(node) in _TRAINS and (
        any(name in ast.unparse(a) for a in [*node.args[1:], *(
            k.value for k in node.keywords)])):
      return True
  return False
