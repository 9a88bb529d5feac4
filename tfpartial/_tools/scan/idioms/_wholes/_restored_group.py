"""A group of variables the filters split off, restored and fed forward:
a function splits the trainable variables into groups by scope (`gx_vars
= [v for v in t_vars if 'Gx' in v.name]`, `gr_vars = ...'Gr'...`), one
group is restored on its own (`tf.train.Saver(gr_vars).restore(...)`,
a pretrained network), no step of the module trains it, and a network
opening its scope feeds, through the module's assignments, a network
whose scope a trained group keeps (GazeGAN's `Gx(xc, xm, Gr(x_left))`).
That pretrained part of the trained model is left out: a freeze, found
at the filter of the first group it feeds. The same of a network built
in a scope block of its own and given to a loader of saved arrays
(`tl.files.load_and_assign_npz(..., network=self.net_upscale)`), which
no step's list keeps, read by a later block of the same function
opening a trained scope (SRNTT's content extractor under its texture
transfer; `_loaded_network` finds those).

Not this: a group no step trains whose network only feeds a loss (a VGG
perceptual loss, a teacher, a target network: its outputs reach no
trained network's input), a group restored by no saver of its own (built
fresh, or restored with everything), a module with a step over every
variable, and a GAN's halves (each group has a step). Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _loaded_network
from tfpartial._tools.scan.idioms._wholes import _own_loss
from tfpartial._tools.scan.idioms._wholes import _wider_step

# Searches bounded: statements of one function followed for a feed.
_BOUND = 2000


def left_out(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """One finding per function whose filters split off a restored group
  that feeds a trained one, at the first trained group it feeds. Each
  module and function is read once."""
  hits: List[_idiom.Hit] = []
  by_module: Dict[int, List[Step]] = {}
  for step in steps:
    by_module.setdefault(id(analysis.module(step.scope)), []).append(step)
  for group in by_module.values():
    tree = analysis.module(group[0].scope).tree
    if tree is None or any(s.var_list is None for s in group):
      continue
    restored = _restored_alone(tree)
    trained = {name for s in group if isinstance(s.var_list, ast.AST)
               for name in _read(s.var_list)}
    kept = {name for s in group for name in _wider_step.scope_names(s)}
    loaded = _loaded_network.kept_out(tree, kept)
    if not restored and not loaded:
      continue
    fed: Dict[FrozenSet[str], Set[str]] = {}
    seen: Set[int] = set()
    for step in group:
      if id(step.scope) in seen:
        continue
      seen.add(id(step.scope))
      filters = _filters(step.scope)
      left = {s for name, (scopes, _) in filters.items()
              if name not in trained and name in restored for s in scopes}
      if not left | loaded:
        continue
      key = frozenset(left | loaded)
      if key not in fed:
        fed[key] = _fed(tree, _opening(tree), left | loaded) | (
            _loaded_network.fed_in_place(tree, loaded))
      hit = _first_fed(filters, trained, fed[key], group)
      if hit is not None:
        hits.append(hit)
  return hits


def _first_fed(filters: Dict[str, Tuple[List[str], ast.expr]],
               trained: Set[str], fed: Set[str], group: List[Step]
               ) -> Optional[_idiom.Hit]:
  """The finding at the first filter a step trains whose scopes a
  left-out network feeds."""
  for other in group:
    names = _read(other.var_list) if isinstance(
        other.var_list, ast.AST) else set()
    for name in sorted(names & set(filters) & trained,
                       key=lambda n: _idiom.position(filters[n][1])):
      if fed & set(filters[name][0]):
        node = filters[name][1]
        return _idiom.Hit(node, other.scope, other.call, {"filtered": node})
  return None


def _filters(scope: _scopes.Scope
             ) -> Dict[str, Tuple[List[str], ast.expr]]:
  """The names (`gx_vars`, `self.gx_vars`) a function assigns a filter
  keeping literal scopes, once each, with the scopes and the filter."""
  found: Dict[str, Tuple[List[str], ast.expr]] = {}
  counts: Dict[str, int] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
      name = _names.dotted(node.targets[0])
      if name is None:
        continue
      counts[name] = counts.get(name, 0) + 1
      scopes = _own_loss.kept_scopes(node.value, scope)
      if scopes:
        found[name] = (scopes, node.value)
  return {n: v for n, v in found.items() if counts.get(n) == 1}


def _read(node: ast.AST) -> Set[str]:
  """The names and `self.` attributes a list reads."""
  return {name for n in ast.walk(node)
          if isinstance(n, (ast.Name, ast.Attribute))
          for name in [_names.dotted(n)] if name}


def _restored_alone(tree: ast.Module) -> Set[str]:
  """The groups (`self.gr_vars`) the module makes a saver of exactly
  (`p_saver = tf.train.Saver(self.gr_vars)`) and restores with."""
  savers: Dict[str, str] = {}
  restoring: Set[str] = set()
  for node in _scopes.walk(tree):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.value, ast.Call)) and _names.call_name(
            node.value) == "Saver":
      given = node.value.args[:1] or [
          k.value for k in node.value.keywords if k.arg == "var_list"]
      target = _names.dotted(node.targets[0])
      name = _names.dotted(given[0]) if given else None
      if name and target:
        savers[target] = name
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "restore":
      restoring.add(_names.dotted(node.func.value) or "")
  return {name for saver, name in savers.items() if saver in restoring}


def _opening(tree: ast.Module) -> Dict[str, Set[str]]:
  """The module's functions and methods, by name, with the root scopes
  their bodies open by a literal name (`with tf.variable_scope("Gr")`)."""
  found: Dict[str, Set[str]] = {}
  for node in _scopes.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      roots = {name.strip("/").split("/")[0]
               for name in map(_opened_scopes.literal, _scopes.walk(node))
               if name is not None}
      if roots:
        found.setdefault(node.name, set()).update(roots)
  return found


def _network(call: ast.Call, opening: Dict[str, Set[str]]) -> Set[str]:
  """The scopes a call of the module's network opens (`self.Gr(x)`)."""
  func = call.func
  if isinstance(func, ast.Attribute) and _names.dotted(func.value) == (
      "self") or isinstance(func, ast.Name):
    return opening.get(_names.call_name(call), set())
  return set()


def _fed(tree: ast.Module, opening: Dict[str, Set[str]], left: Set[str]
         ) -> Set[str]:
  """The scopes of the networks that read, in some function of the
  module, what a network opening a scope of `left` made."""
  found: Set[str] = set()
  for function in _scopes.walk(tree):
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    made: Set[str] = set()
    statements = [n for n in _scopes.walk(function) if isinstance(
        n, (ast.Assign, ast.Return, ast.Expr))][:_BOUND]
    statements.sort(key=lambda n: (n.lineno, n.col_offset))
    for statement in statements:
      value = statement.value
      if value is None:
        continue
      for call in ast.walk(value):
        if isinstance(call, ast.Call) and not _network(
            call, opening) & left and _takes(call, made, opening, left):
          found |= _network(call, opening)
      # What another network makes of it is that network's output.
      if isinstance(statement, ast.Assign) and _takes(
          value, made, opening, left, outer=True) and not any(
              isinstance(n, ast.Call) and _network(n, opening) - left
              for n in ast.walk(value)):
        targets = list(statement.targets)
        while targets:
          target = targets.pop()
          if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
          name = _names.dotted(target)
          made |= {name} if name and name != "self" else set()
  return found


def _takes(node: ast.AST, made: Set[str], opening: Dict[str, Set[str]],
           left: Set[str], outer: bool = False) -> bool:
  """Whether `node` (a call's arguments, or with `outer` the whole
  value) reads what the left-out networks made, or calls one."""
  parts: List[ast.AST] = [node] if outer or not isinstance(
      node, ast.Call) else [*node.args, *(k.value for k in node.keywords)]
  for part in parts:
    for n in ast.walk(part):
      if isinstance(n, ast.Call) and _network(n, opening) & left:
        return True
      if isinstance(n, (ast.Name, ast.Attribute)) and (
          _names.dotted(n) in made):
        return True
  return False
