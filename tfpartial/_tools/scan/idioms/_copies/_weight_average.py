"""Whether a write sets a variable back to its own values read out after
the step (`read_after_step`), each entry made from itself: a WGAN's
critic clipped, or a stochastic weight average set once training is
over. What such an average may read where it stores an entry after the
step, beside the entry itself: the written model's weights as
they are then (`network.get_weights()[i]`) and counts, names bound only
to arithmetic of numbers, loop indices and settings (`swa_epoch =
cfg['epochs'] + 1 - cfg['swa_epochs']`). A name the stored value
subscripts or slices is no count (`head[:10]` of saved rows), nor an
entry of a dict of saved weights or of an `np.load`: those are values
kept from before the step."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._masks import _numbers

# Reads of a variable's values as they are when the read runs.
_READS = _names.SNAPSHOTS | {"get_value", "batch_get_value"}
# Calls that read settings from a file.
_CONFIG_READS = {"json.load", "json.loads", "yaml.load", "yaml.safe_load",
                 "toml.load", "tomllib.load"}
# Words of a call's dotted name that say it makes settings
# (`config.from_parsed_arguments(options)`, `parser.parse_args()`).
_CONFIG_WORDS = ("config", "conf", "cfg", "settings", "options", "hparams",
                 "parse_args")


def read_after_step(call: ast.Call, scope: _scopes.Scope,
                    value: ast.expr, copy: Optional[ast.AST],
                    step: object) -> bool:
  """Whether `value`, written by `call`, is a local name bound to `copy`
  (the variable read out) between `step` and the write, each element
  stored into it made from itself, the loops' indices, imported names,
  settings of `self`, and, where it is stored after `step`, the written
  model's weights read as they are then and counts (see
  `_weight_average`): never a value saved before the step."""
  if not isinstance(value, ast.Name) or not isinstance(
      copy, ast.AST) or not isinstance(step, ast.AST) or not (
          _idiom.position(step) < _idiom.position(copy) <
          _idiom.position(call)):
    return False
  own = value.id
  indices = {n.id for loop in scope.nodes if isinstance(
      loop, (ast.For, ast.AsyncFor)) for n in ast.walk(loop.target)
              if isinstance(n, ast.Name)}
  allowed = {own, *indices, *_scopes.imported_names(scope)}
  written = call.func.value if isinstance(call.func, ast.Attribute) else None
  for node in scope.nodes:
    if isinstance(node, (ast.Assign, ast.AugAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [
          node.target]
      if not any(isinstance(t, ast.Subscript) and _names.base_name(t) == own
                 for t in targets):
        continue
      # The written model's weights read again where the entry is stored,
      # after the step (a running average of its epochs): as they are now.
      now = read_now(
          node.value, written) if _idiom.position(
              step) < _idiom.position(node) else set()
      if not _from_itself(node.value, own, allowed | now | (
          counts(node.value, scope, indices))):
        return False
  return True


def _from_itself(stored: ast.AST, own: str, allowed: Set[str]) -> bool:
  """Whether `stored` reads `own` and no other local name but
  `allowed` (attributes of `self`, a clip value, are settings)."""
  read = {n.id for n in ast.walk(stored) if isinstance(n, ast.Name)}
  return own in read and read <= allowed | {"self"}


def read_now(stored: ast.AST, written: Optional[ast.expr]) -> Set[str]:
  """`{"network"}` when every read of the written model's name in
  `stored` is a read of its weights as they are (`network.get_weights()
  [i]`); else nothing."""
  name = _names.dotted(written) if written is not None else None
  if name is None or "." in name:
    return set()
  reads = [n for n in ast.walk(stored)
           if isinstance(n, ast.Name) and n.id == name]
  snapshots = [n for n in ast.walk(stored) if isinstance(n, ast.Call) and (
      _names.call_name(n) in _READS) and isinstance(
          n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and (
              n.func.value.id == name)]
  return {name} if reads and len(reads) == len(snapshots) else set()


def counts(stored: ast.AST, scope: _scopes.Scope,
            indices: Set[str]) -> Set[str]:
  """The local names `stored` reads that are counts: each bound only to
  arithmetic of numbers, loop indices and settings (`swa_epoch =
  cfg['epochs'] + 1 - cfg['swa_epochs']`), no weight in them, and never
  subscripted in `stored` (`head[:10]`: rows, not a count)."""
  entries = {n.value.id for n in ast.walk(stored)
             if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)}
  found = set()
  for name in {n.id for n in ast.walk(stored)
               if isinstance(n, ast.Name)} - entries:
    defs = scope.defs.get(name, [])
    if defs and all(_count(d.value, scope, indices) for d in defs):
      found.add(name)
  return found


def _count(node: Optional[ast.AST], scope: _scopes.Scope,
           indices: Set[str]) -> bool:
  """Arithmetic of numbers, loop indices and settings keyed by a string
  (`cfg['epochs']` of a parameter `cfg`, of a dict of numbers or of a
  config file read; never of saved weights or an `np.load`)."""
  if isinstance(node, ast.BinOp):
    return _count(node.left, scope, indices) and _count(
        node.right, scope, indices)
  if isinstance(node, ast.UnaryOp):
    return _count(node.operand, scope, indices)
  if isinstance(node, ast.Name) and node.id in indices:
    return True
  if isinstance(node, ast.Subscript):
    key = node.slice
    return isinstance(node.value, ast.Name) and isinstance(
        key, ast.Constant) and isinstance(key.value, str) and _settings(
            node.value.id, scope)
  return node is not None and _numbers.number(node, scope)


def _settings(name: str, scope: _scopes.Scope) -> bool:
  """Whether `name` holds settings: a parameter of the function, or a
  name bound only to a dict of numbers or to settings read (a config
  file, a call that names a config or parses arguments)."""
  defs = scope.defs.get(name, [])
  if not defs:
    return name in scope.params
  return all(d.value is not None and _settings_value(d.value, scope)
             for d in defs)


def _settings_value(value: ast.expr, scope: _scopes.Scope) -> bool:
  if isinstance(value, ast.Dict):
    return all(_numbers.number(v, scope) for v in value.values)
  if not isinstance(value, ast.Call):
    return False
  called = _names.dotted(value.func) or ""
  return called in _CONFIG_READS or any(
      word in called.lower() for word in _CONFIG_WORDS)
