"""Whether a later stage inverts the earlier one: its loss compares what
the trained network makes with data that also made its input
(`mean(square(encoder(generator(z)) - z))`). The earlier network only
makes the later one's training pairs (`(G(z), z)`, zsdonghao's
Unsup-Im2Im encoder on a fixed generator): a second model, not a part
of the trained one left out. A loss against data of its own (real
images, labels) keeps the earlier stage in the model's forward path."""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, List, Set, Tuple

from tfpartial._tools.scan import _names

# What makes data where a model reads it.
_DATA = {"placeholder", "placeholder_with_default", "get_next"}
# Searches bounded: a loss reads at most this many values.
_BOUND = 400


def inverts(loss: ast.expr, trains: Callable[[ast.Call], bool],
            fed: Iterable[ast.AST],
            defs: Dict[str, List[Tuple[ast.expr, int]]]) -> bool:
  """Whether `loss` reads, apart from the calls that run the trained
  network (`trains`), a name of data that is also among what that
  network's input is computed from (`fed`, in the names' assignments
  `defs`)."""
  targets = _data_names(reads_apart(loss, trains, defs), defs)
  return bool(targets) and any(
      isinstance(node, ast.Name) and node.id in targets for node in fed)


def reads_apart(loss: ast.AST, trains: Callable[[ast.Call], bool],
                defs: Dict[str, List[Tuple[ast.expr, int]]]) -> Set[str]:
  """The names `loss` reads through the assignments of its names, never
  entering a call that runs the trained network."""
  names: Set[str] = set()
  todo: List[ast.AST] = [loss]
  while todo and len(names) < _BOUND:
    node = todo.pop()
    if isinstance(node, ast.Call) and trains(node):
      continue
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
      if node.id in names:
        continue
      names.add(node.id)
      todo.extend(value for value, _ in defs.get(node.id, []))
      continue
    todo.extend(ast.iter_child_nodes(node))
  return names


def _data_names(names: Set[str],
                defs: Dict[str, List[Tuple[ast.expr, int]]]) -> Set[str]:
  """The names, of `names`, every assignment of which is data."""
  return {name for name in names if defs.get(name) and all(
      isinstance(value, ast.Call) and _names.call_name(value) in _DATA
      for value, _ in defs[name])}
