"""Whether a module restores part of its graph from a checkpoint: a
`Saver` built over a list of variables (`tf.train.Saver(var_list=
classifier_params)`) whose `restore` the module calls. A step that trains
only the scope of one model built in that graph (`startswith('sampler')`)
trains it in front of, or on top of, the restored part, which stays at
its pretrained values: a freeze, not one whole model among others. A
`Saver(tf.global_variables())` restores the whole graph (a run resumed
or a model reloaded whole), no part of it."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names


def restores_a_part(text: str, tree: Optional[ast.AST],
                    trained: Optional[ast.AST]) -> bool:
  """Whether the module calls `restore` on a `Saver` it builds over a
  list of variables other than the list the step trains (`trained`; a
  `Saver(gen_vars)` that resumes what it trains restores no other part)."""
  if tree is None or "Saver(" not in text or ".restore(" not in text:
    return False
  savers: Set[str] = set()
  restored: Set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
        and _names.call_name(node.value) == "Saver":
      listed = node.value.args[0] if node.value.args else next(
          (k.value for k in node.value.keywords if k.arg == "var_list"),
          None)
      if listed is not None and not _every(listed) and (
          trained is None or ast.unparse(listed) != ast.unparse(trained)):
        savers.update(n for n in map(_names.dotted, node.targets) if n)
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "restore":
      receiver = _names.dotted(node.func.value)
      if receiver:
        restored.add(receiver)
  return bool(savers & restored)


# Calls that list every variable of the graph (no scope given).
_EVERY = frozenset({"global_variables", "all_variables",
                    "trainable_variables", "model_variables"})


def _every(listed: ast.AST) -> bool:
  """Whether a Saver's list is every variable of the graph
  (`tf.global_variables()`, no scope)."""
  return isinstance(listed, ast.Call) and _names.call_name(
      listed) in _EVERY and not listed.args and not listed.keywords
