"""Whether a blend written into variables is a target network's soft
update: `assign(t, (1 - tau) * t + tau * s)` for `t, s` in `zip(targets,
sources)`, where `sources` is the list a train op trains and `targets` is
not. The target follows the trained network whole (SAC's, DDPG's, DQN's
target ops): no element of a trained variable is put back. Or, where
the module holds no train call naming its lists (a framework trains the
model's own list), the same blend by one coefficient for every variable
into a list the module first copies from its source (`assign_param(
targets, sources)`): a copy made to follow the original, where a
write-back puts a copy into the trained original."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _numbers

# The calls a list of trained variables is passed to, and the position
# of that list among their arguments (`var_list` by keyword anywhere).
_TRAIN_CALLS = {"minimize": 2, "compute_gradients": 1, "gradients": 1,
                "gradient": 1}


def follows_trained(scope: _scopes.Scope, analysis: Analysis,
                    target: ast.AST, value: ast.AST) -> bool:
  """Whether `value`, a sum written into `target`, blends in an element
  of a list the module trains, zipped with a list of targets the module
  does not train."""
  if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Add):
    return False
  written = _list_of(target, scope)
  if written is None:
    return False
  trained = _trained(analysis, analysis.module(scope))
  mine = _names.dotted(target)
  sources = {_list_of(n, scope) for n in ast.walk(value) if isinstance(
      n, ast.Name) and n.id != mine}
  return written not in trained and any(
      s in trained for s in sources if s is not None and s != written)


def _list_of(element: ast.AST, scope: _scopes.Scope) -> Optional[str]:
  """The dotted name of the list a loop's element comes from (`self.
  params` of `s` in `for t, s in zip(targets, sources)`, `sources =
  self.params`), following a few plain assignments."""
  if not isinstance(element, ast.Name):
    return None
  node: Optional[ast.expr] = scope.loops.get(element.id)
  for _ in range(3):
    if not isinstance(node, ast.Name):
      break
    defs = scope.defs.get(node.id, [])
    if len(defs) != 1 or defs[0].part is not None:
      break
    node = defs[0].value
  return _names.dotted(node) if node is not None else None


def _trained(analysis: Analysis, module: _project.Module) -> FrozenSet[str]:
  """The lists `module` passes to a train call, read once per module."""
  memo = analysis.once("target-network:trained", dict)
  assert isinstance(memo, dict)
  if id(module) not in memo:
    memo[id(module)] = _trained_lists(module.tree)
  found: FrozenSet[str] = memo[id(module)]
  return found


def _copies(analysis: Analysis, module: _project.Module
            ) -> FrozenSet[Tuple[str, str]]:
  """The texts of the two arguments of each call of two in `module` (no
  train call, no `zip`): the calls that may copy one list into the
  other, read once per module (each blend asked of a module once walked
  all of it)."""
  memo = analysis.once("target-network:copies", dict)
  assert isinstance(memo, dict)
  if id(module) not in memo:
    memo[id(module)] = frozenset(
        (ast.unparse(node.args[0]), ast.unparse(node.args[1]))
        for node in (_scopes.walk(module.tree) if module.tree is not None
                     else ())
        if isinstance(node, ast.Call) and len(node.args) == 2 and (
            _names.call_name(node) not in _NOT_COPIES))
  found: FrozenSet[Tuple[str, str]] = memo[id(module)]
  return found


def _trained_lists(tree: Optional[ast.AST]) -> FrozenSet[str]:
  """The dotted names of the lists passed to a train call in `tree`."""
  found: Set[str] = set()
  for node in _scopes.walk(tree) if tree is not None else ():
    if not isinstance(node, ast.Call):
      continue
    name = _names.call_name(node)
    listed: Dict[str, ast.expr] = {
        k.arg: k.value for k in node.keywords if k.arg == "var_list"}
    if name in _TRAIN_CALLS and len(node.args) > _TRAIN_CALLS[name]:
      listed["arg"] = node.args[_TRAIN_CALLS[name]]
    found.update(n for n in map(_names.dotted, listed.values()) if n)
  return frozenset(found)

# Calls of two lists that copy neither into the other.
_NOT_COPIES = frozenset({*_TRAIN_CALLS, "zip"})


def mirrors_its_copy(scope: _scopes.Scope, analysis: Analysis,
                     target: ast.AST, value: ast.AST) -> bool:
  """Whether `value`, written into `target`, is `t * (1 - c) + s * c`
  with `t` the written element, `s` one of another list zipped with it
  and `c` one coefficient for every variable (no loop element, no
  index), and the module copies that other list into the written one
  (a call of `(targets, sources)`) and trains neither by name."""
  written = _list_text(target, scope)
  source = _blended_with(target, value, scope)
  if written is None or source is None:
    return False
  module = analysis.module(scope)
  return (written, source) in _copies(analysis, module) and not (
      {written, source} & _trained(analysis, module))


def _list_text(element: ast.AST, scope: _scopes.Scope) -> Optional[str]:
  """The text of the list a loop's element comes from (`self.nets[i].
  params` of `t` in `for t, s in zip(self.nets[i].params, ...)`)."""
  listed = scope.loops.get(element.id) if isinstance(
      element, ast.Name) else None
  return ast.unparse(listed) if listed is not None else None


def _blended_with(target: ast.AST, value: ast.AST, scope: _scopes.Scope
                  ) -> Optional[str]:
  """The list of the other element in a blend `t * (1 - c) + s * c` of
  the written element `t` (in either order), by one coefficient `c`."""
  if not (isinstance(target, ast.Name) and isinstance(value, ast.BinOp)
          and isinstance(value.op, ast.Add)):
    return None
  terms = [_term(t, scope) for t in (value.left, value.right)]
  if None in terms:
    return None
  (one, c1), (other, c2) = [t for t in terms if t is not None]
  if other == target.id:
    (one, c1), (other, c2) = (other, c2), (one, c1)
  if one != target.id or other == one or not (
      _complement(c1, c2) or _complement(c2, c1)):
    return None
  return _list_text(ast.Name(id=other), scope)


def _term(term: ast.AST, scope: _scopes.Scope
          ) -> Optional[Tuple[str, ast.AST]]:
  """(loop element, coefficient) of a product `element * coefficient`."""
  if not (isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult)):
    return None
  for element, coefficient in ((term.left, term.right),
                               (term.right, term.left)):
    if isinstance(element, ast.Name) and element.id in scope.loops and not (
        any(isinstance(n, ast.Subscript) or isinstance(n, ast.Name) and (
            n.id in scope.loops) for n in ast.walk(coefficient))):
      return element.id, coefficient
  return None


def _complement(whole: ast.AST, part: ast.AST) -> bool:
  """Whether `whole` is `1 - part`."""
  return isinstance(whole, ast.BinOp) and isinstance(whole.op, ast.Sub) \
      and isinstance(whole.left, ast.Constant) and whole.left.value == 1 \
      and ast.unparse(whole.right) == ast.unparse(part)


# Wrappers that read a variable (or a model's weights) whole.
_WHOLE_READS = frozenset({*_names.SNAPSHOTS, "array", "asarray",
                          "convert_to_tensor"})


def scalar_blend(scope: _scopes.Scope, analysis: Analysis,
                 target: ast.AST, value: ast.AST) -> bool:
  """Whether `value`, written into `target`, is `(1 - c) * t + c * s`
  (in any order of terms and factors) with `t` the target read whole
  (`t.value()`, `np.array(model.get_weights())`), `s` another variable
  or model read whole, and `c` a number (a constant, or a name or
  attribute only ever bound to one): a soft update by one coefficient
  for every element (a target network following its online network),
  where no element is chosen to be kept."""
  if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Add):
    return False
  terms = [_scaled(t) for t in (value.left, value.right)]
  if None in terms:
    return False
  (c1, r1), (c2, r2) = [t for t in terms if t is not None]
  mine = ast.unparse(target)
  if mine not in (r1, r2) or r1 == r2:
    return False
  if not (_complement(c1, c2) or _complement(c2, c1) or _sums_to_one(
      c1, c2)):
    return False
  module = analysis.module(scope).tree
  return all(_numbers.number(n, scope) for c in (c1, c2)
             for n in _bound_names(c)) and not _trains(module, target)


# Calls that train a model they are called on.
_FITS = {"fit", "fit_generator", "train_on_batch"}


def _trains(module: Optional[ast.AST], target: ast.AST) -> bool:
  """Whether a train call of the module names `target`'s list or model
  (`minimize(loss, var_list=ts)`, `ts.fit(...)` of `ts[i]`)."""
  while isinstance(target, ast.Subscript):
    target = target.value
  mine = ast.unparse(target)
  for node in _scopes.walk(module) if module is not None else ():
    if not isinstance(node, ast.Call):
      continue
    name = _names.call_name(node)
    if name in _FITS and isinstance(node.func, ast.Attribute) and (
        ast.unparse(node.func.value) == mine):
      return True
    if name in (*_TRAIN_CALLS, "apply_gradients") and any(
        mine in ast.unparse(a) for a in [*node.args, *(
            k.value for k in node.keywords)]):
      return True
  return False


def _bound_names(node: ast.AST) -> List[ast.expr]:
  """The names and attributes (whole: `self.tau`, not `self`) in
  `node`."""
  if isinstance(node, (ast.Name, ast.Attribute)):
    return [node]
  return [n for child in ast.iter_child_nodes(node)
          for n in _bound_names(child)]


def _scaled(term: ast.AST) -> Optional[Tuple[ast.expr, str]]:
  """(coefficient, text of the variable read whole) of `c * read`."""
  if not (isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult)):
    return None
  for read, coefficient in ((term.left, term.right),
                            (term.right, term.left)):
    whole = _read_whole(read)
    if whole is not None and not any(isinstance(n, (
        ast.Subscript, ast.Call)) for n in ast.walk(coefficient)):
      return coefficient, whole
  return None


def _read_whole(node: ast.AST) -> Optional[str]:
  """The text of the variable `node` reads whole (`np.array(m.
  get_weights())` -> `m`), or None for anything computed."""
  while isinstance(node, ast.Call):
    name = _names.call_name(node)
    if name not in _WHOLE_READS:
      return None
    if isinstance(node.func, ast.Attribute) and name in _names.SNAPSHOTS \
        and not node.args:
      node = node.func.value
    elif len(node.args) == 1:
      node = node.args[0]
    else:
      return None
  if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and all(
      isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Load,
                     ast.Constant)) for n in ast.walk(node)):
    return ast.unparse(node)
  return None


def _sums_to_one(one: ast.AST, other: ast.AST) -> bool:
  """Whether two constant coefficients add up to 1 (`0.995`, `0.005`)."""
  try:
    total = ast.literal_eval(one) + ast.literal_eval(other)
  except (ValueError, TypeError, SyntaxError):
    return False
  return isinstance(total, (int, float)) and abs(total - 1) < 1e-9
