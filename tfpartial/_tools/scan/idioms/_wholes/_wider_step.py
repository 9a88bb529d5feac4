"""A step over some scopes of a loss that another step trains more of.

`first = optimizer.minimize(loss, var_list=get_collection(T, "glgcm") +
get_collection(T, "fc2"))` and `second = optimizer.minimize(loss,
var_list=get_collection(T, "fc2"))`: both differentiate the same loss, so
that loss reaches every scope the first step trains; the second keeps
fixed the scopes it leaves out of that list. Its filter names a model's
head, not a whole model trained alone beside another one, nor one half of
a split another loss trains the rest of (`_filter_gates`). Lists kept on
the object (`self.classifier_vars`) are read as the function assigns them.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._sources._train_step import Step


def trained_wider(step: Step, steps: Iterable[Step], taken: bool = False
                  ) -> bool:
  """Whether another step of `step`'s function minimises the same loss
  over a list whose scope names strictly contain those of `step`'s list
  (`taken`: a step that takes the loss itself, not `apply_gradients` of
  pairs that may join several losses' gradients: `g + d`).

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> module = _scopes.collect(ast.parse("pass"))
  >>> def made(names):
  ...   node = ast.parse(" + ".join(f"col({n!r})" for n in names)).body[0]
  ...   return Step(ast.Call(ast.Name("f"), [], []), module, node.value,
  ...               "loss", {})
  >>> trained_wider(made(["fc2"]), [made(["fc2"]), made(["conv", "fc2"])])
  True
  >>> trained_wider(made(["conv", "fc2"]), [made(["fc2"])])
  False
  """
  if step.loss is None or step.var_list is None:
    return False
  mine = _named(step)
  return bool(mine) and any(
      other is not step and other.scope is step.scope
      and other.loss == step.loss and other.var_list is not None
      and not (taken and _names.call_name(other.call) == "apply_gradients")
      and mine < _named(other) for other in steps)


def dropped_later(step: Step, steps: Iterable[Step],
                  picking: _chosen_stage.Picking) -> bool:
  """Whether a test of a loop's counter picks, before its bound, a step
  of the same loss over a wider list, and from it on `step`, while no
  step that may run from then on keeps what the wider list adds (AGGAN's
  attention nets, dropped from the generators' steps at epoch `switch`):
  those scopes, which the loss reaches, stay fixed for the rest of
  training. Not the narrower step picked first (a warm-up of a part,
  then the whole), nor arms picked by parity, nor a step of their own.
  """
  if step.loss is None or step.var_list is None:
    return False
  steps = list(steps)
  mine = _named(step)
  for other in steps:
    if other is step or other.scope is not step.scope or (
        other.loss != step.loss) or other.var_list is None or not (
            mine < _named(other)) or not picking.later(step.call, other.call):
      continue
    added = _named(other) - mine
    if not any(each is not step and each is not other and (
        each.var_list is None or added & _named(each)) and not (
            picking.apart(each.call, step.call) or picking.later(
                step.call, each.call)) for each in steps
               if each.scope is step.scope):
      return True
  return False


def scope_names(step: Step) -> Set[str]:
  """The scope names the step's list is made of (`_named`), none for a
  step over every variable."""
  return _named(step) if step.var_list is not None else set()


def _named(step: Step) -> Set[str]:
  """The scope names (string constants) the step's list is made of, and
  the lists its names are assigned from; not what a comprehension's or a
  loop's own variable was drawn from (`[v for v in every if "a" in
  v.name]` after `for g, v in opt.compute_gradients(loss, var_list=b)`
  names only "a")."""
  assert step.var_list is not None
  # Asked of every other step for each step: read once per scan.
  return set(step.scope.once((_named, step.var_list, 0),
                             lambda: frozenset(_read_named(step))))


def _read_named(step: Step) -> Set[str]:
  assert step.var_list is not None
  found: Set[str] = set()
  stack, seen = [step.var_list], 0
  kept: Set[int] = set()
  while stack and seen < 40:
    node, seen = stack.pop(), seen + 1
    nodes = _listed_nodes(node)
    bound = {t.id for c in nodes if isinstance(c, ast.comprehension)
             for t in _scopes.walk(c.target) if isinstance(t, ast.Name)}
    for item in nodes:
      if isinstance(item, ast.Constant) and isinstance(item.value, str) and (
          item.value.strip("/")):
        found.add(item.value.strip("/"))
      elif isinstance(item, ast.Name) and isinstance(
          item.ctx, ast.Load) and item.id not in bound:
        # An element unpacked from pairs is no list of scopes.
        stack += [d.value for d in step.scope.defs.get(item.id, [])
                  if d.part is None]
      elif isinstance(item, ast.Attribute) and _on_self(item) and (
          id(item) not in kept):
        # A list kept on the object (`self.head_vars`), as assigned here.
        kept.add(id(item))
        stack += _assigned_here(step.scope, item)
  return found


# Calls that take a loss and a list: only the list names what is trained.
_GRADIENTS = {"compute_gradients": ("var_list", 1), "gradients": ("xs", 1),
              "gradient": ("sources", 1)}


def _listed_nodes(node: ast.AST) -> List[ast.AST]:
  """`node` and every node inside it, breadth first, but of a gradient
  call only its list (`compute_gradients(self.loss, var_list=self.params)`:
  `self.params`, not the loss, whose weights' names say nothing of what
  the step trains).

  >>> import ast
  >>> found = _listed_nodes(ast.parse(
  ...     "o.compute_gradients(l2(get_variable('b')), var_list=v)").body[0])
  >>> sorted(n.id for n in found if isinstance(n, ast.Name))
  ['v']
  """
  todo, found = [node], []
  for each in todo:  # Grows as it is read: breadth first.
    found.append(each)
    spelled = _names.call_name(each) if isinstance(each, ast.Call) else ""
    if spelled in _GRADIENTS:
      keyword, position = _GRADIENTS[spelled]
      assert isinstance(each, ast.Call)
      listed = [k.value for k in each.keywords if k.arg == keyword] or (
          each.args[position:position + 1])
      todo.extend(listed)
      continue
    todo.extend(ast.iter_child_nodes(each))
  return found


def _on_self(node: ast.AST) -> bool:
  """`self.name`, read."""
  return isinstance(node, ast.Attribute) and isinstance(
      node.ctx, ast.Load) and isinstance(node.value, ast.Name) and (
          node.value.id == "self")


def _assigned_here(scope: _scopes.Scope, read: ast.Attribute
                   ) -> List[ast.expr]:
  """What the function assigns to `self.<attr>` of `read` (one target)."""
  return scope.once((_self_assigned, None, 0),
                    lambda: _self_assigned(scope)).get(read.attr, [])


def _self_assigned(scope: _scopes.Scope) -> Dict[str, List[ast.expr]]:
  """`_assigned_here` of every `self.<attr>` the function assigns, read
  once per function (each step's list asks)."""
  found: Dict[str, List[ast.expr]] = {}
  for n in scope.nodes:
    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(
        n.targets[0], ast.Attribute) and isinstance(
            n.targets[0].value, ast.Name) and n.targets[0].value.id == "self":
      found.setdefault(n.targets[0].attr, []).append(n.value)
  return found
