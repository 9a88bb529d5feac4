"""Whether another function's step is an alternative to a filtered step,
not the other half of a model: it trains every variable of the graph
(`create_optimizer` fine-tunes the whole model) while the filtered step
leaves variables out by their names (`'bert' not in v.name`:
`create_optimizer_v10` fine-tunes what was added on top). A GAN's or an
actor-critic's halves each train a list of their own; no half trains
every variable. A filter by slice (TensorLayer's `ReconLayer`,
`all_params[-4:]`, beside a library's other model) is still taken for
one of two groups. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels

# The whole graph's lists (not a model's `model.trainable_variables()`).
_WHOLE = {"trainable_variables", "global_variables", "all_variables"}
# How code spells TensorFlow's modules before them.
_MODULES = {"tf", "tf1", "v1", "compat", "tensorflow"}


def whole_elsewhere(filtered: Optional[ast.AST], scope: _scopes.Scope,
                    other_labels: Labels, other_scope: _scopes.Scope
                    ) -> bool:
  """Whether a step of another function (`other_scope`, its list's
  labels `other_labels`) trains every variable of the graph beside a
  step of `scope` whose filter `filtered` tests names against literals."""
  return other_scope is not scope and "filtered" not in other_labels and (
      _every_variable(other_labels.get("var"))) and filtered is not None and (
          _by_name(filtered))


def model_elsewhere(labels: Labels, scope: _scopes.Scope,
                    other_labels: Labels, other_scope: _scopes.Scope) -> bool:
  """Whether a step of another function trains the whole of a model
  (`model.trainable_variables`) beside a step of `scope` training a
  model's own accessor of some of its parts (`model.prompt_tune_
  variables()`, `_own_subset`): the same model's whole is pretraining or
  a full fine-tune, an alternative; another model the first does not
  build as a part is a model of its own. Neither is the other half of a
  pair."""
  owner, other = labels.get("owner"), other_labels.get("owner")
  return other_scope is not scope and isinstance(owner, ast.ClassDef) and (
      "filtered" in labels) and "filtered" not in other_labels and (
          isinstance(other, ast.ClassDef)) and (other is owner or not any(
              isinstance(n, ast.Call) and _names.call_name(n) == other.name
              for n in ast.walk(owner)))


def cut_elsewhere(filtered: Optional[ast.AST], scope: _scopes.Scope,
                  other_labels: Labels, other_scope: _scopes.Scope) -> bool:
  """Whether a step of another function trains the very list a filtered
  step's list is cut from, by two slices that leave entries out between
  them (`w[:k] + w[(k + 1):]` beside `w`: warm-up epochs keep `w[k]`
  fixed, then the whole trains). Not the other half of a pair: that
  half is the whole.

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> one, two = (_scopes.collect(ast.parse("pass")) for _ in range(2))
  >>> every = {"var": ast.parse("m.weights", mode="eval").body}
  >>> cut = ast.parse("m.weights[:k] + m.weights[(k + 1):]", mode="eval")
  >>> cut_elsewhere(cut.body, one, every, two)
  True
  >>> met = ast.parse("m.weights[:k] + m.weights[k:]", mode="eval")
  >>> cut_elsewhere(met.body, one, every, two)
  False
  """
  whole = other_labels.get("var")
  if other_scope is scope or "filtered" in other_labels or not isinstance(
      whole, ast.expr) or not isinstance(filtered, ast.BinOp) or (
          not isinstance(filtered.op, ast.Add)):
    return False
  head, tail = filtered.left, filtered.right
  if not all(isinstance(side, ast.Subscript) and isinstance(
      side.slice, ast.Slice) and side.slice.step is None and (
          ast.unparse(side.value) == ast.unparse(whole))
             for side in (head, tail)):
    return False
  assert isinstance(head, ast.Subscript) and isinstance(tail, ast.Subscript)
  first, second = head.slice, tail.slice
  assert isinstance(first, ast.Slice) and isinstance(second, ast.Slice)
  return first.lower is None and second.upper is None and (
      first.upper is not None and second.lower is not None) and (
          ast.unparse(first.upper) != ast.unparse(second.lower))


def _every_variable(chosen: Optional[ast.AST]) -> bool:
  """Whether a list is `tf.trainable_variables()` or the like, whole."""
  if not isinstance(chosen, ast.Call) or chosen.args or chosen.keywords or (
      _names.call_name(chosen) not in _WHOLE):
    return False
  receiver = chosen.func.value if isinstance(chosen.func, ast.Attribute) \
      else None
  return receiver is None or (_names.dotted(receiver) or "").split(".")[
      0] in _MODULES


def _by_name(filtered: ast.AST) -> bool:
  """Whether a filter compares names with a string literal (`'bert' in
  v.name`, `v.name.startswith('head')`)."""
  for node in _scopes.walk(filtered):
    if isinstance(node, ast.Compare) and any(
        isinstance(part, ast.Constant) and isinstance(part.value, str)
        for part in [node.left, *node.comparators]):
      return True
    if isinstance(node, ast.Call) and _names.call_name(node) in {
        "startswith", "endswith"} and any(
            isinstance(a, ast.Constant) and isinstance(a.value, str)
            for a in node.args):
      return True
  return False
