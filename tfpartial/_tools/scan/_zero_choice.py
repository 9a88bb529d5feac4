"""A factor that is 0 for some of what a choice picks: the one rule behind
the hand-made edits of a gradient (or of a parameter the forward pass
reads) that zero a part and let the rest flow on to the step.

A product `g * f` zeroes a part of the gradients when two things hold:

- `f` can be 0: a literal 0, a name bound to 0 in one arm and to
  something else in another, an element of a dict or list of
  multipliers holding a 0 among other values, or a name (parameter,
  attribute, class attribute, option) that the project sets to 0
  (`ratio=0.0`, `SCALE = 0`, `{"ratio": 0}`) or tests against 0 (`if
  ratio == 0.0:`): the code itself names the zero case;
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
from typing import Callable, Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# A project -> word -> whether the project sets or tests it against 0.
_SEEN: "weakref.WeakKeyDictionary[object, Dict[str, bool]]" = (
    weakref.WeakKeyDictionary())
_ZERO = r"0(?:\.0*)?(?![\w.])"
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
  key = ("zero_choice arms", None, 0)
  arms = scope.judged.get(key)
  if arms is None:
    arms = scope.judged[key] = _arms(scope.node)
  assert isinstance(arms, list)
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
  in any of its files."""
  if not word:
    return False
  seen = _SEEN.setdefault(project, {}) if project is not None else {}
  if word not in seen:
    name = re.escape(word)
    pattern = re.compile(
        rf"\b{name}['\"]?\s*(?::\s*[\w.\[\]]+\s*)?(?:==|!=|\bis\b|=(?!=)"
        rf"|:)\s*{_ZERO}|{_ZERO}\s*(?:==|!=)\s*[\w.]*\b{name}\b"
        # An option's default: `add_argument('--name', default=0.0)`,
        # `flags.DEFINE_float('name', 0.0, ...)`.
        rf"|['\"](?:--)?{name}['\"],\s*(?:{_ZERO}|[^)\n]*\bdefault\s*=\s*"
        rf"{_ZERO})")
    texts = [getattr(getattr(m, "source", None), "text", "")
             for m in getattr(project, "modules", [])] or [
                 _module_text(scope)]
    seen[word] = any(word in text and pattern.search(text) is not None
                     for text in texts)
  return seen[word]


def _module_text(scope: _scopes.Scope) -> str:
  module = getattr(scope, "module", None)
  return getattr(getattr(module, "source", None), "text", "")


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
