"""Whether a module warm-starts other scopes of its graph from a
checkpoint (`tf.train.init_from_checkpoint(ckpt, {'resnet/':
'resnet/'})`): a step that trains only a scope of its own (`scope=
'bias_opt'`) trains it on top of the restored part, which keeps its
pretrained values: a freeze, not one whole model among others. The
restored scopes are read from literal names only; a restore of the scope
the step trains (resuming it) restores no other part. The model's own
file may hold the warm start: a module that opens the scope the step
keeps (`with tf.variable_scope("NetworkHead"):`) beside a restored
`CNN_block/` counts as the step's own. Part of `var-list-filter`."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._wholes import _restored

# Calls that load a checkpoint's values into variables chosen by scope.
_WARM_STARTS = ("init_from_checkpoint", "assign_from_checkpoint",
                "assign_from_checkpoint_fn", "WarmStartSettings")
# Their arguments that choose what is restored (not the checkpoint's path).
_CHOICES = {"assignment_map", "var_list", "vars_to_warm_start"}
# A `Saver` restoring a part of the graph (`_restored.restores_scopes`).
_SAVED = ("Saver(",)
_ROOT = re.compile(r"[A-Za-z_][\w\-]*")


def restores_other_scopes(text: str, tree: Optional[ast.AST],
                          chosen: ast.AST) -> bool:
  """Whether the module warm-starts literal scopes of which none is one
  the filter `chosen` names (`'bias_opt'` trained, `'resnet/'`
  restored)."""
  return _restores_other(_warm_roots(text, tree), chosen)


def _restores_other(restored: Set[str], chosen: ast.AST) -> bool:
  """Whether `restored`, the scopes a module warm-starts, holds some
  and none the filter `chosen` names."""
  if not restored:
    return False
  trained = _roots(chosen)
  return bool(trained) and not restored & trained


def _warm_roots(text: str, tree: Optional[ast.AST]) -> Set[str]:
  """The literal scopes a module warm-starts (`{'resnet/': ...}`:
  `resnet`)."""
  restored: Set[str] = set()
  if tree is None or not any(name in text for name in _WARM_STARTS):
    return restored
  for node in ast.walk(tree):
    if isinstance(node, ast.Call) and (
        _names.call_name(node) in _WARM_STARTS):
      for arg in [*node.args[1:], *(
          k.value for k in node.keywords if k.arg in _CHOICES)]:
        restored |= _roots(arg)
  return restored


def restores_beside(analysis: Analysis, module: object,
                    chosen: ast.AST) -> bool:
  """`restores_other_scopes` in the step's `module`, or in a module of
  the project that opens one of the scopes `chosen` keeps (the model's
  file, however the step reaches its model); there also a `Saver` over
  other scopes that the file restores (`_restored.restores_scopes`: an
  encoder restored in the model's `init_fn`). The modules opening each
  scope are indexed once per analysis (`_Opened`), and what each module
  warm-starts is read once: each step of a project asks."""
  project = analysis.project
  kept = _roots(chosen)
  opened = analysis.once("warm:opened", lambda: _Opened(project.modules))
  assert isinstance(opened, _Opened)
  for other in opened.beside(module, kept):
    text = other.source.text
    beside = other is not module
    tree = other.tree if project.parsed(other) is not None else None
    restored = analysis.once(f"warm:roots {id(other)}", lambda: (
        _warm_roots(text, tree)))
    assert isinstance(restored, set)
    if _restores_other(restored, chosen) or beside and (
        _restores_scopes(analysis, other, text, tree, kept)):
      return True
  return False


class _Opened:
  """The modules of a project by the literal scopes their text opens
  (`_scope("Head"` or `_scope('Head'`), read once."""

  def __init__(self, modules: List[_project.Module]):
    self._modules = modules
    self._positions = {id(m): p for p, m in enumerate(modules)}
    self._by_scope: Dict[str, Set[int]] = {}
    for position, module in enumerate(modules):
      text = module.source.text
      if not any(name in text for name in _WARM_STARTS + _SAVED):
        continue  # Only a module that restores something is asked.
      for opening in ('_scope("', "_scope('"):
        start = text.find(opening)
        while start >= 0:
          start += len(opening)
          end = text.find(opening[-1], start)
          if end < 0:
            break
          self._by_scope.setdefault(text[start:end], set()).add(position)
          start = text.find(opening, start)

  def beside(self, module: object, kept: Set[str]) -> List[_project.Module]:
    """`module` and the modules that restore something and open one of
    the scopes `kept`, in the project's order."""
    positions = {p for root in kept for p in self._by_scope.get(root, ())}
    if id(module) in self._positions:
      positions.add(self._positions[id(module)])
    return [self._modules[p] for p in sorted(positions)]


def _restores_scopes(analysis: Analysis, module: object, text: str,
                     tree: Optional[ast.AST], kept: Set[str]) -> bool:
  """`_restored.restores_scopes` of `module`, its facts read once per
  analysis and its answer once per set of kept scopes: each step of a
  project asks of the same model file."""
  if tree is None or "Saver(" not in text or ".restore(" not in text:
    return False
  memo = analysis.once("restored:scopes", dict)
  assert isinstance(memo, dict)
  key = (id(module), frozenset(kept))
  if key not in memo:
    facts = memo.get(id(module))
    if facts is None:
      facts = memo[id(module)] = _restored.Facts(tree)
    memo[key] = _restored.restores_scopes(facts, kept)
  return bool(memo[key])


def _roots(node: ast.AST) -> Set[str]:
  """The first parts of the scope names written as literals in `node`
  (`{'resnet/': 'store_resnet/'}`: `resnet`, `store_resnet`)."""
  found: Set[str] = set()
  for each in _scopes.walk(node):
    if isinstance(each, ast.Constant) and isinstance(each.value, str):
      root = each.value.strip("/").split("/")[0]
      if _ROOT.fullmatch(root):
        found.add(root)
  return found
