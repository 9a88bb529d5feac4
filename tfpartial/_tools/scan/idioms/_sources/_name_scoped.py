"""A group kept by a name (`g_vars = [v for v in tvars if 'Generator' in
v.name]`) whose model makes some of its variables with `get_variable`
under `tf.name_scope('Generator')` (part thirty's VAW-GAN: the speaker
embedding tables): `get_variable` ignores a name scope, so those tables
are named outside the group, and no step trains them while the group
they were written into does.

What is matched: the filter's literal against the literal of a
`name_scope` block, in a method of a class, that makes a trainable
variable by `get_variable`. The model is the step's own module when that
module makes variables itself (`get_variable`, `variable_scope`); a
trainer that makes none is handed its model, and then the blocks of the
project's modules that also name the group by a naming scope of the
same literal (`tf.make_template('Generator', ...)`) count: a module
that opens `name_scope('Generator')` and names nothing `Generator` is
another model's. What the names are, not what the code
meant: under `tf.variable_scope('Generator')` or `make_template` they are
the group's, and so are a method's when a caller of it (`with
tf.variable_scope('Generator'): self.generator(z)`, or
`tf.make_template('Generator', self.generator)`) names them. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import Step

# Scopes that name the variables made inside them.
_NAMING = {"variable_scope", "make_template", "VariableScope"}
# The label of the `name_scope` call a hit's variables are made under.
SCOPED = "name_scoped"
# The label of the file that call is in (a constant holding its path).
SCOPED_FILE = "name_scoped file"
# The words of a module that makes variables itself.
_MAKERS = ("get_variable", "variable_scope")


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The filters of the steps that keep a name whose name scope holds
  variables made by `get_variable`, once each."""
  found: List[_idiom.Hit] = []
  for step in steps:
    kept = _kept(step)
    if kept is None:
      continue
    node, literal = kept
    home = analysis.module(step.scope)
    if home.tree is not None and any(
        word in home.source.text for word in _MAKERS):
      unnamed = _module_scopes(analysis, home)  # Its module is its model.
    else:
      unnamed = _project_scopes(analysis)  # A trainer handed its model.
    if literal in unnamed:
      call, path = unnamed[literal]
      found.append(_idiom.Hit(node, step.scope, step.call, {
          "filtered": node, SCOPED: call, SCOPED_FILE: ast.Constant(path)}))
  return found


def reason(labels: Dict[str, ast.AST]) -> Optional[str]:
  """Why the filter leaves variables out that its code meant to keep."""
  call = labels.get(SCOPED)
  path = labels.get(SCOPED_FILE)
  if not isinstance(call, ast.Call) or not isinstance(path, ast.Constant):
    return None
  return (f"`get_variable` ignores `{ast.unparse(call)}` ({path.value!s}:"
          f"{_idiom.line(call)}): the variables it makes there are not "
          "named under it, so no step trains them")


def _kept(step: Step) -> Optional[Tuple[ast.ListComp, str]]:
  """(the filter, the name it keeps) of a step's local list kept by one
  literal name (`[v for v in tvars if 'Generator' in v.name]`)."""
  if not isinstance(step.var_list, ast.Name):
    return None
  defs = step.scope.defs.get(step.var_list.id, [])
  if len(defs) != 1 or not isinstance(defs[0].value, ast.ListComp):
    return None
  value = defs[0].value
  if len(value.generators) != 1 or len(value.generators[0].ifs) != 1:
    return None
  test = value.generators[0].ifs[0]
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.In) and isinstance(test.left, ast.Constant) and (
          isinstance(test.left.value, str)) and isinstance(
              test.comparators[0], ast.Attribute) and (
                  test.comparators[0].attr == "name"):
    return value, test.left.value
  return None


# A `name_scope` call by its literal name, with the path of its file.
_Scoped = Dict[str, Tuple[ast.Call, str]]


def _project_scopes(analysis: Analysis) -> _Scoped:
  """`_module_scopes` of every module that opens a `name_scope` and a
  naming scope of the same literal (`_naming_literals`), the first
  module's call for each name (gathered once per scan)."""
  def gather() -> _Scoped:
    found: _Scoped = {}
    for module in analysis.project.all_modules_with({"name_scope"}):
      named = _naming_literals(module)
      for literal, each in _module_scopes(analysis, module).items():
        if literal in named:
          found.setdefault(literal, each)
    return found

  found = analysis.once("name scopes making", gather)
  assert isinstance(found, dict)
  return found


def _naming_literals(module: _project.Module) -> Set[str]:
  """The literals a module opens naming scopes with
  (`tf.variable_scope('Generator')`, `tf.make_template('Generator',
  fn)`): the groups its variables are named into."""
  if module.tree is None:
    return set()
  return {call.args[0].value for call in ast.walk(module.tree)
          if isinstance(call, ast.Call) and call.args and (
              _names.call_name(call) in _NAMING) and isinstance(
                  call.args[0], ast.Constant) and isinstance(
                      call.args[0].value, str)}


def _module_scopes(analysis: Analysis, module: _project.Module) -> _Scoped:
  """The `tf.name_scope` calls, by their literal names, of a module's
  blocks in no naming scope that make a trainable variable by
  `get_variable`, directly or in a method of their class they call, in
  methods no caller names (read once per module)."""
  found = analysis.once(f"name scopes making {id(module)}", lambda: {
      literal: (call, module.source.path)
      for literal, call in _name_scopes_making(module).items()})
  assert isinstance(found, dict)
  return found


def _name_scopes_making(module: _project.Module) -> Dict[str, ast.Call]:
  found: Dict[str, ast.Call] = {}
  if module.tree is None or "name_scope" not in module.source.text or (
      "get_variable" not in module.source.text):
    return found
  for cls in ast.walk(module.tree):
    if isinstance(cls, ast.ClassDef):
      methods = {each.name: each for each in cls.body
                 if isinstance(each, ast.FunctionDef)}
      named = _named_by_callers(cls)
      for method in methods.values():
        if method.name in named:
          continue
        for literal, call in _blocks(method, methods, False):
          found.setdefault(literal, call)
  return found


def _named_by_callers(cls: ast.ClassDef) -> Set[str]:
  """The methods of `cls` some code of it reads (`self.m`) inside a
  naming scope or hands to `make_template`: their variables are named."""
  found: Set[str] = set()

  def visit(node: ast.AST, named: bool) -> None:
    for child in ast.iter_child_nodes(node):
      inner = named
      if isinstance(child, ast.With):
        inner = named or any(
            isinstance(item.context_expr, ast.Call) and _names.call_name(
                item.context_expr) in _NAMING for item in child.items)
      elif isinstance(child, ast.Call) and _names.call_name(
          child) in _NAMING:
        inner = True  # `tf.make_template('Generator', self.generator)`.
      elif inner and isinstance(child, ast.Attribute) and (
          _names.dotted(child.value) == "self"):
        found.add(child.attr)
      visit(child, inner)

  visit(cls, False)
  return found


def _blocks(node: ast.AST, methods: Dict[str, ast.FunctionDef],
            named: bool) -> Iterator[Tuple[str, ast.Call]]:
  """(the name, the call) of the `name_scope` blocks under `node` that
  make variables it does not name; `named`: inside a scope naming them."""
  for child in ast.iter_child_nodes(node):
    if isinstance(child, ast.With):
      calls = [item.context_expr for item in child.items
               if isinstance(item.context_expr, ast.Call)]
      names = {_names.call_name(call) for call in calls}
      inner = named or bool(names & _NAMING)
      for call in calls:
        first = call.args[0] if call.args else None
        if not inner and _names.call_name(call) == "name_scope" and (
            isinstance(first, ast.Constant)) and isinstance(
                first.value, str) and any(
                    _makes(statement, methods) for statement in child.body):
          yield first.value, call
      yield from _blocks(child, methods, inner)
    elif not isinstance(child, (ast.FunctionDef, ast.ClassDef, ast.Lambda)):
      yield from _blocks(child, methods, named)


def _makes(node: ast.AST, methods: Dict[str, ast.FunctionDef],
           depth: int = 0) -> bool:
  """Whether `node` calls `get_variable` for a trainable variable, or a
  method of the class (`self.m(...)`, once removed) that does."""
  for each in ast.walk(node):
    if not isinstance(each, ast.Call):
      continue
    if _names.call_name(each) == "get_variable" and not any(
        k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
            not k.value.value) for k in each.keywords):
      return True
    func = each.func
    if depth == 0 and isinstance(func, ast.Attribute) and (
        _names.dotted(func.value) == "self") and func.attr in methods and (
            _makes(methods[func.attr], methods, 1)):
      return True
  return False
