"""A part that no step trains between two parts that steps train: a
miner's step trains the small network feeding a pretrained generator
(`Generator(n, noise=Miner(n))`), the discriminator on the generator's
output has its own step, and the generator's variables, named by the
same filter as the steps' lists (`params_with_name('G')`, to restore
them), get no update. A GAN's halves leave nothing between them; a
network whose output reaches only the loss (a perceptual loss's, a
teacher's) measures what the model makes and is not part of it.

Groups are told by the name templates the filters and the networks'
layers share (`'%s_Generator'` of `Linear('%s_Generator.1' % ID, ...)`).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Searches bounded: a slice of a loss reads at most this many values.
_BOUND = 400


@dataclasses.dataclass
class Training:
  """One step of a module: where it is, its list and its loss (None: the
  step trains everything, or applies what another computes)."""

  call: ast.Call
  scope: _scopes.Scope
  var_list: Optional[ast.expr]
  loss: Optional[ast.expr]


def left_between(steps: List[Training]) -> List[Tuple[Training, ast.expr]]:
  """The steps (of one module) whose loss runs a group of variables that
  the code names by their filter and no step trains, fed by the step's
  own group and feeding another step's, with where each chooses its
  list."""
  steps = [s for s in steps if not _of_inputs(s)]
  if len(steps) < 2 or any(s.var_list is None for s in steps):
    return []  # A step training everything trains every group.
  chosen = [_chosen(s.scope, s.var_list) for s in steps if s.var_list]
  groups = [g for g in map(_group, chosen) if g is not None]
  if len(groups) != len(steps) or len({g[0] for g in groups}) != 1:
    return []  # A step training some other way may train the rest.
  trained = {g[1] for g in groups}
  found: List[Tuple[Training, ast.expr]] = []
  for step, value, (_, mine) in zip(steps, chosen, groups):
    named = _named(step.scope, groups[0][0]) - trained
    if step.loss is None or not named:
      continue
    makers = _makers(step.scope)
    if any(_between(step.scope, step.loss, makers, mine, trained - {mine},
                    name) for name in named):
      found.append((step, value))
  return found


def _of_inputs(step: Training) -> bool:
  """Whether a step takes the gradient of a network with respect to the
  inputs its loss gives it (`tf.gradients(D(x), [x])`, a gradient
  penalty's): no variable is trained."""
  if not isinstance(step.var_list, (ast.List, ast.Tuple)) or not (
      step.var_list.elts) or step.loss is None:
    return False
  given = {_names.dotted(a) for node in _scopes.walk(step.loss) if isinstance(
      node, ast.Call) for a in _arguments(node)}
  return all(_names.dotted(e) in given - {None} for e in step.var_list.elts)


def _chosen(scope: _scopes.Scope, node: ast.expr) -> ast.expr:
  """What a list named once is assigned (`gen_params = ...`), else it."""
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  return defs[0].value if len(defs) == 1 else node


def _template(node: ast.AST) -> Optional[str]:
  """The literal start of a name (`'%s_G'` of `'%s_G' % ID`), if any."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
    node = node.left
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value.strip("/") or None
  return None


def _group(value: ast.AST) -> Optional[Tuple[str, str]]:
  """The filter a list is made by and the name it keeps
  (`params_with_name`, `'%s_G'`), or None."""
  if not isinstance(value, ast.Call) or len(value.args) != 1:
    return None
  text = _template(value.args[0])
  name = _names.call_name(value)
  return (name, text) if text and name else None


def _named(scope: _scopes.Scope, filter_name: str) -> Set[str]:
  """The names the same filter keeps anywhere in `scope`'s assignments."""
  found: Set[str] = set()
  for defs in scope.defs.values():
    for each in defs:
      for node in _scopes.walk(each.value):
        if isinstance(node, ast.Call) and _names.call_name(
            node) == filter_name and len(node.args) == 1:
          text = _template(node.args[0])
          if text:
            found.add(text)
  return found


def _makers(scope: _scopes.Scope) -> Dict[str, Set[str]]:
  """The name templates of the layers each function `scope` sees makes
  (`Generator` -> {`'%s_Generator.1'`})."""
  found: Dict[str, Set[str]] = {}
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    for name, node in place.functions.items():
      found.setdefault(name, {text for each in _scopes.walk(
          node) if isinstance(each, ast.Call) and each.args
                              for text in [_template(each.args[0])] if text})
    place = place.parent
  return found


def _makes(texts: Set[str], group: str) -> bool:
  return any(t == group or t.startswith(group) and t[len(group)] in "./"
             for t in texts)


def _between(scope: _scopes.Scope, loss: ast.expr,
             makers: Dict[str, Set[str]], mine: str, others: Set[str],
             group: str) -> bool:
  """Whether `loss` runs a call making `group`, fed by a call making
  `mine` and feeding one making a group of `others`."""
  def making(node: ast.AST, names: Set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(
        node.func, ast.Name) and any(
            _makes(makers.get(node.func.id, set()), n) for n in names)

  calls = [n for n in _slice(scope, [loss]) if isinstance(n, ast.Call)]
  middle = [c for c in calls if making(c, {group}) and not making(
      c, {mine, *others})]
  fed = [c for c in middle if any(making(n, {mine}) for n in _slice(
      scope, _arguments(c)))]
  if not fed:
    return False
  ids = {id(c) for c in fed}
  return any(making(c, others) and any(id(n) in ids for n in _slice(
      scope, _arguments(c))) for c in calls)


def _arguments(call: ast.Call) -> List[ast.expr]:
  return [*call.args, *(k.value for k in call.keywords)]


def _slice(scope: _scopes.Scope, roots: List[ast.expr]) -> Iterator[ast.AST]:
  """The nodes of what `roots` are computed from, by the assignments of
  their names in `scope` (`_scopes.made_from` of each)."""
  for root in roots:
    yield from _scopes.made_from(root, scope, _BOUND)
