"""A step whose hand-written list picks items of one container by fixed
indices (`(model.embeds[1].logit, model.embeds[3].logit)`: two of the
per-language embedding tables) while the model reads the container's
items by a variable index (`self.embeds[sid]`) or loops over them: the
items not picked are in the model, and left out. A gap in the indices
(1 and 3 leave 0 and 2), or a literal container longer than the picks,
shows they exist; picking every item from the first on leaves nothing
out, and another step training items of the same container (a GAN's
halves picked from one list) trains the rest.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def left_out(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call,
             analysis: Analysis,
             steps: Callable[[], List[Tuple[ast.Call, Optional[ast.AST]]]]
             ) -> bool:
  """Whether the list `chosen` of the step `call` picks some items of
  one container by index, leaving out others the model reads (`steps`:
  the steps of the module, each with its list)."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  found = _picks(chosen)
  if found is None:
    return False
  container, picked = found
  defs = scope.defs.get(container, []) if container.isidentifier() else []
  size = len(defs[0].value.elts) if len(defs) == 1 and isinstance(
      defs[0].value, (ast.List, ast.Tuple)) else max(picked)
  if not set(range(size)) - picked:
    return False
  attribute = container.rsplit(".", 1)[-1]
  if any(each is not call and attribute in _words(other)
         for each, other in steps() if other is not None):
    return False  # Another step trains items of it too.
  read = re.compile(r"\b" + re.escape(attribute) + r"\s*\[\s*[A-Za-z_]|"
                    r"\bin\s+[\w.]*\b" + re.escape(attribute) + r"\b")
  return any(read.search(module.source.text)
             for module in analysis.project.all_modules_with([attribute]))


def _picks(chosen: ast.AST) -> Optional[Tuple[str, Set[int]]]:
  """The container and the indices a list or tuple picks, each item
  `container[k]` or an attribute of it (`container[k].logit`)."""
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts:
    return None
  containers: Set[str] = set()
  picked: Set[int] = set()
  for element in chosen.elts:
    while isinstance(element, ast.Attribute):
      element = element.value
    if not isinstance(element, ast.Subscript):
      return None
    index, container = element.slice, _names.dotted(element.value)
    if not isinstance(index, ast.Constant) or type(index.value) is not int \
        or index.value < 0 or not container:
      return None
    containers.add(container)
    picked.add(index.value)
  return (containers.pop(), picked) if len(containers) == 1 else None


def _words(node: ast.AST) -> Set[str]:
  """The names and attributes a list is written with."""
  return {n.id if isinstance(n, ast.Name) else n.attr
          for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))}
