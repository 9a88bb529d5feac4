"""A package copied as a repository's root: its files import themselves
through the package's name (`from icd_coding.modules import decoder`)
while no folder of that name is scanned, every module they name sitting
at the root (or in one folder) of the tree.

An import's first name (its head) that names no folder of the scanned
tree is taken as the project's own package, rooted at one folder R of
the tree, only on this evidence, asked of every absolute import in the
project through that head (`from H.a import x`, `from H import a`,
`import H.a [as m]`, `from H.a.b import x`, `from H.a import *`):

- the package refers to itself: a module the imports through H name
  below R (`H.a` is `R/a.py`) itself imports through H;
- each import resolves below R: `H.a` is `R/a/__init__.py` or, if there
  is none, `R/a.py` (the package wins, as in Python), and the name `x`
  it imports is defined there (a `def`, a `class` or an assignment at
  its top level; a name it imports in turn does not count) or is its
  submodule `R/a/x.py`; `from H import a` names the module `R/a`
  (a name `R/__init__.py` defines is not looked for there); a plain
  `import H` names nothing and is passed over;
- none resolves to the importing module itself;
- R is the one folder every import resolves below (one head, one root):
  an import that resolves nowhere, or two folders both fitting every
  import, leave the head unresolved;
- the imports name at least two distinct modules below R.

Imports of a third-party package whose module names match the project's
files (`from bert import modeling` and `from bert import tokenization`
beside copied `modeling.py` and `tokenization.py`) stay unresolved when
none of those files imports through `bert`. Folders are named by their
paths below the scanned tree (the folder all scanned files share): a
folder above it, or how the scan's path was written, never decides.
Relative imports are no evidence; the project's packaging is not read.

The imports are those the syntax trees record (`Module.imports`,
`dotted`, `star`: strings and comments never count), indexed once per
project by head; a root is looked for only at the folders above a module
importing through the head, each asked once per import, so the work
grows with the project, not with the product of its modules.
"""

from __future__ import annotations

import os
from typing import (Dict, Generic, List, Mapping, Optional, Protocol,
                    Sequence, Set, Tuple, TypeVar)

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scopes


class _Module(Protocol):
  """What is read of one of the project's modules (`_project.Module`)."""
  source: _files.Source
  imports: Dict[str, Tuple[str, str]]
  dotted: Set[str]
  star: List[str]

  @property
  def path(self) -> str: ...


M = TypeVar("M", bound=_Module)


class _Project(Protocol[M]):
  """What is read of the project (`_project.Project`), which holds a
  `Renamed`."""

  @property
  def modules(self) -> Sequence[M]: ...

  @property
  def by_name(self) -> Mapping[str, Sequence[M]]: ...

  @property
  def by_path(self) -> Mapping[str, M]: ...

  def parsed(self, module: M) -> Optional[_scopes.Scope]: ...


class Renamed(Generic[M]):
  """The roots of a project's renamed package heads, found when asked."""

  def __init__(self, project: _Project[M]):
    self._project = project
    # head -> (dotted module, name or "") -> the modules importing it
    # (by id).
    self._imports: Optional[Dict[str, Dict[Tuple[str, str],
                                           Dict[int, M]]]] = None
    self._roots: Dict[str, Optional[str]] = {}
    self._top = ""
    self._folders: Set[str] = set()  # Folder names below the top.

  def module(self, name: str, near: M) -> Optional[M]:
    """The module a dotted `name` (`H.a.b`) imported from `near` names
    when `H` is a renamed package head (None otherwise, or when it names
    `near` itself)."""
    head, _, rest = name.partition(".")
    if not rest or rest not in self._project.by_name:
      return None  # No module of the tree has that tail.
    root = self.root(head)
    if root is None:
      return None
    found = self._at(root, rest)
    return None if found is None or found is near else found

  def root(self, head: str) -> Optional[str]:
    """The folder (absolute) `head` names as the project's package, once
    the evidence of the module docstring holds; None otherwise."""
    if head not in self._roots:
      self._roots[head] = self._find_root(head)
    return self._roots[head]

  def _find_root(self, head: str) -> Optional[str]:
    if self._imports is None:
      self._index()
    assert self._imports is not None
    if not head.isidentifier() or head in self._folders:
      return None
    asked = {key: importers
             for key, importers in self._imports.get(head, {}).items()
             if key[1] or "." in key[0]}  # `import H` names nothing.
    # The modules the imports name (`H.a`, and `H.a.x` for `from H.a
    # import x`), by their dotted names below the root.
    named: Set[str] = set()
    for where, attribute in asked:
      rest = where.partition(".")[2]
      if rest:
        named.add(rest)
      if attribute:
        named.add(f"{rest}.{attribute}" if rest else attribute)
    # The folders R where a module importing through H is named `H.rel`.
    candidates: Set[str] = set()
    for importer in {i: m for ms in asked.values()
                     for i, m in ms.items()}.values():
      path = os.path.abspath(importer.path)
      parts: List[str] = []
      if os.path.basename(path) != "__init__.py":
        parts.append(os.path.basename(path)[:-3])
      folder = os.path.dirname(path)
      while self._below(folder):
        if parts and ".".join(reversed(parts)) in named:
          candidates.add(folder)
        if folder == self._top:
          break
        parts.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    fitting = [root for root in sorted(candidates)
               if self._fits(root, asked)]
    return fitting[0] if len(fitting) == 1 else None

  def _fits(self, root: str,
            asked: Mapping[Tuple[str, str], Mapping[int, M]]) -> bool:
    """Whether every import `asked` resolves below `root`, none to its
    importer, naming two distinct modules or more (stops at the first
    import that does not)."""
    named: Set[int] = set()
    for (where, attribute), importers in asked.items():
      rest = where.partition(".")[2]
      found: Optional[M] = None
      if attribute and rest:  # `from H.a import x`: `x` in `a`, or `a.x`.
        found = self._at(root, f"{rest}.{attribute}")
        if found is None:
          module = self._at(root, rest)
          if module is not None and self._defines(module, attribute):
            found = module
      elif attribute:  # `from H import a`.
        found = self._at(root, attribute)
      else:  # `import H.a.b`, `from H.a import *`.
        found = self._at(root, rest)
      if found is None or id(found) in importers:
        return False
      named.add(id(found))
    return len(named) >= 2

  def _below(self, folder: str) -> bool:
    return folder == self._top or folder.startswith(self._top + os.sep)

  def _defines(self, module: M, name: str) -> bool:
    """Whether `module` defines `name` at its top level (not an import)."""
    scope = self._project.parsed(module)
    if scope is None:
      return False
    return name in scope.functions or name in scope.classes or (
        name in scope.defs and name not in module.imports)

  def _at(self, root: str, rest: str) -> Optional[M]:
    """The module `rest` names below `root`: a package (its
    `__init__.py`) before a module of the same name, as Python does."""
    base = os.path.join(root, *rest.split("."))
    for path in (os.path.join(base, "__init__.py"), base + ".py"):
      found = self._project.by_path.get(os.path.normpath(path))
      if found is not None:
        return found
    return None

  def _index(self) -> None:
    """Every absolute import of the project (as its syntax tree records
    it), by its head; the tree's top folder and the names of the folders
    below it."""
    modules = self._project.modules
    folders = [os.path.dirname(os.path.abspath(m.path)) for m in modules]
    try:
      self._top = os.path.commonpath(folders) if folders else ""
    except ValueError:  # Paths on two drives: no folder holds them all.
      self._imports = {}
      return
    for folder in set(folders):
      below = os.path.relpath(folder, self._top)
      if below != os.curdir:
        self._folders.update(below.split(os.sep))
    imports: Dict[str, Dict[Tuple[str, str], Dict[int, M]]] = {}

    def add(module: M, where: str, attribute: str) -> None:
      if where and not where.startswith(".") and all(
          p.isidentifier() for p in where.split(".")):
        imports.setdefault(where.split(".")[0], {}).setdefault(
            (where, attribute), {})[id(module)] = module

    for module in modules:
      if "import" not in module.source.text or (
          self._project.parsed(module) is None):
        continue
      for where, attribute in set(module.imports.values()):
        add(module, where, attribute)
      for where in set(module.dotted) | set(module.star):
        add(module, where, "")
    self._imports = imports
