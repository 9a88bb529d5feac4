"""The labels the flow gives an expression (see `_flow`), and their union."""

from __future__ import annotations

import ast
from typing import Dict, Iterable

Labels = Dict[str, ast.AST]


def union(parts: Iterable[Labels]) -> Labels:
  """Every kind in any of `parts`, at the first node it arose.

  >>> sorted(union([{"grad": ast.Pass()}, {"mask": ast.Pass()}]))
  ['grad', 'mask']
  """
  merged: Labels = {}
  for part in parts:
    for kind, node in part.items():
      merged.setdefault(kind, node)
  return merged
