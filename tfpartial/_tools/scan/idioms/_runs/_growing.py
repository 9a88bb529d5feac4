"""Gradual unfreezing: a step in a loop trains the layers a slice with
one bound on the loop's variable chooses (`for epoch in range(n): ...
[w for layer in model.layers[-epoch - 1:] ...]`, ULMFiT's schedule). The
slice grows by one layer each time round, so the loop's variable does
not choose one group after another (every group trained in turn): until
the last round, the bottom layers stay frozen."""

from __future__ import annotations

import ast
from typing import Counter, Set

from tfpartial._tools.scan import _scopes


def growing_names(node: ast.AST) -> Set[str]:
  """The names read only in slices with one bound (`layers[-epoch-1:]`,
  `layers[:k]`) in `node`; a window (`[i:i + 1]`) or a step is not one."""
  inside: Counter[str] = Counter()
  for each in _scopes.walk(node):
    if not isinstance(each, ast.Slice) or each.step is not None:
      continue
    bound = each.lower or each.upper
    if bound is not None and (each.lower is None) != (each.upper is None):
      inside.update(n.id for n in _scopes.walk(bound)
                    if isinstance(n, ast.Name))
  # A name also read outside the bound chooses a group there.
  everywhere = Counter(n.id for n in _scopes.walk(node)
                       if isinstance(n, ast.Name) and n.id in inside)
  return {name for name, count in inside.items()
          if everywhere[name] == count}
