"""Whether a function is TensorFlow's `tf.function`, read from what its
decorators are (the module's imports and bindings), never from their
text: `@tf.function(jit_compile=True)`, `@tff` after `from tensorflow
import function as tff`, a name bound to `tf.function` or to a
`functools.partial` of it are; a project's own `@function`, or a name
of another module, is not. `may_be_traced` also counts a decorator it
cannot resolve (a project's wrapper may call `tf.function`; a name a
star import may bind) and any library's decorator but those of
`_NOT_TRACING` (`@gin.configurable` too): the conservative answer where
a port must not be made in a trace."""

from __future__ import annotations

import ast
import builtins
from typing import Dict, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Where TensorFlow defines `function` and the names it is exported as.
_TF_FUNCTIONS = {
    "tensorflow.function", "tensorflow.compat.v1.function",
    "tensorflow.compat.v2.function",
    "tensorflow.python.eager.def_function.function",
    "tensorflow.python.eager.polymorphic_function.polymorphic_function"
    ".function"}
_PARTIAL = "functools.partial"
# Modules whose decorators are known not to trace (`@staticmethod` is
# `builtins.staticmethod`).
_NOT_TRACING = ("builtins", "functools", "abc", "contextlib", "typing",
                "dataclasses")


def traced(function: ast.AST, scope: Optional[_scopes.Scope]) -> bool:
  """Whether a decorator of `function` (defined in `scope`) is TF's.

  >>> tree = ast.parse("from tensorflow import function as f\\n@f\\n"
  ...                  "def g():\\n  pass\\n")
  >>> traced(tree.body[1], _scopes.collect(tree))
  True
  """
  return scope is not None and any(
      _resolved(d, scope, 0) in _TF_FUNCTIONS
      for d in getattr(function, "decorator_list", ()))


def may_be_traced(function: ast.AST, scope: Optional[_scopes.Scope]
                  ) -> bool:
  """Whether a decorator of `function` is TF's `function` or may be: one
  not resolved (a project's own, a parameter, a name bound twice) may
  wrap it, so a port that must not be made in a trace is by hand.

  >>> tree = ast.parse("@staticmethod\\ndef g():\\n  pass\\n")
  >>> may_be_traced(tree.body[0], _scopes.collect(tree))
  False
  """
  if scope is None:
    return bool(getattr(function, "decorator_list", ()))
  for decorator in getattr(function, "decorator_list", ()):
    name = _resolved(decorator, scope, 0)
    if name is None or name in _TF_FUNCTIONS or (
        name.split(".")[0] not in _NOT_TRACING):
      return True
  return False


def _resolved(node: ast.expr, scope: _scopes.Scope, depth: int
              ) -> Optional[str]:
  """The dotted name `node` is, read through imports and single
  bindings (a call of it, `tf.function(jit_compile=True)`, is it; a
  `functools.partial` of it is it too); None when it is unknown."""
  if depth > 4:
    return None
  if isinstance(node, ast.Call):
    func = _resolved(node.func, scope, depth + 1)
    if func == _PARTIAL and node.args:
      return _resolved(node.args[0], scope, depth + 1)
    return func
  dotted = _names.dotted(node)
  if dotted is None:
    return None
  first, _, rest = dotted.partition(".")
  head = _first(first, scope, depth)
  return None if head is None else ".".join(filter(None, (head, rest)))


def _first(name: str, scope: _scopes.Scope, depth: int) -> Optional[str]:
  """The dotted name a plain name is where it is read: an import's, or
  the one value a module binds it to; None for a function, a class, a
  parameter, a name bound more than once or not at all, or one only a
  star import may bind (`compile` after `from tools import *`)."""
  place: Optional[_scopes.Scope] = scope
  starred = False
  while place is not None:
    if name in place.functions or name in place.classes or (
        name in place.params):
      return None
    starred = starred or _starred(place)
    imported = _imports(place).get(name)
    defs = place.defs.get(name, [])
    if imported is not None and not defs:
      return imported
    if defs:
      if len(defs) != 1 or imported is not None:
        return None
      return _resolved(defs[0].value, place, depth + 1)
    place = place.parent
  if starred:
    return None  # A star import may bind it: unknown.
  return f"builtins.{name}" if hasattr(builtins, name) else None


def _starred(scope: _scopes.Scope) -> bool:
  """Whether `scope` imports every name of a module (not `builtins`)."""
  return any(
      isinstance(node, ast.ImportFrom) and node.module != "builtins" and (
          any(alias.name == "*" for alias in node.names))
      for node in scope.imports)


def _imports(scope: _scopes.Scope) -> Dict[str, str]:
  """The names `scope`'s own imports bind -> what they name."""
  found: Dict[str, str] = {}
  for node in scope.imports:
    for alias in node.names:
      if isinstance(node, ast.ImportFrom):
        if node.level == 0 and node.module:
          found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        else:  # The project's own module: not TensorFlow.
          found[alias.asname or alias.name] = "." + alias.name
      elif alias.asname:
        found[alias.asname] = alias.name
      else:
        first = alias.name.split(".")[0]
        found[first] = first
  return found
