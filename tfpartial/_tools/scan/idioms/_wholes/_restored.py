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
from typing import Dict, List, Optional, Set, Tuple

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


def restores_scopes(text: str, tree: Optional[ast.AST], kept: Set[str]
                    ) -> bool:
  r"""Whether the module restores, through a `Saver` it builds and calls
  `restore` on, a list of literal scopes of which none is one of `kept`
  (`self.encoder_variables = tf.get_collection(GLOBAL_VARIABLES,
  scope='densenet161')`, `tf.train.Saver(self.encoder_variables)` beside
  a decoder built under `'lstm'`), and a block opening a scope of `kept`
  reads what the function assigning that list built (`self.features`,
  read by the decoder): the model's pretrained part, which a step
  training only `kept` leaves fixed. Not a teacher restored beside its
  student, whose output only the loss reads. A list whose scopes the
  module does not write as literals says nothing.

  >>> code = ("def build(self):\n"
  ...         "  feats = encoder(x)\n"
  ...         "  enc = tf.get_collection('variables', scope='enc')\n"
  ...         "  with tf.variable_scope('dec'):\n"
  ...         "    y = dense(feats)\n"
  ...         "  saver = tf.train.Saver(enc)\n"
  ...         "  saver.restore(sess, path)")
  >>> restores_scopes(code, ast.parse(code), {'dec'})
  True
  >>> restores_scopes(code, ast.parse(code), {'enc'})
  False
  """
  if tree is None or "Saver(" not in text or ".restore(" not in text:
    return False
  values, homes, savers, restored = _assignments(tree)
  for name, saved in savers.items():
    read = _names.dotted(saved)
    if name not in restored or not read:
      continue
    # Not the empty list or None the constructor starts it as.
    chosen = [v for v in values.get(read, []) if not _empty(v)]
    roots = {r for value in chosen for r in _scope_roots(value)}
    if len(chosen) == 1 and roots and not roots & kept and _fed(
        tree, kept, homes.get(read, [])):
      return True
  return False


def _assignments(tree: ast.AST) -> Tuple[
    Dict[str, List[ast.AST]], Dict[str, List[ast.AST]], Dict[str, ast.AST],
    Set[str]]:
  """The module's assigned values by name, the functions assigning each
  name, its `Saver`s' lists by the name each is kept in, and the names
  `restore` is called on."""
  values: Dict[str, List[ast.AST]] = {}
  homes: Dict[str, List[ast.AST]] = {}  # The functions assigning a name.
  savers: Dict[str, ast.AST] = {}
  restored: Set[str] = set()
  for function in ast.walk(tree):
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      for node in ast.walk(function):
        for target in getattr(node, "targets", ()):
          homes.setdefault(_names.dotted(target) or "", []).append(function)
  for node in ast.walk(tree):
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
      target = _names.dotted(node.targets[0])
      if target and isinstance(node.value, ast.Call) and (
          _names.call_name(node.value) == "Saver"):
        listed = node.value.args[0] if node.value.args else next(
            (k.value for k in node.value.keywords if k.arg == "var_list"),
            None)
        if listed is not None:
          savers[target] = listed
      elif target:
        values.setdefault(target, []).append(node.value)
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "restore":
      receiver = _names.dotted(node.func.value)
      if receiver:
        restored.add(receiver)
  return values, homes, savers, restored


def _empty(value: ast.AST) -> bool:
  """`[]`, `()` or `None`."""
  return isinstance(value, (ast.List, ast.Tuple)) and not value.elts or (
      isinstance(value, ast.Constant) and value.value is None)


def _fed(tree: ast.AST, kept: Set[str], builders: List[ast.AST]) -> bool:
  """Whether a block opening a scope of `kept` reads a name (or a local
  set from an attribute) that one of `builders` assigns: the output of
  the part those functions build and list."""
  inside = {_names.dotted(t) for b in ast.walk(tree)
            if isinstance(b, ast.With) and _opens(b, kept)
            for n in ast.walk(b) for t in getattr(n, "targets", ())}
  built = {_names.dotted(t) for b in builders for n in ast.walk(b)
           for t in getattr(n, "targets", ())} - inside - {None}
  for function in ast.walk(tree):
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    local = built if function in builders else set()
    aliases = {t.id for n in ast.walk(function) if isinstance(n, ast.Assign)
               and _names.dotted(n.value) in built for t in n.targets
               if isinstance(t, ast.Name)}
    for block in ast.walk(function):
      if isinstance(block, ast.With) and _opens(block, kept) and any(
          isinstance(n, (ast.Name, ast.Attribute)) and isinstance(
              n.ctx, ast.Load) and (_names.dotted(n) in local or (
                  _names.dotted(n) or "").startswith("self.") and (
                      _names.dotted(n) in built) or (
                          isinstance(n, ast.Name) and n.id in aliases))
          for s in block.body for n in ast.walk(s)):
        return True
  return False


def _opens(block: ast.With, kept: Set[str]) -> bool:
  """`with tf.variable_scope('lstm'):` for a root of `kept`."""
  return any(isinstance(i.context_expr, ast.Call) and i.context_expr.args
             and _names.call_name(i.context_expr) in _names.TF_SCOPES
             and isinstance(i.context_expr.args[0], ast.Constant) and str(
                 i.context_expr.args[0].value).strip("/").split("/")[0] in (
                     kept) for i in block.items)


def _scope_roots(value: ast.AST) -> Set[str]:
  """The first part of the literal scope a variable-list call selects
  by (`get_collection(key, scope='densenet161/')`), if it names one."""
  chosen = _names.scope_argument(value) if isinstance(
      value, ast.Call) else None
  if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str) and (
      chosen.value.strip("/")):
    return {chosen.value.strip("/").split("/")[0]}
  return set()
