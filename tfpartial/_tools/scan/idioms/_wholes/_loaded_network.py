"""Networks given to a loader of saved arrays that no step's list keeps:
a network built in a `with tf.variable_scope("content_extractor")` block
of its own (or returned by the function that builds it there) and handed
to `tl.files.load_and_assign_npz(..., network=self.net_upscale)` holds
pretrained values; when a later block of the same function, opening
another scope, reads what it made, that block builds on it (SRNTT's
texture transfer on its content extractor). Part of `_restored_group`."""

from __future__ import annotations

import ast
from typing import Dict, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _built_outside

# Searches bounded: blocks and statements of one function followed.
_BOUND = 2000
# What puts arrays saved to disk into a network's variables (TensorLayer).
_LOADERS = {"load_and_assign_npz", "load_and_assign_npz_dict",
            "assign_params"}


def kept_out(tree: ast.Module, kept: Set[str]) -> Set[str]:
  """The root scopes of the networks the module loads that no kept scope
  name keeps: TensorFlow's scope filter is `re.match`, from the start of
  the name, so `extractor` keeps nothing of `content_extractor`, and an
  empty name keeps nothing out.

  >>> tree = ast.parse(
  ...     "def build(s, p, x):\\n"
  ...     "  with tf.variable_scope('content_extractor'):\\n"
  ...     "    net = f(x)\\n"
  ...     "  tl.files.load_and_assign_npz(s, p, network=net)\\n")
  >>> sorted(kept_out(tree, {"extractor"}))
  ['content_extractor']
  >>> sorted(kept_out(tree, {"content"}))
  []
  >>> sorted(kept_out(tree, {""}))
  ['content_extractor']
  """
  return {scope for scope in _networks_loaded(tree) if not any(
      name and scope.startswith(name) for name in kept)}


def _networks_loaded(tree: ast.Module) -> Set[str]:
  """The root scopes of the networks the module gives a loader of saved
  arrays (`tl.files.load_and_assign_npz(sess, path, network=self.net)`),
  each made in a `with tf.variable_scope("content_extractor")` block
  where it is assigned, or of the function whose result it is (`self.net,
  self.sr = self.model(x)`, `model` returning `net, sr` made there)."""
  # Every definition: methods of one name in several classes all count.
  functions: Dict[str, List[ast.AST]] = {}
  for node in _scopes.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      functions.setdefault(node.name, []).append(node)
  given = {name for call in _scopes.walk(tree) if isinstance(
      call, ast.Call) and _names.call_name(call) in _LOADERS
           for value in [k.value for k in call.keywords
                         if k.arg == "network"] or call.args[2:3]
           for name in [_names.dotted(value)] if name}
  found: Set[str] = set()
  for name in sorted(given):
    for function in (f for same in functions.values() for f in same):
      found |= _made_in(function, name, functions, 1)
  return found


def _made_in(function: ast.AST, name: str,
             functions: Dict[str, List[ast.AST]], depth: int) -> Set[str]:
  """The root scopes of the literal `with` blocks of `function` that
  assign `name`, or, `depth` calls deep, those making what a call of the
  module's functions returns at its place in the targets."""
  blocks = [(w, name.strip("/").split("/")[0])
            for w in _scopes.walk(function) if isinstance(w, ast.With)
            for name in [_opened_scopes.literal(w.items[0].context_expr)]
            if name is not None]
  found: Set[str] = set()
  for node in ast.walk(function):
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
      continue
    target = node.targets[0]
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [
        target]
    places = [i for i, e in enumerate(elements) if _names.dotted(e) == name]
    if not places:
      continue
    around = [root for w, root in blocks if _within(node, w)]
    found |= set(around[:1])
    callees = functions.get(_names.call_name(node.value) or "", []) if (
        isinstance(node.value, ast.Call) and depth and not around) else []
    for callee in callees:
      for back in ast.walk(callee):
        if isinstance(back, ast.Return) and back.value is not None:
          value = back.value.elts[places[0]] if isinstance(
              back.value, ast.Tuple) and isinstance(target, ast.Tuple) and (
                  len(back.value.elts) == len(elements)) else back.value
          made = _names.dotted(value)
          if made:
            found |= _made_in(callee, made, functions, depth - 1)
  return found


def _within(node: ast.AST, block: ast.With) -> bool:
  return block.lineno <= getattr(node, "lineno", 0) <= (
      block.end_lineno or block.lineno)


def fed_in_place(tree: ast.Module, left: Set[str]) -> Set[str]:
  """The root scopes of the literal `with` blocks that read, in the same
  function, what a block opening a scope of `left` assigned before them,
  before assigning that name themselves (SRNTT's `texture_transfer`
  block on `content_feature` of the `content_extractor` block)."""
  found: Set[str] = set()
  if not left:
    return found
  for function in ast.walk(tree):
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    made: Set[str] = set()
    blocks = sorted((w for w in ast.walk(function) if isinstance(
        w, ast.With) and _opened_scopes.literal(
            w.items[0].context_expr) is not None),
                    key=lambda w: (w.lineno, w.col_offset))
    for block in blocks[:_BOUND]:
      root = getattr(block.items[0].context_expr, "args")[0].value.strip(
          "/").split("/")[0]
      statements = sorted((n for n in ast.walk(block) if isinstance(
          n, ast.Assign)), key=lambda n: (n.lineno, n.col_offset))[:_BOUND]
      if root in left:
        made |= {t for n in statements for t in _built_outside.targets(n)}
        continue
      own: Set[str] = set()
      for statement in statements:
        if _read(statement.value) - own & made:
          found.add(root)
          break
        own |= _built_outside.targets(statement)
  return found


def _read(node: ast.AST) -> Set[str]:
  """The names and `self.` attributes a statement's value reads."""
  return {name for n in ast.walk(node)
          if isinstance(n, (ast.Name, ast.Attribute))
          for name in [_names.dotted(n)] if name}
