"""The project a scan reads: every module under the scanned paths, by its
dotted names, parsed when first needed, and what a name refers to across
them (imports resolved inside the tree, relative ones too).

Nothing is imported or run: a module is its parsed text. A module that
names none of the calls an idiom needs is parsed only if another one
calls into it.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# A file without any of these holds no sink: it is parsed only when another
# file calls into it.
SINK_WORDS = ("apply_gradients", ".apply(", "stop_gradient", "scatter_",
              "assign(", "set_weights", "set_value", "onstraint",
              "minimize", "gradients(", "gradient(", "variables_to_train",
              "create_train_op", "_resource_apply", "_apply_dense",
              "update_step")


@dataclasses.dataclass
class Module:
  """One file of the project.

  Attributes:
    source: Its text, as read.
    names: Its dotted names, longest first (`src.utils.mask`, `utils.mask`,
      `mask`).
    tree: Its syntax tree once parsed (None before, or if it does not).
    scope: Its scopes once parsed.
    error: Why it does not parse, if it does not.
  """

  source: _files.Source
  names: Tuple[str, ...]
  tree: Optional[ast.Module] = None
  scope: Optional[_scopes.Scope] = None
  error: str = ""
  imports: Dict[str, Tuple[str, str]] = dataclasses.field(
      default_factory=dict)  # local name -> (module, attribute or "").
  star: List[str] = dataclasses.field(default_factory=list)

  @property
  def path(self) -> str:
    return self.source.path

  @functools.cached_property
  def is_test(self) -> bool:
    """Whether the file is a test (`test_x.py`, `x_test.py`, under
    `tests/`): it exercises the project's code, it does not train."""
    parts = os.path.normpath(self.path).replace("\\", "/").split("/")
    name = parts[-1].rsplit(".", 1)[0]
    return name.startswith("test_") or name.endswith(("_test", "_tests")) \
        or name == "conftest" or any(p in {"tests", "test"}
                                     for p in parts[:-1])

  @functools.cached_property
  def wanted(self) -> bool:
    """Whether the module may hold a sink, so is scanned for findings."""
    return any(word in self.source.text for word in SINK_WORDS)


Target = Union[Tuple[_scopes.FunctionNode, _scopes.Scope], _scopes.ClassInfo,
               Module]


class Project:
  """The modules of one scan and the names that cross them."""

  def __init__(self, sources: Sequence[_files.Source]):
    self.modules = [Module(s, _dotted_names(s.path)) for s in sources]
    self._by_name: Dict[str, List[Module]] = {}
    self._by_path: Dict[str, Module] = {}
    for module in self.modules:
      self._by_path[os.path.normpath(os.path.abspath(module.path))] = module
      for name in module.names:
        self._by_name.setdefault(name, []).append(module)
    self._callers: Optional[Dict[str, List[Tuple[_scopes.Scope,
                                                 ast.Call]]]] = None
    self._assigned: Optional[Dict[str, List[Tuple[ast.expr,
                                                  _scopes.Scope]]]] = None
    self._found: Dict[Tuple[str, int, int], Optional[Module]] = {}
    self._bases: Dict[int, List[_scopes.ClassInfo]] = {}
    self._scanned: Optional[List[Module]] = None

  def parsed(self, module: Module) -> Optional[_scopes.Scope]:
    """The module's scopes, parsing it the first time (None if it does
    not parse; its `error` says why)."""
    if module.scope is not None or module.error:
      return module.scope
    try:
      module.tree = ast.parse(module.source.text, filename=module.path)
      module.scope = _scopes.collect(module.tree)
    except SyntaxError as error:
      module.error = (f"{module.path}:{error.lineno or 0}: skipped: does not "
                      f"parse ({error.msg}; Python 2?)")
      return None
    except (RecursionError, MemoryError):
      module.error = f"{module.path}: skipped: nested too deeply to parse"
      return None
    for scope in module.scope.all():
      scope.module = module
    _read_imports(module)
    return module.scope

  def scanned(self) -> Iterator[Module]:
    """The modules that may hold a sink, parsed."""
    if self._scanned is None:
      self._scanned = [m for m in self.modules
                       if m.wanted and self.parsed(m) is not None]
    return iter(self._scanned)

  def module_of(self, scope: _scopes.Scope) -> Module:
    found = scope.module
    assert isinstance(found, Module)
    return found

  def find_module(self, name: str, near: Module, level: int = 0
                  ) -> Optional[Module]:
    """The module an import names, seen from `near`."""
    key = (name, id(near), level)
    if key not in self._found:
      self._found[key] = self._find_module(name, near, level)
    return self._found[key]

  def _find_module(self, name: str, near: Module, level: int
                   ) -> Optional[Module]:
    if level:
      folder = os.path.dirname(os.path.abspath(near.path))
      for _ in range(level - 1):
        folder = os.path.dirname(folder)
      base = os.path.join(folder, *name.split(".")) if name else folder
      for path in (base + ".py", os.path.join(base, "__init__.py")):
        found = self._by_path.get(os.path.normpath(path))
        if found is not None:
          return found
      return None
    candidates = self._by_name.get(name, [])
    if not candidates:
      return None
    here = os.path.abspath(near.path)
    return max(candidates, key=lambda m: len(os.path.commonpath(
        [here, os.path.abspath(m.path)])))

  def resolve(self, scope: _scopes.Scope, name: str) -> Optional[Target]:
    """What `name` (a plain or dotted name) refers to from `scope`: a
    function, a class or a module of the project."""
    first, _, rest = name.partition(".")
    target = self._resolve_first(scope, first)
    for part in rest.split(".") if rest else []:
      if not isinstance(target, Module):
        return None
      target = self.member(target, part)
    return target

  def _resolve_first(self, scope: _scopes.Scope, name: str,
                     depth: int = 0) -> Optional[Target]:
    place: Optional[_scopes.Scope] = scope
    while place is not None:
      if name in place.functions:
        return place.functions[name], place
      if name in place.classes:
        return place.classes[name]
      if name in place.defs or name in place.params:
        if place.parent is not None:
          return None
      place = place.parent
    module = scope.module
    if not isinstance(module, Module):
      return None
    if name in module.imports:
      where, attribute = module.imports[name]
      level = len(where) - len(where.lstrip("."))
      found = self.find_module(where.lstrip("."), module, level)
      if found is None:
        return None
      if not attribute:
        return found
      if depth > 8:  # Modules that import each other's names.
        return None
      return self.member(found, attribute, depth=depth + 1) or (
          self.find_module(
          f"{where.lstrip('.')}.{attribute}".lstrip("."), module, level))
    for where in module.star:
      found = self.find_module(where.lstrip("."), module,
                               len(where) - len(where.lstrip(".")))
      if found is not None and found is not module:
        member = self.member(found, name, star=True)
        if member is not None:
          return member
    return None

  def external(self, scope: _scopes.Scope, name: str) -> bool:
    """Whether `name` is an import of a module outside the project
    (`tf`, `np`): nothing it names is followed."""
    module = scope.module
    if not isinstance(module, Module) or name not in module.imports:
      return False
    key = (name, id(module), -1)
    if key not in self._found:
      where, attribute = module.imports[name]
      level = len(where) - len(where.lstrip("."))
      found = self.find_module(where.lstrip("."), module, level)
      if found is None and attribute:
        found = self.find_module(
            f"{where.lstrip('.')}.{attribute}".lstrip("."), module, level)
      self._found[key] = found
    defined = any(name in s.defs or name in s.params
                  for s in _chain(scope))
    return self._found[key] is None and not defined

  def member(self, module: Module, name: str, star: bool = False,
             depth: int = 0) -> Optional[Target]:
    """A top-level function, class or import of `module`."""
    scope = self.parsed(module)
    if scope is None:
      return None
    if name in scope.functions:
      return scope.functions[name], scope
    if name in scope.classes:
      return scope.classes[name]
    if name in module.imports and not star:
      return self._resolve_first(scope, name, depth)
    return None

  def base_classes(self, info: _scopes.ClassInfo
                   ) -> List[_scopes.ClassInfo]:
    """The project classes `info` derives from, nearest first."""
    if id(info.node) in self._bases:
      return self._bases[id(info.node)]
    self._bases[id(info.node)] = []
    found: List[_scopes.ClassInfo] = []
    queue = [info]
    while queue and len(found) < 32:
      current = queue.pop(0)
      for base in current.bases:
        target = self.resolve(current.home, base) if base else None
        if isinstance(target, _scopes.ClassInfo) and target not in found \
            and target is not info:
          found.append(target)
          queue.append(target)
    self._bases[id(info.node)] = found
    return found

  def method(self, info: _scopes.ClassInfo, name: str,
             above: bool = False) -> Optional[_scopes.Scope]:
    """The method `name` of a class (or of its bases only, for `super()`)."""
    classes = self.base_classes(info) if above else [
        info, *self.base_classes(info)]
    for each in classes:
      if name in each.methods:
        return each.methods[name]
    return None

  def attribute(self, info: _scopes.ClassInfo, name: str
                ) -> List[Tuple[ast.expr, _scopes.Scope]]:
    """What `self.name` is assigned in a class and its bases."""
    values: List[Tuple[ast.expr, _scopes.Scope]] = []
    for each in [info, *self.base_classes(info)]:
      values += each.attributes.get(name, [])
    return values

  def callers(self, name: str) -> List[Tuple[_scopes.Scope, ast.Call]]:
    """The calls, in the scanned modules, whose callee is spelled `name`."""
    if self._callers is None:
      self._index()
    assert self._callers is not None
    return self._callers.get(name, [])

  def assigned(self, name: str) -> List[Tuple[ast.expr, _scopes.Scope]]:
    """Every value assigned to a name or attribute spelled `name`, or
    passed as a keyword so named, in the scanned modules."""
    if self._assigned is None:
      self._index()
    assert self._assigned is not None
    return self._assigned.get(name, [])

  def _index(self) -> None:
    callers: Dict[str, List[Tuple[_scopes.Scope, ast.Call]]] = {}
    assigned: Dict[str, List[Tuple[ast.expr, _scopes.Scope]]] = {}
    for module in list(self.scanned()):
      assert module.scope is not None
      for scope in module.scope.all():
        for name, defs in scope.defs.items():
          assigned.setdefault(name.rsplit(".", 1)[-1], []).extend(
              (d.value, scope) for d in defs)
        if scope.cls is not None and scope.cls.home is scope.parent:
          for name, values in scope.cls.attributes.items():
            if values and values[0][1] is scope:
              assigned.setdefault(name[5:], []).extend(values)
        for node in scope.nodes:
          if isinstance(node, ast.Call):
            callers.setdefault(_names.call_name(node), []).append(
                (scope, node))
            for keyword in node.keywords:
              if keyword.arg:
                assigned.setdefault(keyword.arg, []).append(
                    (keyword.value, scope))
    self._callers, self._assigned = callers, assigned


def _chain(scope: _scopes.Scope) -> Iterator[_scopes.Scope]:
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    yield place
    place = place.parent


def _read_imports(module: Module) -> None:
  assert module.scope is not None
  for scope in module.scope.all():
    for node in scope.imports:
      if isinstance(node, ast.Import):
        for alias in node.names:
          if alias.asname:
            module.imports[alias.asname] = (alias.name, "")
          else:
            first = alias.name.split(".")[0]
            module.imports.setdefault(first, (first, ""))
      else:
        where = "." * node.level + (node.module or "")
        for alias in node.names:
          if alias.name == "*":
            module.star.append(where)
          else:
            module.imports[alias.asname or alias.name] = (where, alias.name)


def _dotted_names(path: str) -> Tuple[str, ...]:
  """The names an import may give a file: every tail of its path.

  >>> _dotted_names("repo/src/utils/mask.py")
  ('repo.src.utils.mask', 'src.utils.mask', 'utils.mask', 'mask')
  """
  parts = os.path.normpath(path).replace("\\", "/").split("/")
  parts = [p for p in parts if p not in ("", ".", "..")]
  if not parts:
    return ()
  last = parts[-1].rsplit(".", 1)[0]
  parts[-1] = last
  if last == "__init__":
    parts.pop()
  return tuple(".".join(parts[i:]) for i in range(len(parts))
               if all(p.isidentifier() for p in parts[i:]))
