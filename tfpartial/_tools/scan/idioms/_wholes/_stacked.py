"""A step training one part of an object (`self.G.vars`) that is built on
the output of another part (`self.G = Refiner(self.pretrained.G.tensor_out)`)
whose variables the code names (`self.pretrained.G.vars`) but no step of
the method trains beside it, only one in the other arm of a flag's `if`
(joint training): the part below, a pretrained first stage, is left out.
A GAN's discriminator, built on its generator's output, is not: the
generator has its own step; nor a part built on a tensor of an object
whose variables the code never names (a data pipeline's `self.data.z`).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _arms


def below(scope: _scopes.Scope, call: ast.Call, chosen: ast.AST,
          lists: List[Tuple[ast.Call, Optional[ast.AST]]], text: str) -> bool:
  """Whether `call` (a step of `scope`, a method) trains `self.X.vars`,
  `X` built in `scope` on another part's output that no other of
  `lists` (the method's steps, each with its list) trains where it may
  run beside `call`; `text` is the module's."""
  if not isinstance(chosen, ast.Attribute) or scope.cls is None:
    return False
  owner = _names.dotted(chosen.value) or ""
  if not owner.startswith("self.") or owner.count(".") != 1:
    return False
  upstream = _built_on(scope, owner)
  if not upstream or f"{upstream}.{chosen.attr}" not in text:
    return False  # Not a part whose variables the code names.
  at = _idiom.position(call)
  return not any(
      other is not call and each is not None and upstream in {
          _names.dotted(n) for n in ast.walk(each)} and not _arms.apart(
              scope, at, _idiom.position(other))
      for other, each in lists)


def _built_on(scope: _scopes.Scope, owner: str) -> str:
  """The other part whose output `owner` is built on, there
  (`self.pretrained.G` of `self.G = Refiner(self.pretrained.G.out)`)."""
  return scope.once((_parts_built_on, None, 0),
                    lambda: _parts_built_on(scope)).get(owner, "")


def _parts_built_on(scope: _scopes.Scope) -> Dict[str, str]:
  """`_built_on` of every part the scope builds, read once per scope
  (each step of it asks): the first assignment building it on another."""
  found: Dict[str, str] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.value, ast.Call)) and node.value.args:
      owner = _names.dotted(node.targets[0])
      first = node.value.args[0]
      part = _names.dotted(first.value) if isinstance(
          first, ast.Attribute) else None
      if owner and part and part.startswith("self.") and part != owner:
        found.setdefault(owner, part)
  return found
