"""The project a scan reads: every module under the scanned paths, by its
dotted names, parsed when first needed, and what a name refers to across
them (imports resolved inside the tree, relative ones too).

Nothing is imported or run: a module is its parsed text. A module that
names none of the calls an idiom needs is parsed only if another one
calls into it.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import itertools
import os
import re
from typing import (Callable, Dict, FrozenSet, Iterable, Iterator, List,
                    Optional, Sequence, Set, Tuple, Union)

from tfpartial._tools.scan import _deep
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _renamed
from tfpartial._tools.scan import _reread
from tfpartial._tools.scan import _scopes

# A file without any of these holds no sink: it is parsed only when another
# file calls into it.
SINK_WORDS = ("apply_gradients", "stop_gradient", "scatter_",
              "assign(", "set_weights", "set_value", "minimize",
              "gradients(", "gradient(", "variables_to_train",
              "trainable_variables=",
              "create_train_op", "optimize_clones", "optimize_loss",
              "_resource_apply", "get_updates(",
              "_apply_dense", "update_step", "_trainable_weights.append",
              "_trainable_weights.extend", "gradient_transformers",
              "transform_grads_fn", "trainable_weights = ", "apply_optimizer")
# A Keras constraint that may re-mask (a lambda, one a function makes, a
# function or method named, not a constraint passed on, or a class named
# so), and an optimizer's `apply(grads, ...)`.
SINK_PATTERN = re.compile(
    r"constraint\s*=\s*(?:lambda|[A-Za-z_][\w.]*\(|(?:self\.)?"
    r"(?!None\b|(?:\w*_)?constraints?\b)[A-Za-z_]\w*\s*[,)])|"
    r"class\s+\w*(?:Constraint|Mask)\w*\s*\(|"
    r"\(\s*[\w.]*Constraint\s*\)|\.apply\([^)]*grad|"
    r"constant\(\s*[\w.]+\[[^\n:]*:|"  # A table's rows made a constant.
    r"constant\((?:value=)?\s*(?:np|numpy)\.\w+\(")  # Rows from data.

# One of these is in any text `SINK_PATTERN` matches (the pattern, which
# tries each place of a text, is run only then).
_PATTERN_WORDS = ("constraint", "Constraint", "Mask", ".apply(", "constant(")


@dataclasses.dataclass(eq=False)
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
  # What it was read as when Python does not parse it as written ("a
  # Python 2 file"): no mechanical port then, its text is not the file's.
  rewritten: str = ""
  # The blocks left out when it parses only without them (`_blocks`), or
  # the conflicts it was read through (`_conflicts`).
  dropped: str = ""
  # 2 when each side of its conflicts is read as its own version.
  versions: int = 1
  imports: Dict[str, Tuple[str, str]] = dataclasses.field(
      default_factory=dict)  # local name -> (module, attribute or "").
  star: List[str] = dataclasses.field(default_factory=list)
  # The dotted modules a plain `import a.b` names (bound as `a`).
  dotted: Set[str] = dataclasses.field(default_factory=set)
  _word_lines: Dict[str, Tuple[int, ...]] = dataclasses.field(
      default_factory=dict)
  _assigns: Dict[Tuple[int, str], bool] = dataclasses.field(
      default_factory=dict)

  @property
  def path(self) -> str:
    return self.source.path

  @functools.cached_property
  def _line_starts(self) -> List[int]:
    """The offset in `text` where each line starts (Python's line ends)."""
    text = self.source.text
    if "\r" in text:
      return [0, *(m.end() for m in _LINE_END.finditer(text))]
    # Only `\n`: each line starts past the one before and its newline.
    pieces = text.split("\n")
    pieces.pop()
    return [0, *itertools.accumulate(len(p) + 1 for p in pieces)]

  def lines_of(self, words: Iterable[str]) -> List[int]:
    """The lines where one of `words` is written (as a whole word)."""
    found: Set[int] = set()
    for word in words:
      found.update(self._lines_of_word(word))
    return sorted(found)

  def _lines_of_word(self, word: str) -> Tuple[int, ...]:
    """The lines where `word` is written as a whole word (found once)."""
    known = self._word_lines.get(word)
    if known is None:
      text, starts = self.source.text, self._line_starts
      lines = []
      at = text.find(word)
      while at >= 0:
        end = at + len(word)
        if (at == 0 or not _is_word(text[at - 1])) and (
            end >= len(text) or not _is_word(text[end])):
          lines.append(bisect.bisect_right(starts, at))
        at = text.find(word, end)
      known = self._word_lines[word] = tuple(lines)
    return known

  def assigns(self, line: int, attribute: str) -> bool:
    """Whether `line` may assign `self.attribute` (or add to it); each
    answered once (a class's lines are asked of every `self.x` read)."""
    known = self._assigns.get((line, attribute))
    if known is None:
      known = self._assigns[(line, attribute)] = self._assigning(
          line, attribute)
    return known

  def _assigning(self, line: int, attribute: str) -> bool:
    starts, text = self._line_starts, self.source.text
    begin = starts[line - 1] if line - 1 < len(starts) else len(text)
    end = starts[line] if line < len(starts) else len(text)
    code, written = text[begin:end], f"self.{attribute}"
    at = code.find(written)
    while at >= 0:  # `self.x` as a word, then what assigns it.
      if _BOUNDARY.match(code, at) and _ASSIGNING.match(
          code, at + len(written)):
        return True
      at = code.find(written, at + 1)
    return False

  @functools.cached_property
  def _outline(self) -> List[Tuple[int, int, Tuple[ast.AST, ...]]]:
    """(first line of its body, last line, the defs around it, outermost
    first) for each function and class, by first line."""
    found: List[Tuple[int, int, Tuple[ast.AST, ...]]] = []
    if self.tree is None:
      return found
    stack: List[Tuple[ast.AST, Tuple[ast.AST, ...]]] = [
        (s, ()) for s in reversed(self.tree.body)]
    while stack:
      node, around = stack.pop()
      inner = around
      if isinstance(node, _DEFS):
        inner = (*around, node)
        found.append((_body_line(node), node.end_lineno or node.lineno,
                      inner))
      fields = _BLOCK_FIELDS.get(type(node))
      if fields is None:  # Most statements hold no block: asked once.
        fields = _BLOCK_FIELDS[type(node)] = tuple(
            f for f in ("body", "orelse", "finalbody", "handlers", "cases")
            if f in type(node)._fields)
      for field in fields:
        block = getattr(node, field, None)
        if isinstance(block, list):
          stack.extend((s, inner) for s in reversed(block)
                       if isinstance(s, (ast.stmt, ast.excepthandler,
                                         ast.match_case)))
    found.sort(key=lambda item: item[0])
    return found

  @functools.cached_property
  def _innermost(self) -> List[int]:
    """For each line, the index in `_outline` of the innermost function or
    class whose body holds it (-1: the module's own code)."""
    count = len(self._line_starts) + 1
    innermost = [-1] * (count + 1)
    for index, (first, last, _) in enumerate(self._outline):
      # Sorted by first line, an inner one comes after the one around it.
      innermost[first:min(last, count) + 1] = [index] * (
          min(last, count) - first + 1)
    return innermost

  def enclosing(self, line: int) -> Tuple[ast.AST, ...]:
    """The functions whose body holds `line`, outermost first (a method's
    scope is in the scope around its class: classes are left out)."""
    innermost = self._innermost
    index = innermost[line] if 0 <= line < len(innermost) else -1
    if index < 0:
      return ()
    return tuple(n for n in self._outline[index][2]
                 if isinstance(n, _FUNCTIONS))

  def functions(self) -> List[Tuple[ast.AST, ...]]:
    """The path (outermost first) to each function of the module."""
    return [path for _, _, path in self._outline
            if isinstance(path[-1], _FUNCTIONS)]

  def add_import(self, node: Union[ast.Import, ast.ImportFrom]) -> None:
    """Records what an import (in any function, as it is read) names."""
    if isinstance(node, ast.Import):
      for alias in node.names:
        if alias.asname:
          self.imports[alias.asname] = (alias.name, "")
        else:
          first = alias.name.split(".")[0]
          self.imports.setdefault(first, (first, ""))
          if first != alias.name:
            self.dotted.add(alias.name)
      return
    where = "." * node.level + (node.module or "")
    for alias in node.names:
      if alias.name == "*":
        self.star.append(where)
      else:
        self.imports[alias.asname or alias.name] = (where, alias.name)

  @functools.cached_property
  def is_test(self) -> bool:
    """Whether the file is a test (`test_x.py` or `x_test.py` that is no
    training script, or any file under `tests/`) or a helper of the tests
    (`tf_test_utils.py`, `testing_utils.py`): it exercises the project's
    code, it does not train. A file named `test_x.py` or `x_test.py` is a
    script when its syntax tree runs something at top level or under
    `if __name__ == "__main__":` and it imports no test framework, bases
    no class on a framework's `TestCase` or `Benchmark` and calls no test
    runner: `train_and_eval_and_test.py` trains, evaluates, then tests on
    held-out data, its `def test(sess):` an evaluation."""
    parts = os.path.normpath(self.path).replace("\\", "/").split("/")
    name = parts[-1].rsplit(".", 1)[0]
    return (name.startswith("test_") or name.endswith((
        "_test", "_tests"))) and not self._is_script or name.endswith((
            "test_util", "test_utils", "testing_utils")) \
        or name in {"conftest", "testing"} or any(
            p in {"tests", "test"} for p in parts[:-1])

  @property
  def _is_script(self) -> bool:
    """Whether a file named like a test is a script (read from its syntax
    tree, once): see `is_test`. A file Python does not parse is read as
    the project reads it whole (`_reread`: Python 2, merge conflicts), so
    the answer does not hang on whether the project had parsed it yet; a
    file read only without blocks that do not parse (its test case, its
    runner may be what was left out) or by no reader is a test."""
    if self.rewritten == _reread.WITHOUT_BLOCKS:
      return False
    tree = self.tree
    if tree is None:
      try:
        tree = ast.parse(self.source.text)
      except (SyntaxError, ValueError):
        try:
          read = _reread.read(self.source.text, self.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
          return False
        if read.tree is None or read.rewritten == _reread.WITHOUT_BLOCKS:
          return False
        tree = read.tree
    return _is_script(tree)

  @functools.cached_property
  def words(self) -> FrozenSet[str]:
    """The words its text writes, found once."""
    text = self.source.text
    if text.isascii():  # Faster: all that is no word made a space.
      return frozenset(text.translate(_SPACED).split())
    return frozenset(_WORD.findall(text))

  @functools.cached_property
  def defined(self) -> FrozenSet[str]:
    """The words its text writes after `def` (the functions it may
    define), found once."""
    text = self.source.text
    return frozenset(found.group(1) for found in _DEFINED.finditer(text)
                     if _starts_word(text, found.start()))

  @functools.cached_property
  def wanted(self) -> bool:
    """Whether the module may hold a sink, so is scanned for findings."""
    text = self.source.text
    return any(word in text for word in SINK_WORDS) or any(
        word in text for word in _PATTERN_WORDS) and (
            SINK_PATTERN.search(text) is not None)


# A function whose name more modules write than this is not followed back
# to its callers.
MAX_CALLER_MODULES = 12
# After this many questions of `all_modules_with`, every module's words
# are indexed (before, each text is searched for the words asked).
_INDEX_AFTER = 64
_LINE_END = re.compile(r"\r\n|\r|\n")
_WORD = re.compile(r"\w+")
# The modules of test frameworks (a module under one counts too).
_TEST_MODULES = ("unittest", "pytest", "nose", "absl.testing",
                 "tensorflow.python.platform.test",
                 "tensorflow.python.framework.test_util")
# Where a framework's `TestCase`, `Benchmark` and runner `main` are
# defined, read through a file's imports (`tf.test` is `tensorflow.test`).
_TEST_HOLDERS = _TEST_MODULES + ("tensorflow.test", "tensorflow.compat.v1.test",
                                 "tensorflow.compat.v2.test")
# What a training script's top-level code calls to train: a method of the
# API (`sess.run`, `model.fit`, `estimator.train`) or a function of the file.
_RUN_METHODS = frozenset({"run", "fit", "fit_generator", "train",
                          "train_on_batch", "minimize", "apply_gradients",
                          "train_and_evaluate"})
_WORD_CHARACTER = re.compile(r"\w")
# An ASCII text's characters that are no word's, made spaces.
_SPACED = str.maketrans({chr(c): " " for c in range(128)
                         if not (chr(c).isalnum() or chr(c) == "_")})
# The word after each `def` (a lookahead: `def def f` names `def` and `f`)
# where a word starts (`_starts_word`: faster than a leading `\b`).
_DEFINED = re.compile(r"def\s+(?=(\w+))")
# A star import: a package's `__init__.py` re-exports its parts' names.
_STAR_IMPORT = re.compile(r"\bimport[ \t]+\*")
_CLASS_BASES = re.compile(r"^[ \t]*class\s+\w+\s*\(([^)]*)\)", re.M)
_ASSIGNED = re.compile(
    r"(\w+)\s*(?:\+)?=(?!=)\s*\(?\s*(?:[\w.]+(?:\([^()\n]*\))?\.)?"
    r"(?:minimize|apply_gradients|"
    r"scatter_update|scatter_nd_update|assign|set_weights|set_value|"
    r"batch_set_value)\s*\(")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# A statement's kind -> the fields of those its kind has that hold blocks.
_BLOCK_FIELDS: Dict[type, Tuple[str, ...]] = {}


# What follows `self.x` where a line may assign it (or add to it); one
# pattern for every attribute, matched where `self.x` is found.
_ASSIGNING = re.compile(r"\b\s*(\[[^\]]*\]\s*)?([-+*/|&]?=(?!=)|,|\)|"
                        r"\.(append|extend|insert|add|update)\b)")
_BOUNDARY = re.compile(r"\b")


def _is_word(character: str) -> bool:
  return character.isalnum() or character == "_"


def at_word_start(pattern: "re.Pattern[str]", text: str) -> bool:
  """Whether `pattern` (each match of which begins with a word
  character) matches in `text` where a word starts: as `\\b` before it
  would, but searched by its own first letters (a pattern led by `\\b`
  is tried at every place of the text).

  >>> pad = re.compile(r"pad\\s*\\(")
  >>> at_word_start(pad, "x = zero_pad(w)"), at_word_start(pad, "tf.pad(w)")
  (False, True)
  """
  found = pattern.search(text)
  while found is not None:
    if _starts_word(text, found.start()):
      return True
    found = pattern.search(text, found.start() + 1)
  return False


def _starts_word(text: str, at: int) -> bool:
  """Whether no word character stands before `at` (`\\b` before a word
  character at `at`)."""
  return at == 0 or not _WORD_CHARACTER.match(text, at - 1)


Target = Union[Tuple[_scopes.FunctionNode, _scopes.Scope], _scopes.ClassInfo,
               Module]


class Project:
  """The modules of one scan and the names that cross them."""

  def __init__(self, sources: Sequence[_files.Source], version: int = 0):
    # Which version of a file read twice through its conflicts (`_reread`).
    self.version = version
    self.modules = [Module(s, _dotted_names(s.path)) for s in sources]
    self._by_name: Dict[str, List[Module]] = {}
    self._by_path: Dict[str, Module] = {}
    for module in self.modules:
      self._by_path[os.path.normpath(os.path.abspath(module.path))] = module
      for name in module.names:
        self._by_name.setdefault(name, []).append(module)
    self._callers: Dict[str, List[Tuple[_scopes.Scope, ast.Call]]] = {}
    self._words: Optional[Dict[str, List[int]]] = None
    # Word -> the positions in `modules` of those writing it (all modules).
    self._all_words: Optional[Dict[str, List[int]]] = None
    self._asked = 0  # How often `all_modules_with` was asked.
    # Word after `def` -> the positions in `modules` of those writing it.
    self._definers: Optional[Dict[str, List[int]]] = None
    self._positions: Dict[int, int] = {
        id(m): p for p, m in enumerate(self.modules)}
    self._assigned_from: Dict[FrozenSet[str], Set[str]] = {}
    self._assigned: Dict[str, List[Tuple[ast.expr, _scopes.Scope]]] = {}
    self._found: Dict[Tuple[str, int, int], Optional[Module]] = {}
    self._bases: Dict[int, List[_scopes.ClassInfo]] = {}
    self._attributes_read: Set[Tuple[int, str]] = set()
    self._scanned: Optional[List[Module]] = None
    self._scanned_id_set: Optional[Set[int]] = None
    self._subclasses: Dict[int, List[_scopes.ClassInfo]] = {}
    self._deriving: Optional[Dict[str, List[Module]]] = None
    self._scope_calls: Dict[int, List[Tuple[str, ast.Call]]] = {}
    # (scope, name) -> whether the scope or one around it binds the name.
    self._defined: Dict[Tuple[int, str], bool] = {}
    # (module, name, star) -> the member, searched once (star imports chain
    # through whole packages).
    self._members: Dict[Tuple[int, str, bool], Optional[Target]] = {}
    # A package copied as the tree's root, imported by its name.
    self._renamed: _renamed.Renamed[Module] = _renamed.Renamed(self)

  @property
  def by_name(self) -> Dict[str, List[Module]]:
    """Dotted name -> the modules it may name (every tail of a path)."""
    return self._by_name

  @property
  def by_path(self) -> Dict[str, Module]:
    """Absolute normalized path -> its module."""
    return self._by_path

  def parsed(self, module: Module) -> Optional[_scopes.Scope]:
    """The module's scopes, parsing it the first time (None if it does
    not parse; its `error` says why)."""
    if module.scope is not None or module.error:
      return module.scope
    try:
      try:
        taken = module.source.tree  # Parsed as it was read: taken once.
        module.tree = taken.pop() if taken else ast.parse(
            module.source.text, filename=module.path)
      except SyntaxError:
        read = _reread.read(module.source.text, module.path, self.version)
        module.tree, module.rewritten, module.dropped, module.versions = read
        if module.tree is None:
          raise
      _deep.cut(module.tree)  # Before any check walks it.
      module.scope = _scopes.collect(module.tree, module)
    except SyntaxError as error:
      module.error = (f"{module.path}:{error.lineno or 0}: skipped: does not "
                      f"parse ({error.msg})")
      return None
    except (RecursionError, MemoryError):
      module.error = f"{module.path}: skipped: nested too deeply to parse"
      return None
    return module.scope

  def scanned(self) -> Iterator[Module]:
    """The modules that may hold a sink, parsed."""
    if self._scanned is None:
      self._scanned = [m for m in self.modules
                       if m.wanted and self.parsed(m) is not None]
    return iter(self._scanned)

  def _scanned_ids(self) -> Set[int]:
    """The ids of `scanned()`'s modules, found once (each lookup of a
    project's modules asks)."""
    if self._scanned_id_set is None:
      self._scanned_id_set = {id(m) for m in self.scanned()}
    return self._scanned_id_set

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
    if not candidates:  # Through a package copied as the root (`_renamed`).
      return self._renamed.module(name, near)
    here = os.path.abspath(near.path)
    return max(candidates, key=lambda m: len(os.path.commonpath(
        [here, os.path.abspath(m.path)])))

  def resolve(self, scope: _scopes.Scope, name: str) -> Optional[Target]:
    """What `name` (a plain or dotted name) refers to from `scope`: a
    function, a class or a module of the project."""
    first, _, rest = name.partition(".")
    target = self._resolve_first(scope, first)
    parts = rest.split(".") if rest else []
    if target is None and parts:  # `import H.a` then `H.a.f`, `H` renamed.
      target, parts = self._renamed_chain(scope, first, parts)
    for part in parts:
      if not isinstance(target, Module):
        return None
      target = self.member(target, part)
    return target

  def _renamed_chain(self, scope: _scopes.Scope, first: str,
                     parts: List[str]
                     ) -> Tuple[Optional[Target], List[str]]:
    """The module `first.parts[0]...` names when `first` is a package
    copied as the tree's root imported whole (`import H.a`), and the parts
    left to look up in it."""
    module = scope.module
    if not isinstance(module, Module) or (
        module.imports.get(first) != (first, "")) or any(
            first in s.defs or first in s.params for s in _chain(scope)):
      return None, []
    for end in range(len(parts), 0, -1):
      found = self._renamed.module(
          ".".join([first] + parts[:end]), module)
      if found is not None:
        return found, parts[end:]
    return None, []

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
      if found is None and attribute:  # A namespace package's module
        return self.find_module(  # (`from pkg import sub`, no __init__).
            f"{where.lstrip('.')}.{attribute}".lstrip("."), module, level)
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

  def holds_module(self, scope: _scopes.Scope, name: str) -> bool:
    """Whether a module of the project has the file name of the module
    that `name` is imported as (`from aster.utils import variables_helper`
    with the project's root folder named otherwise)."""
    module = scope.module
    if not isinstance(module, Module) or name not in module.imports:
      return False
    where, attribute = module.imports[name]
    last = attribute or where.rsplit(".", 1)[-1]
    return bool(last) and last in self._by_name

  def imported_values(self, scope: _scopes.Scope, name: str
                      ) -> Optional[List[Tuple[ast.expr, _scopes.Scope]]]:
    """What `name`, imported from a module of the project
    (`from masks import mask`), is assigned at that module's top level,
    with its scope ([] for a function, a class, a name it imports in turn
    or a module that does not parse); None when `name` is not such an
    import here."""
    module = scope.module
    if not isinstance(module, Module) or name not in module.imports or any(
        name in s.defs or name in s.params for s in _chain(scope)):
      return None
    where, attribute = module.imports[name]
    if not attribute:
      return None
    found = self.find_module(where.lstrip("."), module,
                             len(where) - len(where.lstrip(".")))
    if found is None:
      return None
    top = self.parsed(found)
    return [] if top is None else [
        (d.value, top) for d in top.defs.get(attribute, [])]

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
      if found is None and not attribute:  # `import H.a`, `H` renamed.
        found = next((m for m in (
            self._renamed.module(d, module) for d in sorted(module.dotted)
            if d.startswith(where + ".")) if m is not None), None)
      self._found[key] = found
    place = (id(scope), name)
    defined = self._defined.get(place)
    if defined is None:
      defined = self._defined[place] = any(
          name in s.defs or name in s.params for s in _chain(scope))
    return self._found[key] is None and not defined

  def member(self, module: Module, name: str, star: bool = False,
             depth: int = 0) -> Optional[Target]:
    """A top-level function, class or import of `module`."""
    if depth:
      return self._member(module, name, star, depth)
    key = (id(module), name, star)
    if key not in self._members:
      self._members[key] = self._member(module, name, star, 0)
    return self._members[key]

  def _member(self, module: Module, name: str, star: bool, depth: int
              ) -> Optional[Target]:
    scope = self.parsed(module)
    if scope is None:
      return None
    if name in scope.functions:
      return scope.functions[name], scope
    if name in scope.classes:
      return scope.classes[name]
    if name in module.imports and (not star or _exported(scope, name)):
      return self._resolve_first(scope, name, depth)
    if depth > 8:
      return None
    # A star import re-exports: a package's `from .ops import *`, a
    # module's `from modules import *` that another star-imports in turn.
    for where in module.star:
      found = self.find_module(where.lstrip("."), module,
                               len(where) - len(where.lstrip(".")))
      if found is not None and found is not module and (
          name in found.source.text or _passes_on(found)):
        # Parsed only if it may define the name or pass it on.
        member = self.member(found, name, star=True, depth=depth + 1)
        if member is not None:
          return member
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

  def overriding(self, info: _scopes.ClassInfo, name: str
                 ) -> List[_scopes.Scope]:
    """The methods `name` of the project's subclasses of `info` (those
    `self.name(...)` may dispatch to), found among the modules naming
    the class."""
    return [c.methods[name] for c in self.subclasses(info)
            if name in c.methods]

  def subclasses(self, info: _scopes.ClassInfo) -> List[_scopes.ClassInfo]:
    """The project's subclasses of `info`, found among the modules naming
    the class."""
    key = id(info.node)
    if key not in self._subclasses:
      self._subclasses[key] = []
      found: List[_scopes.ClassInfo] = []
      if self._deriving is None:  # Base name -> the modules deriving it.
        self._deriving = {}
        for module in self.modules:
          if "class" not in module.source.text:
            continue  # No class statement: the pattern would not match.
          for match in _CLASS_BASES.finditer(module.source.text):
            for base in set(_WORD.findall(match.group(1))):
              self._deriving.setdefault(base, []).append(module)
      for module in dict.fromkeys(self._deriving.get(info.name, [])):
        scope = self.parsed(module)
        for each in _classes_within(scope) if scope is not None else ():
          if each is not info and info.name in " ".join(each.bases) and (
              info in self.base_classes(each)):
            found.append(each)
      self._subclasses[key] = found
    return self._subclasses[key]

  def attribute(self, info: _scopes.ClassInfo, name: str
                ) -> List[Tuple[ast.expr, _scopes.Scope]]:
    """What `self.name` is assigned in a class and its bases (reading the
    methods whose text names it)."""
    values: List[Tuple[ast.expr, _scopes.Scope]] = []
    attribute = name.split(".", 1)[-1]
    for each in [info, *self.base_classes(info)]:
      module = each.home.module
      read = (id(each.node), attribute)
      if isinstance(module, Module) and read not in self._attributes_read:
        # Once per class and attribute: its reads come back per `self.x`.
        self._attributes_read.add(read)
        lines = [n for n in module.lines_of((attribute,))
                 if each.node.lineno <= n <= (each.node.end_lineno or n)
                 and module.assigns(n, attribute)]
        for scope in self.scopes_at(module, lines):
          for _ in scope.all():
            pass
      values += each.assigned.get(name, [])
    return values

  def scopes_at(self, module: Module, lines: Sequence[int]
                ) -> List[_scopes.Scope]:
    """The innermost function scopes (or the module's) holding `lines`,
    each once, read."""
    if self.parsed(module) is None:
      return []
    found: Dict[int, _scopes.Scope] = {}
    for line in lines:
      path = module.enclosing(line)
      scope = module.scope
      for node in path:
        inner = scope.scope_of(node) if scope is not None else None
        if inner is None:
          break
        scope = inner
      if scope is not None:
        found.setdefault(id(scope), scope)
    return list(found.values())

  def modules_with(self, words: Iterable[str]) -> List[Module]:
    """The scanned modules whose text holds one of `words` (as a word),
    in the project's order."""
    if self._words is None:
      self._words = {}
      for position, module in enumerate(self.scanned()):
        for word in module.words:
          self._words.setdefault(word, []).append(position)
    scanned = self._scanned or []
    positions = sorted({p for w in words for p in self._words.get(w, ())})
    return [scanned[p] for p in positions]

  def all_modules_with(self, words: Iterable[str],
                       text: Optional[Callable[[Module], bool]] = None
                       ) -> List[Module]:
    """The modules, scanned or not (then parsed now), whose text holds
    one of `words` (and for which `text` holds): where a helper of the
    project is called from a file that names no sink."""
    wanted = frozenset(words)
    scanned = self._scanned_ids()
    self._asked += 1
    if self._asked > _INDEX_AFTER and all(
        _WORD.fullmatch(word) for word in wanted):
      # Words only: a module holds one as a word if it is among its words
      # (indexed once a project asks often: each text is read once).
      if self._all_words is None:
        self._all_words = {}
        for position, module in enumerate(self.modules):
          for word in module.words:
            self._all_words.setdefault(word, []).append(position)
      positions = {p for w in wanted for p in self._all_words.get(w, ())}
      return [m for m in (self.modules[p] for p in sorted(positions))
              if id(m) in scanned or (text is None or text(m)) and (
                  self.parsed(m) is not None)]
    holding = {id(m) for m in self.modules_with(wanted)}
    found = []
    for module in self.modules:
      if id(module) in scanned:
        if id(module) in holding:
          found.append(module)
      elif any(w in module.source.text for w in wanted) and (
          module.lines_of(wanted)) and (
              text is None or text(module)) and (
                  self.parsed(module) is not None):
        found.append(module)
    return found

  def calls_named(self, names: Iterable[str],
                  modules: Optional[Sequence[Module]] = None
                  ) -> Iterator[Tuple[_scopes.Scope, ast.Call]]:
    """Every call spelled one of `names` in the scanned modules (or in
    `modules`), with its scope: only the functions whose text holds a
    name are read."""
    wanted = frozenset(names)
    for module in (self.modules_with(wanted) if modules is None
                   else modules):
      for scope in self.scopes_at(module, module.lines_of(wanted)):
        for each in _with_lambdas(scope):
          for name, node in self._calls_in(each):
            if name in wanted:
              yield each, node

  def _calls_in(self, scope: _scopes.Scope) -> List[Tuple[str, ast.Call]]:
    """The calls made directly in `scope`, in order, with their names
    (listed once: many questions read the same functions)."""
    found = self._scope_calls.get(id(scope))
    if found is None:
      found = self._scope_calls[id(scope)] = [
          (_names.call_name(n), n) for n in scope.nodes
          if isinstance(n, ast.Call)]
    return found

  def functions_named(self, names: Iterable[str], unscanned: bool = False
                      ) -> Iterator[_scopes.Scope]:
    """The scopes of the functions (methods too) named one of `names` in
    the scanned modules (`unscanned`: in any module of the project)."""
    wanted = frozenset(names)
    # Only a module that writes `def name` is parsed for it (a common
    # name, `build` or `Model`, is read in most modules of a project).
    if not unscanned:
      modules = self.modules_with(wanted)
    elif all(_WORD.fullmatch(name) for name in wanted):
      modules = self._defining_modules(wanted)
    else:
      modules = self.all_modules_with(wanted, _defining(wanted))
    for module in modules:
      for path in module.functions():
        if getattr(path[-1], "name", "") in wanted:
          scopes = self.scopes_at(module, [_body_line(path[-1])])
          if scopes and scopes[0].node is path[-1]:
            yield scopes[0]

  def _defining_modules(self, wanted: FrozenSet[str]) -> List[Module]:
    """`all_modules_with(wanted, _defining(wanted))` for words, from an
    index of the words each module writes after `def` (made once, for
    every module): the scanned modules that write a word of `wanted`,
    and the others that write `def` before one (then parsed)."""
    if self._definers is None:
      self._definers = {}
      for position, module in enumerate(self.modules):
        for word in module.defined:
          self._definers.setdefault(word, []).append(position)
    scanned = self._scanned_ids()
    # A scanned module that defines a name writes it: among `modules_with`.
    positions = {p for w in wanted for p in self._definers.get(w, ())}
    positions.update(self._positions[id(m)]
                     for m in self.modules_with(wanted))
    return [m for m in (self.modules[p] for p in sorted(positions))
            if id(m) in scanned or self.parsed(m) is not None]

  def callers(self, name: str) -> List[Tuple[_scopes.Scope, ast.Call]]:
    """The calls, in the scanned modules, whose callee is spelled `name`;
    none for a name that many modules write (`__init__`, `call`, `train`:
    too common to tell one function's calls from the others')."""
    if name not in self._callers:
      common = len(self.modules_with((name,))) > MAX_CALLER_MODULES
      self._callers[name] = [] if common else list(self.calls_named(
          (name,)))
    return self._callers[name]

  def names_assigned_from(self, calls: Iterable[str]) -> Set[str]:
    """The names (and attributes, and keywords) a line calling one of
    `calls` assigns: `self.train_op = opt.minimize(...)` -> `train_op`."""
    key = frozenset(calls)
    if key not in self._assigned_from:
      found: Set[str] = set()
      for module in self.modules_with(key):
        text, starts = module.source.text, module._line_starts
        for line in module.lines_of(key):
          begin = starts[max(line - 2, 0)]
          end = starts[line] if line < len(starts) else len(text)
          found.update(_ASSIGNED.findall(text, begin, end))
      self._assigned_from[key] = found
    return self._assigned_from[key]

  def assigned(self, name: str) -> List[Tuple[ast.expr, _scopes.Scope]]:
    """Every value assigned to a name or attribute spelled `name`, or
    passed as a keyword so named, in the scanned modules."""
    if name in self._assigned:
      return self._assigned[name]
    found: List[Tuple[ast.expr, _scopes.Scope]] = []
    for module in self.modules_with((name,)):
      for scope in self.scopes_at(module, module.lines_of((name,))):
        for each in _with_lambdas(scope):
          for key, defs in each.defs.items():
            if key.rsplit(".", 1)[-1] == name:
              found += [(d.value, each) for d in defs]
          if each.cls is not None:
            found += [(v, h) for v, h in each.cls.assigned.get(
                f"self.{name}", []) if h is each]
          for _, node in self._calls_in(each):
            found += [(k.value, each) for k in node.keywords
                      if k.arg == name]
    self._assigned[name] = found
    return found


def _defining(names: FrozenSet[str]) -> Callable[[Module], bool]:
  """Whether a module writes `def name` for one of `names` (a word each:
  looked up among the words it writes after `def`)."""
  if all(_WORD.fullmatch(name) for name in names):
    return lambda module: not names.isdisjoint(module.defined)
  pattern = re.compile(r"\bdef\s+(?:%s)\b" % "|".join(
      re.escape(name) for name in sorted(names)))
  return lambda module: pattern.search(module.source.text) is not None


def _with_lambdas(scope: _scopes.Scope) -> Iterator[_scopes.Scope]:
  """A scope and the lambdas inside it (read with it)."""
  stack = [scope]
  while stack:
    each = stack.pop()
    yield each
    stack.extend(c for c in each.children if isinstance(c.node, ast.Lambda))


def _classes_within(scope: _scopes.Scope) -> List[_scopes.ClassInfo]:
  """The classes of a module's scope and of the functions in it (a model
  class written inside its training function)."""
  found = list(scope.classes.values())
  for child in scope.children:
    found += _classes_within(child)
  return found


def _body_line(node: ast.AST) -> int:
  body = getattr(node, "body", None)
  if isinstance(body, list) and body:
    return int(body[0].lineno)
  return int(getattr(node, "lineno", 0))


def _chain(scope: _scopes.Scope) -> Iterator[_scopes.Scope]:
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    yield place
    place = place.parent


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


def _exported(scope: _scopes.Scope, name: str) -> bool:
  """Whether a star import of the module `scope` reads passes on `name`,
  which it imports: Python's `from m import *` takes the public names of
  `m`'s namespace (its top-level imports too), or those of `__all__`.

  >>> scope = _scopes.collect(ast.parse(
  ...     "from a import b, _c\\ndef f():\\n  from a import d\\n"))
  >>> [_exported(scope, n) for n in ("b", "_c", "d")]
  [True, False, False]
  """
  if name.startswith("_") or not any(
      (alias.asname or alias.name).split(".")[0] == name
      for node in scope.imports for alias in node.names):
    return False
  values = [d.value for d in scope.defs.get("__all__", [])]
  return not values or any(  # A computed `__all__` may name it.
      not isinstance(v, (ast.List, ast.Tuple)) or any(
          isinstance(e, ast.Constant) and e.value == name for e in v.elts)
      for v in values)


def _passes_on(module: Module) -> bool:
  """Whether `module` is a package's `__init__.py` that star-imports its
  parts (`from melt.ops import *`): it re-exports names it never spells.
  A plain module's star import is followed only for names it spells."""
  return os.path.basename(module.path) == "__init__.py" and (
      _STAR_IMPORT.search(module.source.text) is not None)


def _is_script(tree: ast.Module) -> bool:
  """Whether a module runs something at top level (a loop, a `with`, a
  call of one of its own functions or of an API's training method) or
  under `if __name__ == "__main__":`, and imports no test framework,
  bases no class on a framework's `TestCase` or `Benchmark` and calls no
  test runner (`tf.test.main()`)."""
  imported: Dict[str, str] = {}
  runs = False
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        if _under_test_module(alias.name):
          return False
        imported[alias.asname or alias.name.split(".")[0]] = (
            alias.name if alias.asname else alias.name.split(".")[0])
    elif isinstance(node, ast.ImportFrom) and not node.level:
      for alias in node.names:
        full = (node.module or "") + "." + alias.name
        if _under_test_module(node.module or "") or _under_test_module(
            full):
          return False
        imported[alias.asname or alias.name] = full
    elif isinstance(node, ast.ClassDef) and any(
        _dotted(base, imported).rsplit(".", 1)[-1] in {
            "TestCase", "Benchmark"} and _held_by_framework(
                _dotted(base, imported)) for base in node.bases):
      return False
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "main" and (
            _held_by_framework(_dotted(node.func, imported))):
      return False
  defined = {node.name for node in tree.body if isinstance(
      node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
  for node in tree.body:
    runs = runs or _runs(node, defined)
  return runs


def _runs(node: ast.stmt, defined: Set[str]) -> bool:
  """Whether a top-level statement runs something (see `_is_script`)."""
  if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncFor,
                       ast.AsyncWith)):
    return True
  if isinstance(node, ast.If):
    test = node.test
    if isinstance(test, ast.Compare) and isinstance(
        test.left, ast.Name) and test.left.id == "__name__":
      return any(isinstance(inner, ast.Call)
                 for statement in node.body
                 for inner in ast.walk(statement))
    return any(_runs(inner, defined) for inner in node.body + node.orelse)
  if isinstance(node, ast.Try):
    return any(_runs(inner, defined) for inner in node.body)
  value = getattr(node, "value", None)
  if isinstance(node, (ast.Expr, ast.Assign)) and isinstance(
      value, ast.Call):
    func = value.func
    return isinstance(func, ast.Name) and func.id in defined or isinstance(
        func, ast.Attribute) and func.attr in _RUN_METHODS
  return False


def _under_test_module(name: str) -> bool:
  """Whether a dotted module name is a test framework's or under one."""
  return any(name == module or name.startswith(module + ".")
             for module in _TEST_MODULES)


def _held_by_framework(dotted: str) -> bool:
  """Whether a dotted name (read through imports) is an attribute of a
  test framework (`tensorflow.test.TestCase`, `unittest.main`)."""
  holder = dotted.rsplit(".", 1)[0] if "." in dotted else ""
  return any(holder == module or holder.startswith(module + ".")
             for module in _TEST_HOLDERS)


def _dotted(node: ast.expr, imported: Dict[str, str]) -> str:
  """A name or attribute chain as a dotted name, its first name read
  through the file's imports (`tf.test.TestCase` with `import tensorflow
  as tf` is `tensorflow.test.TestCase`); "" for any other expression."""
  names: List[str] = []
  while isinstance(node, ast.Attribute):
    names.append(node.attr)
    node = node.value
  if not isinstance(node, ast.Name):
    return ""
  names.append(imported.get(node.id, node.id))
  return ".".join(reversed(names))
