"""A package copied as a repository's root: its files import themselves
through the package's name (`from icd_coding.modules import decoder`)
while no folder of that name is scanned, every module they name sitting
at the root (or in one folder) of the tree.

An import's first name (its head) that names no folder and no module of
the scanned tree is taken as the project's own package, rooted at one
folder R of the tree, only on this evidence, asked of every import in
the project through that head (`from H.a import x`, `from H import a`,
`import H.a [as m]`, `from H.a.b import x`):

- each resolves below R: `H.a` is `R/a.py` (or `R/a/__init__.py`), and
  the name `x` it imports is defined there (a `def`, a `class` or an
  assignment at its top level; a name it imports in turn does not count)
  or is its submodule `R/a/x.py`; `from H import a` names the module
  `R/a.py` (a name `R/__init__.py` defines is not looked for there);
  a plain `import H` names nothing and is passed over;
- none resolves to the importing module itself;
- R is the one folder every import resolves below (one head, one root):
  an import that resolves nowhere, or two folders both fitting every
  import, leave the head unresolved;
- the imports name at least two distinct modules below R.

A lone import (`from official.utils import decoder` beside the
project's own `utils.py`) is no evidence: it stays unresolved, as does
a head one of whose imports names a module the tree lacks
(`from keras.models import Model` beside a `layers.py`). Folders are
named by their paths below the scanned tree (the folder all scanned
files share): a folder above it, or how the scan's path was written,
never decides.

The imports are read from each module's text (one pass over the
project, once a head is first asked about); a head's root is found
once.
"""

from __future__ import annotations

import os
import re
from typing import (Dict, Generic, List, Mapping, Optional, Protocol,
                    Sequence, Set, Tuple, TypeVar)

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scopes


class _Module(Protocol):
  """What is read of one of the project's modules (`_project.Module`)."""
  source: _files.Source
  imports: Dict[str, Tuple[str, str]]

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


# An absolute import statement: `from a.b import (x, y as z)` or
# `import a.b as c, d`.
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*(?:[ \t]*\.[ \t]*\w+)*)[ \t]+import"
    r"[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))", re.MULTILINE)


class Renamed(Generic[M]):
  """The roots of a project's renamed package heads, found when asked."""

  def __init__(self, project: _Project[M]):
    self._project = project
    # head -> (the importer, the dotted module, the name or "") each.
    self._imports: Optional[Dict[str, List[Tuple[M, str, str]]]] = None
    self._roots: Dict[str, Optional[str]] = {}
    self._top = ""
    self._names: Set[str] = set()  # Folders and modules below the top.

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
    if not head.isidentifier() or head in self._names:
      return None
    common: Optional[Set[str]] = None
    named: Dict[str, Set[int]] = {}
    for importer, where, attribute in self._imports.get(head, []):
      if not attribute and "." not in where:
        continue  # `import H`: names no module of it.
      fits = self._roots_of(importer, where, attribute)
      common = set(fits) if common is None else common & set(fits)
      if not common:
        return None
      for root, module in fits.items():
        named.setdefault(root, set()).add(id(module))
    if common is None or len(common) != 1:
      return None
    root = common.pop()
    return root if len(named[root]) >= 2 else None

  def _roots_of(self, importer: M, where: str,
                attribute: str) -> Dict[str, M]:
    """Each folder below which the import resolves -> the module it names
    there."""
    rest = where.partition(".")[2]
    fits: Dict[str, M] = {}
    if attribute:  # `from H.a import x`: `x` in `a`, or module `a.x`.
      dotted = f"{rest}.{attribute}" if rest else attribute
      fits = self._placed(dotted)
      if rest:
        for root, module in self._placed(rest).items():
          if root not in fits and self._defines(module, attribute):
            fits[root] = module
    elif rest:  # `import H.a.b`.
      fits = self._placed(rest)
    return {r: m for r, m in fits.items() if m is not importer}

  def _placed(self, dotted: str) -> Dict[str, M]:
    """Each folder R of the tree with a module `R/dotted` -> that module."""
    placed: Dict[str, M] = {}
    depth = dotted.count(".") + 1
    for module in self._project.by_name.get(dotted, []):
      path = os.path.abspath(module.path)
      if os.path.basename(path) == "__init__.py":
        path = os.path.dirname(path)
      root = path
      for _ in range(depth):
        root = os.path.dirname(root)
      if self._below(root):
        placed[root] = module
    return placed

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
    base = os.path.join(root, *rest.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
      found = self._project.by_path.get(os.path.normpath(path))
      if found is not None:
        return found
    return None

  def _index(self) -> None:
    """Every absolute import of the project, by its head; the tree's top
    folder and the names of the folders and modules below it."""
    modules = self._project.modules
    folders = [os.path.dirname(os.path.abspath(m.path)) for m in modules]
    try:
      self._top = os.path.commonpath(folders) if folders else ""
    except ValueError:  # Paths on two drives: no folder holds them all.
      self._imports = {}
      return
    for module, folder in zip(modules, folders):
      below = os.path.relpath(os.path.abspath(module.path), self._top)
      for part in below.split(os.sep):
        self._names.add(part[:-3] if part.endswith(".py") else part)
    imports: Dict[str, List[Tuple[M, str, str]]] = {}
    for module in modules:
      text = module.source.text
      if "import" not in text:
        continue
      for match in _IMPORT.finditer(text):
        where, names, plain = match.groups()
        if where is not None:
          where = re.sub(r"\s", "", where)
          for alias in names.strip("()").replace("\\", " ").split(","):
            name = alias.split()[0] if alias.split() else ""
            if name.isidentifier():
              imports.setdefault(where.split(".")[0], []).append(
                  (module, where, name))
        else:
          for alias in plain.replace("\\", " ").split(","):
            dotted = alias.split()[0] if alias.split() else ""
            if dotted and all(p.isidentifier() for p in dotted.split(".")):
              imports.setdefault(dotted.split(".")[0], []).append(
                  (module, dotted, ""))
    self._imports = imports
