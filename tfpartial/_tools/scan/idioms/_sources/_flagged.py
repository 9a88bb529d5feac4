"""A list of variables to train chosen by a flag, a configured value or
a scope: a group emptied under `if args.freeze_convolutions:` (only the
other groups train), `est_params if hp.fixed_exp else params` (one
scope, or every variable), a scope's list grown under `if
args.train_vgg:` by another scope (left out when the flag is off),
models picked from a dict by name under their flags, slim's
`--trainable_scopes` given a default (the choice is made there), and a
scope of layers built on a graph loaded from a SavedModel (not the whole
model). A step under a switch only ever `False` never runs.

A filter that names a scope the project opens around a whole model
selects that model; chosen against a larger list by a flag, it leaves
the rest of the model out. Part of `var-list-filter`; the flow of names
is read from the step's scope only."""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources import _groups


def a_flag(test: Optional[ast.expr], own: str = "") -> bool:
  """Whether an `if` tests a flag or a configured value (`args.freeze`,
  `not hp.fixed_exp`, `config['train_vgg']`): no call, no test of a
  variable's name, and not the list `own` itself (`if len(conv) > 0`)."""
  if test is None:
    return False
  nodes = list(_scopes.walk(test))
  if any(isinstance(n, ast.Call) or isinstance(n, ast.Name) and (
      n.id == own) or isinstance(n, ast.Compare) and any(
          isinstance(op, (ast.In, ast.NotIn)) for op in n.ops)
         for n in nodes) or _names.mentions_a_name_test(test):
    return False
  return any(isinstance(n, ast.Attribute) or isinstance(
      n, ast.Subscript) and isinstance(n.slice, ast.Constant) for n in nodes)


def emptied(flow: Flow, var_list: Optional[ast.AST], scope: _scopes.Scope,
            at: ast.AST) -> List[ast.expr]:
  """The empty lists a group the step trains is set to under a flag
  before the step (`if args.freeze_convolutions: conv_trainable = []`),
  where the group held variables before."""
  found: List[ast.expr] = []
  for name in _read(var_list):
    defs = scope.defs.get(name, [])
    for each in defs:
      if each.replaces and isinstance(each.value, (ast.List, ast.Tuple)) \
          and not each.value.elts and each.end <= _idiom.position(at) and (
              a_flag(each.where.test, name)) and any(
                  other.end < each.end and other.replaces and "filtered" in (
                      flow.labels(other.value, scope)) for other in defs):
        found.append(each.value)
  return found


def choice(flow: Flow, var_list: Optional[ast.AST], scope: _scopes.Scope
           ) -> Optional[ast.expr]:
  """`est if hp.fixed_exp else every` chosen for the step, one side a
  filter and the other every variable: the choice (else None)."""
  for value in _values(var_list, scope):
    if isinstance(value, ast.IfExp) and a_flag(value.test):
      sides = [flow.labels(side, scope) for side in (value.body,
                                                     value.orelse)]
      if sum("filtered" in side for side in sides) == 1 and all(
          "var" in side or "filtered" in side for side in sides):
        return value
  return None


def narrowed(var_list: Optional[ast.AST], scope: _scopes.Scope,
             source: ast.expr) -> Optional[ast.expr]:
  """The filter by name that a flag's `if` narrows the step's list with
  (`if FLAGS.bn_freeze: tvars = [t for t in tvars if 'batch_norm' not in
  t.name]`) when the list came from `source`, a collection by a scope the
  code computes (a model's own, `scope=self.scope`), else None: that list
  trains with the flag off, so the flag's filter is the choice. A source
  naming a part by a literal (`scope='head'`) stays the choice.

  >>> tree = ast.parse("def f(tvars):\\n  if FLAGS.bn_freeze:\\n"
  ...     "    tvars = [t for t in tvars if 'bn' not in t.name]\\n"
  ...     "  opt.minimize(loss, var_list=tvars)")
  >>> scope = _scopes.collect(tree).children[0]
  >>> narrowed(ast.Name("tvars"), scope, ast.Name("scope")).lineno
  3
  """
  if not isinstance(var_list, ast.Name) or any(
      isinstance(n, ast.Constant) and isinstance(n.value, str)
      for n in _scopes.walk(source)):
    return None
  for each in scope.defs.get(var_list.id, []):
    value = each.value
    if each.replaces and a_flag(each.where.test, var_list.id) and (
        isinstance(value, (ast.ListComp, ast.GeneratorExp))) and (
            _names.dotted(value.generators[0].iter) == var_list.id) and any(
                _names.mentions_a_name_test(test)
                for test in value.generators[0].ifs):
      return value
  return None


def grown(var_list: Optional[ast.AST], scope: _scopes.Scope) -> bool:
  """Whether the step's list is a scope's variables that a flag adds
  another scope's to (`if args.train_vgg: var_list = var_list +
  get_collection(..., scope='vgg_19')`): left out with the flag off."""
  if not isinstance(var_list, ast.Name):
    return False
  defs = scope.defs.get(var_list.id, [])
  first = [_groups.collection_scope(d.value) for d in defs
           if d.replaces and d.where.test is None]
  if len(first) != 1 or not first[0]:
    return False
  for each in defs:
    if not a_flag(each.where.test, var_list.id):
      continue
    for part in _added(each.value, var_list.id):
      added = _groups.collection_scope(part)
      if added and not (added + "/").startswith(first[0].rstrip("/") + "/"):
        return True
  return False


def _added(value: ast.expr, name: str) -> Iterator[ast.expr]:
  """The parts `var_list + other` adds to the list `name`."""
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    for side in (value.left, value.right):
      if not (isinstance(side, ast.Name) and side.id == name):
        yield from _added(side, name)
  else:
    yield value


def _values(var_list: Optional[ast.AST], scope: _scopes.Scope
            ) -> List[ast.expr]:
  """The list itself, or what its local name is assigned."""
  if isinstance(var_list, ast.Name):
    return [d.value for d in scope.defs.get(var_list.id, []) if d.replaces]
  return [var_list] if isinstance(var_list, ast.expr) else []


def _read(var_list: Optional[ast.AST]) -> Set[str]:
  """The local names a step's list is joined from (`conv + fc`)."""
  if var_list is None:
    return set()
  return {n.id for n in _scopes.walk(var_list) if isinstance(n, ast.Name)}



_LOADERS = ("loader.load(", "import_meta_graph(")


def loads_a_graph(text: str, tree: Optional[ast.AST]) -> bool:
  """Whether a module loads a saved graph's variables into the graph it
  builds (`tf.saved_model.loader.load(sess, ['vgg16'], path)`,
  `import_meta_graph`): a scope it opens holds only the layers it adds
  on top (a CarND decoder on a loaded VGG), not the whole model."""
  if tree is None or not any(each in text for each in _LOADERS):
    return False
  return any(isinstance(n, ast.Call) and (_names.dotted(n.func) or "").endswith(
      ("loader.load", "import_meta_graph")) for n in ast.walk(tree))


_DEFINES = {"DEFINE_string", "DEFINE_list", "DEFINE_multi_string",
            "add_argument"}


def flag_default(analysis: Analysis, filtered: Optional[ast.AST],
                 home: Optional[_scopes.Scope],
                 step: Optional[_scopes.Scope] = None
                 ) -> Optional[Tuple[ast.Constant, _scopes.Scope]]:
  """Where a flag the filter reads (`FLAGS.trainable_scopes`, slim's) is
  given a default that chooses some scopes (`'InceptionV3/Logits'`), and
  the scope of its module: the freeze is chosen there, not on the
  command line. None when the default chooses nothing (None, ''). The
  step's own module comes first: scripts that share a helper each define
  the flag, and the one that runs the step gives it its default. The
  flags each module defines are read once per analysis
  (`_Defaults`), not once per step."""
  if filtered is None or home is None:
    return None
  read = {n.attr for n in _named_by(_scopes.made_from(filtered, home))
          if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
          and n.value.id != "self"}
  project = analysis.project
  own = project.module_of(step) if step is not None else None
  defaults = analysis.once("flag defaults", lambda: _Defaults(project))
  assert isinstance(defaults, _Defaults)
  for module in defaults.naming(read, own):
    if module.is_test:
      continue  # A test's own parser sets no default of the run.
    scope = project.parsed(module)  # Parsed now if no step asked first.
    if scope is None or module.tree is None:
      continue
    for name, default in defaults.defined(module):
      if name in read:  # The first definition met gives the default.
        return (default, scope) if default is not None else None
  return None


# A flag a module defines and its default (None: it chooses nothing).
_Defined = Tuple[str, Optional[ast.Constant]]


class _Defaults:
  """The modules of a project that define flags, indexed once by the
  flag names their strings write (a flag the filter reads is written in
  a string where it is defined, dashes read as argparse reads them),
  and the flags each defines with their defaults, in the order a walk
  of its tree meets them (read once per module)."""

  def __init__(self, project: _project.Project):
    self._modules = [m for m in project.modules
                     if "DEFINE_" in m.source.text
                     or "add_argument(" in m.source.text]
    self._by_word: Dict[str, List[int]] = {}
    for position, module in enumerate(self._modules):
      # A flag is named by a string where it is defined: `'lr'`,
      # `"--trainable-scopes"` (argparse reads `trainable_scopes`).
      for word in {w.replace("-", "_")
                   for w in _QUOTED.findall(module.source.text)}:
        self._by_word.setdefault(word, []).append(position)
    self._defined: Dict[int, List[_Defined]] = {}

  def naming(self, read: Set[str], own: Optional[_project.Module]
             ) -> List[_project.Module]:
    """The modules defining flags that write a name of `read`, `own`
    first, then in the project's order."""
    positions = {p for name in read for p in self._by_word.get(name, ())}
    return sorted((self._modules[p] for p in sorted(positions)),
                  key=lambda m: m is not own)

  def defined(self, module: _project.Module
              ) -> List[_Defined]:
    """Each flag `module` (parsed) defines, and its default (None when
    it chooses nothing), in the order of a walk of its tree."""
    if id(module) not in self._defined:
      assert module.tree is not None
      found = self._defined[id(module)] = []
      for node in ast.walk(module.tree):
        if isinstance(node, ast.Call) and _names.call_name(node) in _DEFINES:
          name = _flag_name(node)
          if name is not None:
            found.append((name, _default(node, {name})))
    return self._defined[id(module)]


# A string literal that may name a flag: letters, digits, `_` and `-`,
# after at most two leading dashes.
_QUOTED = re.compile(r"""['"]-{0,2}([A-Za-z_][\w-]*)['"]""")


def _flag_name(call: ast.Call) -> Optional[str]:
  """The flag a definition names (`'--trainable-scopes'`:
  `trainable_scopes`)."""
  if not call.args or not isinstance(call.args[0], ast.Constant) or not (
      isinstance(call.args[0].value, str)):
    return None
  return call.args[0].value.lstrip("-").replace("-", "_")


_NAMING = {"get_collection", "trainable_variables", "global_variables",
           "get_variables_to_restore", "get_variables", "startswith",
           "match", "search"}


def _named_by(nodes: Iterator[ast.AST]) -> Iterator[ast.expr]:
  """What names the scopes a filter keeps: split into scopes
  (`FLAGS.trainable_scopes.split(',')`), given to a collection or a name
  test, or tested in a name (`FLAGS.head in v.name`)."""
  for node in nodes:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "split":
      yield node.func.value
    elif isinstance(node, ast.Call) and _names.call_name(node) in _NAMING:
      yield from (*node.args, *(k.value for k in node.keywords))
    elif isinstance(node, ast.Compare) and any(
        isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
      yield node.left


def _default(call: ast.Call, read: Set[str]) -> Optional[ast.Constant]:
  """The non-empty string default of a flag named in `read`
  (`DEFINE_string('trainable_scopes', 'Logits', ...)`,
  `add_argument('--trainable_scopes', default='Logits')`)."""
  if _names.call_name(call) not in _DEFINES or not call.args or not (
      isinstance(call.args[0], ast.Constant)) or not isinstance(
          call.args[0].value, str) or call.args[0].value.lstrip("-").replace(
              "-", "_") not in read:
    return None
  given = [k.value for k in call.keywords if k.arg == "default"]
  if _names.call_name(call) != "add_argument":
    given += call.args[1:2]
  for value in given:
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and (
        value.value.strip()):
      return value
  return None


def never_run(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether a step sits under `if a:` where `a` is only ever `False`
  (`a = False; if(a): ...`, an experiment switched off): it never runs."""
  at = _idiom.position(call)
  return any(start <= at <= end for start, end in scope.once(
      (_switched_off, None, 0), lambda: _switched_off(scope)))


def _switched_off(scope: _scopes.Scope
                  ) -> List[Tuple[Tuple[int, int], Tuple[int, int]]]:
  """Where the bodies of a scope's `if a:` with `a` only ever `False`
  begin and end, read once per scope (every step asks)."""
  found = []
  for node in scope.nodes:
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
      defs = scope.defs.get(node.test.id, [])
      if defs and all(isinstance(d.value, ast.Constant) and (
          d.value.value is False) for d in defs):
        found.append((_idiom.position(node.body[0]), (
            node.body[-1].end_lineno or 0, node.body[-1].end_col_offset or 0)))
  return found


def models_by_flag(flow: Flow, value: Optional[ast.AST]) -> bool:
  """Whether the variables a step trains are added in a loop over a dict
  of models under a flag and a test of the model's name (`for m_name,
  model in self.models.items(): if self.opt.train_pose and 'pose' in
  m_name: weights.extend(model.trainable_weights)`): with the flag off,
  the models of that name are left out."""
  home = flow.origin.get(id(value)) if value is not None else None
  guard = home.guards.get(id(value)) if home is not None else None
  if home is None or not isinstance(guard, ast.BoolOp) or not isinstance(
      guard.op, ast.And) or not any(a_flag(part) for part in guard.values):
    return False
  keys = {loop.target.elts[0].id for loop in home.nodes
          if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call)
          and _names.call_name(loop.iter) == "items" and isinstance(
              loop.target, ast.Tuple) and isinstance(
                  loop.target.elts[0], ast.Name)}
  return any(isinstance(part, ast.Compare) and isinstance(
      part.left, ast.Constant) and isinstance(part.left.value, str) and (
          isinstance(part.ops[0], ast.In)) and isinstance(
              part.comparators[0], ast.Name) and part.comparators[0].id in keys
      for part in guard.values)


def reason(node: ast.AST) -> Optional[str]:
  """What a finding at a flag's choice says about the flag."""
  if isinstance(node, (ast.List, ast.Tuple)) and not node.elts:
    return ("none: the group is emptied under a flag; with it set, its "
            "variables get no update and no optimizer slots")
  if isinstance(node, ast.IfExp):
    return (f"none: chosen by `{ast.unparse(node.test)}`; the filtered side "
            "leaves the other variables without update or slots")
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return (f"none: the flag's default `{node.value}` chooses the scopes that "
            "train; the others get no update and no optimizer slots")
  return None
