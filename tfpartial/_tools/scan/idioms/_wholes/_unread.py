"""A filter that leaves out only variables the loss never reads: a
transformer's pooler (the dense layer over the first token that makes the
pooled output), left out of a step whose loss reads per-token outputs
only (a language-model head's `.logits`, a tagger's `outputs[0]`). Those
variables get no gradient either way; nothing is frozen. Left out while
the file reads the pooled output (`pooler_output`, `outputs[1]`, `seq,
pooled = bert(...)`), they are frozen, and reported. A call of the
project's own model (`subject, objects = model(x)` of `model =
Model(...)`, a class of the project returning two heads) is no
transformer's second output: its module, where the transformer is run,
is read in its place. A name the filter also leaves out that another
step of the same loss trains (`'custom' not in v.name` beside a head's
`'custom' in v.name`, at its own learning rate) leaves nothing out."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

# Components only the pooled output reads.
_POOLED_ONLY = ("pooler",)
# What reads the pooled output, as words of the file.
_POOLED_WORDS = frozenset({"pooler_output", "pooled_output", "pooled",
                           "get_pooled_output", "pooled_outputs"})


def only_unread(node: ast.AST, module: _project.Module,
                project: Optional[_project.Project] = None,
                beside: FrozenSet[str] = frozenset()) -> bool:
  """Whether the filter `node` leaves out only a pooler (each string it
  compares names one, or is a name another step of the same loss keeps:
  `beside`, a head trained at its own rate) and `module` never reads the
  pooled output (nor the modules of the project's models it runs)."""
  strings = [n.value for n in ast.walk(node) if isinstance(
      n, ast.Constant) and isinstance(n.value, str)]
  pooler = [s for s in strings if any(p in s.lower() for p in _POOLED_ONLY)]
  if not pooler or not all(s in pooler or s in beside for s in strings):
    return False
  return not _reads_pooled(module, project, set())


def _reads_pooled(module: _project.Module,
                  project: Optional[_project.Project], seen: Set[int]
                  ) -> bool:
  """Whether `module`, or a module of a project class it runs (two
  deep), reads a transformer's pooled output."""
  seen.add(id(module))
  if module.words & _POOLED_WORDS or module.tree is None:
    return True
  bound = {_names.dotted(t): n.value for n in ast.walk(module.tree)
           if isinstance(n, ast.Assign) for t in n.targets}
  own = _own_models(module, project, bound)
  if any(_second_output(n, bound, own) for n in ast.walk(module.tree)):
    return True
  return project is not None and len(seen) < 3 and any(
      _reads_pooled(home, project, seen) for home in own.values()
      if id(home) not in seen)


def _own_models(module: _project.Module,
                project: Optional[_project.Project],
                bound: Dict[Optional[str], ast.expr]
                ) -> Dict[str, _project.Module]:
  """The names bound to an instance of a class of the project
  (`model = Model(7)`), with the module defining that class."""
  root = project.parsed(module) if project is not None else None
  own: Dict[str, _project.Module] = {}
  if project is None or root is None:
    return own
  for name, made in bound.items():
    if name is None or not isinstance(made, ast.Call):
      continue
    spelled = _names.dotted(made.func)
    target = project.resolve(root, spelled) if spelled else None
    if isinstance(target, _scopes.ClassInfo):
      own[name] = project.module_of(target.home)
  return own


def _second_output(node: ast.AST, bound: Dict[Optional[str], ast.expr],
                   own: Dict[str, _project.Module]) -> bool:
  """`model(x)[1]` (or `out[1]` of `out = model(x)`), or `seq, pooled =
  model(x)`: a model's second output read (a transformer's pooled
  output), the model none of the project's own classes."""
  call = node.value if isinstance(node, (ast.Subscript, ast.Assign)) else (
      None)
  if isinstance(node, ast.Subscript) and isinstance(call, ast.Name):
    call = bound.get(call.id)
  if not isinstance(call, ast.Call) or _names.dotted(call.func) in own:
    return False
  if isinstance(node, ast.Subscript):
    index = node.slice
    return isinstance(index, ast.Constant) and index.value == 1 and (
        _model_call(call, bound))
  return isinstance(node, ast.Assign) and any(
      isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) >= 2
      for t in node.targets) and _model_call(call, bound)


def _model_call(call: ast.Call, bound: Dict[Optional[str], ast.expr]
                ) -> bool:
  """Whether `call` runs a model: a layer kept on `self`, or a name bound
  to a pretrained model or to an instance of a class (`Model(...)`), not
  a function, a generator or a tensor operation."""
  function = call.func
  if isinstance(function, ast.Attribute) and _names.root(function) == "self":
    return True
  made = bound.get(_names.dotted(function))
  name = _names.call_name(made) if isinstance(made, ast.Call) else ""
  return name == "from_pretrained" or name[:1].isupper()
