"""A factor that is 0 for some of what a choice picks: the one rule behind
the hand-made edits of a gradient (or of a parameter the forward pass
reads) that zero a part and let the rest flow on to the step.

A product `g * f` zeroes a part of the gradients when two things hold:

- `f` can be 0: a literal 0, a name bound to 0 in one arm and to
  something else in another, an element of a dict or list of
  multipliers holding a 0 among other values, or a name (parameter,
  attribute, class attribute, option) that the project sets to 0
  (`ratio=0.0`, `SCALE = 0`, `{"ratio": 0}`) or tests against 0 (`if
  ratio == 0.0:`): the code itself names the zero case; or one minus
  a variable's entry in a table of what to pin (`1 - fixed[name]`, 0
  where the table holds 1), not a table of rates;
- it is chosen: the product sits in a branch of a test of the variable
  (`if 'encoder' in v.name:`, `v in frozen`), the zero is bound under
  such a test, or the factor is picked from its multipliers by a key or
  an index (`rates[i]`, `mults[v.name.split('/')[0]]`).

A factor scaling every gradient alike (a learning-rate multiplier, a loss
scale, a warm-up of the whole model) chooses nothing; a factor never 0
(layer-wise learning rates) freezes nothing.
"""

from __future__ import annotations

import ast
import re
import weakref
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# A project -> what it sets or tests against 0 (see `_set_to_zero`).
_SEEN: "weakref.WeakKeyDictionary[object, _Zeroed]" = (
    weakref.WeakKeyDictionary())
Chooser = Callable[[ast.AST], bool]  # Whether a test picks variables.


def zeroes_some(product: ast.AST, factor: ast.AST, scope: _scopes.Scope,
                project: object, chooses: Chooser) -> bool:
  """Whether `product` (a gradient times `factor`) is zero for some of
  the variables a choice picks and not for the others; `chooses(test)`
  tells a test that picks variables.

  >>> tree = ast.parse("m = {'a': 0.0, 'b': 1.0}\\nh = g * m[k]\\n")
  >>> module = _scopes.collect(tree)
  >>> product = module.defs["h"][0].value
  >>> zeroes_some(product, product.right, module, None, lambda t: False)
  True
  """
  factor = _bound_once(factor, scope)
  if _complement_of_an_entry(factor) and _chosen_here(product, scope,
                                                      chooses):
    return True
  if isinstance(factor, ast.Subscript):
    return _holds_zero_among_others(factor.value, [], scope, project)
  if isinstance(factor, ast.Call) and isinstance(
      factor.func, ast.Attribute) and factor.func.attr == "get" and (
          1 <= len(factor.args) <= 2):
    return _holds_zero_among_others(  # `mults.get(v.name, 1.0)`.
        factor.func.value, factor.args[1:], scope, project)
  if isinstance(factor, ast.Name) and zero_in_an_arm(factor.id, scope,
                                                      chooses):
    return True
  word = _word(factor)
  return word is not None and _chosen_here(product, scope, chooses) and (
      _set_to_zero(word, scope, project))


# Tables whose name says they hold rates or scales, not what to pin.
_RATES = re.compile(r"(rate|decay|momentum|beta|alpha|gamma|coef|factor|"
                    r"scale|lr|mult|eps)", re.I)


def _complement_of_an_entry(factor: ast.AST) -> bool:
  """`1 - fixed[name]`, `1. - pinned.get(v.name, 0)`: one minus the entry
  a table holds for a variable, 0 where the table pins (1); not `1 -
  decay[name]`, a table of rates.

  >>> [_complement_of_an_entry(ast.parse(t).body[0].value) for t in (
  ...     "1 - fixed[name]", "1. - pin.get(k, 0)", "1 - decay[k]", "1 - p")]
  [True, True, False, False]
  """
  if not (isinstance(factor, ast.BinOp) and isinstance(factor.op, ast.Sub)
          and isinstance(factor.left, ast.Constant) and type(
              factor.left.value) in (int, float) and factor.left.value == 1):
    return False
  entry = factor.right
  if isinstance(entry, ast.Subscript):
    table = entry.value
  elif isinstance(entry, ast.Call) and isinstance(
      entry.func, ast.Attribute) and entry.func.attr == "get" and entry.args:
    table = entry.func.value
  else:
    return False
  word = _word(table)
  return word is not None and not _RATES.search(word)


def _bound_once(node: ast.AST, scope: _scopes.Scope) -> ast.AST:
  """What a local name holds when it is assigned once, else `node`."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) == 1 and defs[0].value is not None and defs[0].replaces:
      return defs[0].value
  return node


def _word(node: ast.AST) -> Optional[str]:
  """The identifier a factor is read by (`ratio`, `self.ratio`,
  `Config.RATIO`), or None for an expression."""
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    return node.attr
  return None


def _holds_zero_among_others(container: ast.AST, default: List[ast.expr],
                             scope: _scopes.Scope, project: object) -> bool:
  """Whether multipliers (a literal dict or list: there, bound once to a
  name of this scope or an enclosing one, to an attribute of `self`, or
  passed to a parameter) hold a 0 and another value (or a default)."""
  for each in _containers(container, scope, project, 0):
    values = _literal_values(each) + [
        d for d in default if isinstance(d, ast.Constant)]
    zeros = [v for v in values if _names.is_zero(v)]
    if zeros and len(zeros) < len(values):
      return True
  return False


def _containers(node: ast.AST, scope: _scopes.Scope, project: object,
                depth: int) -> List[ast.AST]:
  """The values `node` may hold: itself, what a name bound once holds
  (through enclosing scopes), what the methods assign `self.x`, and what
  the project's calls pass a parameter."""
  if depth > 2:
    return [node]
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self" and scope.cls:
    return [v for value, home in scope.cls.attributes.get(
                f"self.{node.attr}", [])
            for v in _containers(value, home, project, depth + 1)]
  if not isinstance(node, ast.Name):
    return [node]
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    defs = place.defs.get(node.id, [])
    if defs:
      value = defs[0].value if len(defs) == 1 else None
      return [node] if value is None else _containers(
          value, place, project, depth + 1)
    if node.id in place.params:
      return [v for value, home in passed(node.id, place, project)
              for v in _containers(value, home, project, depth + 1)]
    place = place.parent
  return [node]


def passed(name: str, function: _scopes.Scope, project: object
            ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """What the project's calls pass the parameter `name` of `function` (a
  constructor's through the class's name), with the caller's scope."""
  node = function.node
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
      project is None):
    return []
  params = [a.arg for a in node.args.args]
  called = node.name
  if function.cls is not None:
    params = params[1:]
    called = function.cls.name if node.name == "__init__" else called
  position = params.index(name) if name in params else len(params)
  passed: List[Tuple[ast.expr, _scopes.Scope]] = []
  modules = getattr(project, "all_modules_with")((called,))
  for caller, call in getattr(project, "calls_named")((called,), modules):
    if position < len(call.args):
      passed.append((call.args[position], caller))
    passed += [(k.value, caller) for k in call.keywords if k.arg == name]
  return passed


def _literal_values(node: ast.AST) -> List[ast.expr]:
  if isinstance(node, ast.Dict):
    return [v for v in node.values if isinstance(v, ast.Constant)]
  if isinstance(node, (ast.List, ast.Tuple)):
    return [v for v in node.elts if isinstance(v, ast.Constant)]
  return []


def zero_in_an_arm(name: str, scope: _scopes.Scope, chooses: Chooser
                   ) -> bool:
  """Whether `name` is bound to 0 under a test that picks variables and
  to something else elsewhere (`rate = 0.0 if frozen else 1.0` spelled
  as statements)."""
  defs = scope.defs.get(name, [])
  zero = [d for d in defs if d.value is not None and (
      _names.is_zero(d.value))]
  return bool(zero) and len(zero) < len(defs) and any(
      test is not None and chooses(test)
      for d in zero for test in (d.where.test, d.where.guard))


def _chosen_here(product: ast.AST, scope: _scopes.Scope, chooses: Chooser
                 ) -> bool:
  """Whether `product` sits in an arm of an `if` (or `a if t else b`) of
  its function whose test picks variables."""
  arms = scope.once(("zero_choice arms", None, 0), lambda: _arms(scope.node))
  return any(_inside(product, arm) and chooses(test) for test, arm in arms)


def _arms(function: ast.AST) -> List[Tuple[ast.expr, List[ast.AST]]]:
  """(test, arm) of each `if` and `a if t else b` in `function`."""
  found: List[Tuple[ast.expr, List[ast.AST]]] = []
  for node in ast.walk(function):
    if isinstance(node, ast.If):
      found += [(node.test, list(node.body)), (node.test, list(node.orelse))]
    elif isinstance(node, ast.IfExp):
      found += [(node.test, [node.body]), (node.test, [node.orelse])]
  return found


def _inside(node: ast.AST, arm: List[ast.AST]) -> bool:
  line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
  for each in arm:
    start = (getattr(each, "lineno", 0), getattr(each, "col_offset", 0))
    end = (getattr(each, "end_lineno", 0) or 0,
           getattr(each, "end_col_offset", 0) or 0)
    if start <= (line, col) < end:
      return True
  return False


def _set_to_zero(word: str, scope: _scopes.Scope, project: object) -> bool:
  """Whether the project sets `word` to 0 (an assignment, a default, a
  keyword, a key of a dict, an option's default) or tests it against 0,
  in any of its files (read from their trees, each walked once).

  >>> tree = ast.parse("import argparse\\n"
  ...                  "p = argparse.ArgumentParser()\\n"
  ...                  "p.add_argument('--ratio', type=float, default=0.)\\n"
  ...                  "if scale == 0: pass\\n")
  >>> module = _scopes.collect(tree)
  >>> [_set_to_zero(w, module, None) for w in ("ratio", "scale", "p")]
  [True, True, False]
  """
  if not word:
    return False
  known = _SEEN.setdefault(project, _Zeroed()) if (
      project is not None) else _Zeroed()
  if word not in known.words:
    modules = getattr(project, "modules", [])
    known.words[word] = any(
        word in getattr(m.source, "text", "") and word in known.of(m)
        for m in modules) if modules else word in _zeroed_words(
            _root(scope).node)
  return known.words[word]


class _Zeroed:
  """What a project sets to 0: by word, and each module's words."""

  def __init__(self) -> None:
    self.words: Dict[str, bool] = {}
    self._modules: Dict[int, FrozenSet[str]] = {}

  def of(self, module: object) -> FrozenSet[str]:
    """The words `module` sets to or tests against 0, read once."""
    found = self._modules.get(id(module))
    if found is None:
      tree = _tree(module)
      found = self._modules[id(module)] = _zeroed_words(
          tree) if tree is not None else frozenset()
    return found


def _tree(module: object) -> Optional[ast.AST]:
  """The module's tree: as parsed, as its source was read, or parsed
  here (None if it does not parse)."""
  tree = getattr(module, "tree", None)
  source = getattr(module, "source", None)
  taken = getattr(source, "tree", None)
  if tree is None and taken:
    tree = taken[-1]
  if tree is None:
    try:
      tree = ast.parse(getattr(source, "text", ""))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
      return None
  return tree


def _root(scope: _scopes.Scope) -> _scopes.Scope:
  while scope.parent is not None:
    scope = scope.parent
  return scope


def _zeroed_words(tree: ast.AST) -> FrozenSet[str]:
  """The words a tree sets to 0 or tests against 0: `ratio = 0.0`,
  `self.SCALE: float = 0`, `f(ratio=0)`, `def f(ratio=0.)`, `{"ratio":
  0}`, `if ratio == 0:`, `0 != cfg.ratio`, `add_argument('--ratio',
  default=0.0)`, `flags.DEFINE_float('ratio', 0.0, ...)`."""
  found: Set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Assign):
      for target in node.targets:
        found.update(_bound_to_zero(target, node.value))
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
      found.update(_bound_to_zero(node.target, node.value))
    elif isinstance(node, ast.keyword) and node.arg and _zero(node.value):
      found.add(node.arg)
    elif isinstance(node, ast.arguments):
      found.update(_zero_defaults(node))
    elif isinstance(node, ast.Compare):
      found.update(_compared_to_zero(node))
    elif isinstance(node, ast.Dict):
      found.update(_key_word(k) for k, v in zip(node.keys, node.values)
                   if k is not None and _zero(v))
    if isinstance(node, (ast.Call, ast.Tuple, ast.List)):
      found.update(_option_defaults(node))
  found.discard("")
  return frozenset(found)


def _zero(node: Optional[ast.AST]) -> bool:
  """A literal 0 or 0.0 (not `False`, not a complex)."""
  return isinstance(node, ast.Constant) and type(node.value) in (
      int, float) and node.value == 0


def _bound_to_zero(target: ast.AST, value: ast.AST) -> Set[str]:
  """The words an assignment binds to 0, element by element."""
  if isinstance(target, (ast.Tuple, ast.List)) and isinstance(
      value, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts):
    return {w for t, v in zip(target.elts, value.elts)
            for w in _bound_to_zero(t, v)}
  word = _word(target)
  return {word} if word and _zero(value) else set()


def _zero_defaults(arguments: ast.arguments) -> Set[str]:
  """The parameters whose default is 0."""
  positional = [*arguments.posonlyargs, *arguments.args]
  paired = list(zip(positional[len(positional) - len(arguments.defaults):],
                    arguments.defaults))
  paired += [(a, d) for a, d in zip(arguments.kwonlyargs,
                                    arguments.kw_defaults) if d is not None]
  return {a.arg for a, d in paired if _zero(d)}


def _compared_to_zero(test: ast.Compare) -> Set[str]:
  """The names and attributes `==`, `!=` or `is` tests against 0."""
  sides = [test.left, *test.comparators]
  found: Set[str] = set()
  for op, (left, right) in zip(test.ops, zip(sides, sides[1:])):
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is)):
      for one, other in ((left, right), (right, left)):
        word = _word(one)
        if word and _zero(other):
          found.add(word)
  return found


def _key_word(key: ast.AST) -> str:
  """The word a dict's key names: `"ratio"`, `"--ratio"`, `ratio`."""
  if isinstance(key, ast.Constant) and isinstance(key.value, str):
    return key.value.lstrip("-")
  return _word(key) or ""


def _option_defaults(node: ast.AST) -> Set[str]:
  """The options a call (or a tuple) gives 0 as default: a name written
  as a string followed by 0 (`DEFINE_float('ratio', 0.0, ...)`, `('ratio',
  0)`), or a call naming it with `default=0`."""
  items = node.args if isinstance(node, ast.Call) else getattr(
      node, "elts", [])
  default = isinstance(node, ast.Call) and any(
      k.arg == "default" and _zero(k.value) for k in node.keywords)
  found: Set[str] = set()
  for at, item in enumerate(items):
    if isinstance(item, ast.Constant) and isinstance(item.value, str) and (
        default or at + 1 < len(items) and _zero(items[at + 1])):
      name = item.value[2:] if item.value.startswith("--") else item.value
      found.add(name)
  return found


def passed_zero_by_choice(given: List[ast.expr]) -> bool:
  """Whether the values the calls of a function pass one of its
  parameters make it 0 for some calls and pick it for others by a key or
  an index (`scaled(0.0)` and `scaled(rates[i])`): a rate chosen per
  layer that can be 0.

  >>> passed_zero_by_choice([ast.parse(t).body[0].value
  ...                        for t in ("0.0", "rates[i]")])
  True
  >>> passed_zero_by_choice([ast.parse("schedule(step)").body[0].value])
  False
  """
  return any(_names.is_zero(v) for v in given) and any(
      isinstance(v, ast.Subscript) for v in given)
