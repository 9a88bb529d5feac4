"""Two losses fine-tuning one part of a model they share: every filter
of a function keeps the same literal name (`'fc' in var.name and 'fc6_2'
not in var.name` for the action loss, `'fc' in var.name and 'fc6_1' not
in var.name` for the score loss), and the same function builds layers
under scopes that name lacks (`slim.convolution(..., scope='conv1')`):
neither loss trains them, so the steps are not a GAN's or an
actor-critic's halves that train everything between them, but one
online fine-tune of the head on a fixed feature extractor. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names

# Layer makers that build variables under the `scope=` they are given.
_LAYERS = {"convolution", "conv2d", "conv1d", "conv3d", "conv2d_transpose",
           "separable_conv2d", "depthwise_conv2d", "fully_connected",
           "linear", "batch_norm", "convolution2d", "conv2d_in_plane"}


def left_out_by_both(mine: object, other: object,
                     function: Optional[ast.AST]) -> bool:
  """Whether the filters `mine` and `other` (comprehensions over the
  variables) both keep a literal name by `'x' in v.name` and `function`
  builds a layer under a literal scope holding it and one under a scope
  without it (what neither step trains).

  >>> f = ast.parse("def build(x):\\n"
  ...     "  net = slim.conv2d(x, 9, 3, scope='conv1')\\n"
  ...     "  net = slim.conv2d(net, 9, 3, scope='fc4')").body[0]
  >>> a = ast.parse("[v for v in vs if 'fc' in v.name and 'fc6' not in "
  ...               "v.name]").body[0].value
  >>> b = ast.parse("[v for v in vs if 'fc' in v.name]").body[0].value
  >>> left_out_by_both(a, b, f)
  True
  >>> c = ast.parse("[v for v in vs if 'conv' in v.name]").body[0].value
  >>> left_out_by_both(a, c, f)
  False
  """
  if function is None:
    return False
  shared = _kept(mine) & _kept(other)
  if not shared:
    return False
  built = _built_scopes(function)
  return any(any(name in s for s in built) and any(
      name not in s for s in built) for name in shared)


def _kept(node: object) -> Set[str]:
  """The literals a comprehension's conditions require in a name, by
  `'x' in v.name` conjuncts of its one condition (an `or` keeps more)."""
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(
      node.generators) != 1 or len(node.generators[0].ifs) != 1:
    return set()
  test = node.generators[0].ifs[0]
  parts = test.values if isinstance(test, ast.BoolOp) and isinstance(
      test.op, ast.And) else [test]
  return {p.left.value for p in parts if isinstance(p, ast.Compare) and len(
      p.ops) == 1 and isinstance(p.ops[0], ast.In) and isinstance(
          p.left, ast.Constant) and isinstance(p.left.value, str)
          and p.left.value}


def _built_scopes(function: ast.AST) -> Set[str]:
  """The literal scopes layers are built under in `function`, with the
  literal `variable_scope`s open around them (`with tf.variable_scope(
  'model'):` then `scope='gen1'`: `model/gen1`); not a pool's or a
  dropout's."""
  found: Set[str] = set()
  _walk(function, "", found)
  return found


def _walk(node: ast.AST, prefix: str, found: Set[str]) -> None:
  """Record the scopes of `node`'s layers under the open `prefix`."""
  for child in ast.iter_child_nodes(node):
    inner = prefix
    if isinstance(child, ast.With):
      for item in child.items:
        opened = _literal_scope(item.context_expr, {"variable_scope"})
        if opened is not None:
          found.add(prefix + opened)
          inner = prefix + opened + "/"
    elif isinstance(child, ast.Call):
      made = _literal_scope(child, _LAYERS)
      if made is not None:
        found.add(prefix + made)
    _walk(child, inner, found)


def _literal_scope(node: ast.AST, makers: Set[str]) -> Optional[str]:
  """The literal scope a layer maker's `scope=` or a `variable_scope`'s
  first argument names, or None."""
  if not isinstance(node, ast.Call) or _names.call_name(node) not in makers:
    return None
  chosen = node.args[0] if _names.call_name(node) == "variable_scope" and (
      node.args) else next((k.value for k in node.keywords
                            if k.arg == "scope"), None)
  if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
    return chosen.value
  return None
