"""Whether a helper of the module makes a variable: its body (followed
through the module's helpers it calls, `DEPTH` calls deep) calls a real
variable maker (`tf.get_variable`, `tf.Variable`, `add_weight`, TF1's
and slim's layer functions, Keras and Sonnet layers), or a helper it
cannot read (imported, a method). A helper that only reshapes, flips or
logs what it is given makes none. Each helper is read once per scan (its
answer kept on its module's scope), so asking at every call is linear.
"""

from __future__ import annotations

import ast
import builtins
from typing import Dict, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# TF1's layer functions (`tf.layers.dense`, slim's `fully_connected`).
LAYER_CALLS = {"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose",
               "separable_conv2d", "fully_connected", "embedding"}
_REAL_MAKERS = {"get_variable", "Variable", "VariableV1", "add_weight",
                "get_local_variable", "model_variable", "variable",
                "create_variable", "make_variable"}
# The roots of layer classes (`tf.keras.layers.Dense`, `snt.Linear`).
_LAYER_ROOTS = {"layers", "keras", "snt", "hk", "tfl"}
# Modules whose functions compute or log and make no variable.
_NO_MAKERS = {"tf", "np", "numpy", "K", "math", "tensorflow", "logging",
              "os", "sys", "time", "json", "re", "random", "functools",
              "itertools", "collections", "warnings", "pprint"}
_BUILTINS = frozenset(dir(builtins))
DEPTH = 4  # Helpers calling helpers: deeper is read as a maker.

_Answer = Tuple[bool, bool]  # (makes, known without a cycle or the bound)


def called_makes(call: ast.Call, scope: _scopes.Scope) -> Optional[bool]:
  """For a call of a function of the module by its bare name (seen from
  `scope`): whether that function makes a variable; None when the name
  is no function of the module (imported, a parameter, a class).

  >>> module = _scopes.collect(ast.parse(
  ...     "def flip(k):\\n  return tf.reverse(k, [0])\\n"
  ...     "def make(n):\\n  return tf.get_variable('w', [n])\\n"))
  >>> [called_makes(ast.parse(f"{f}(x)").body[0].value, module)
  ...  for f in ("flip", "make", "other")]
  [False, True, None]
  """
  found = _resolve(call, scope)
  if found is None:
    return None
  return _makes(found[0], found[1], 0, set())[0]


def _resolve(call: ast.Call, scope: _scopes.Scope
             ) -> Optional[Tuple[_scopes.FunctionNode, _scopes.Scope]]:
  if not isinstance(call.func, ast.Name):
    return None
  name = call.func.id
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if name in place.functions:
      function = place.functions[name]
      return function, place.scopes.get(id(function), place)
    if name in place.defs or name in place.params or name in place.classes:
      return None  # Bound to something else here.
    place = place.parent
  return None


def _cache(scope: _scopes.Scope) -> Dict[int, bool]:
  root = scope
  while root.parent is not None:
    root = root.parent
  return root.once((_cache, None, 0), dict)


def _makes(function: _scopes.FunctionNode, scope: _scopes.Scope,
           depth: int, visiting: Set[int]) -> _Answer:
  """Whether `function` (its scope `scope`) makes a variable, and whether
  that answer holds whoever asks (not cut by a cycle or the bound)."""
  cache = _cache(scope)
  if id(function) in cache:
    return cache[id(function)], True
  if id(function) in visiting:
    return False, False  # A cycle adds nothing its first turn did not.
  if depth > DEPTH:
    return True, False  # Not read: it may make one, as a helper did.
  visiting.add(id(function))
  imported = _scopes.imported_names(scope)
  complete = True
  answer = False
  for node in ast.walk(function):
    if not isinstance(node, ast.Call):
      continue
    made = _call_makes(node, scope, imported, depth, visiting)
    complete = complete and made[1]
    if made[0]:
      answer, complete = True, True
      break
  visiting.discard(id(function))
  if complete:
    cache[id(function)] = answer
  return answer, complete


def _call_makes(call: ast.Call, scope: _scopes.Scope, imported: Set[str],
                depth: int, visiting: Set[int]) -> _Answer:
  name = _names.call_name(call)
  parts = (_names.dotted(call.func) or "").split(".")
  if name in _REAL_MAKERS or name in LAYER_CALLS and "nn" not in parts:
    return True, True
  if name[:1].isupper() and len(parts) > 1 and set(parts[:-1]) & (
      _LAYER_ROOTS):
    return True, True
  if isinstance(call.func, ast.Name):
    found = _resolve(call, scope)
    if found is not None:
      return _makes(found[0], found[1], depth + 1, visiting)
    # An imported helper, not read: it may make one.
    return name in imported and name not in _BUILTINS, True
  root = parts[0]
  # A method of the object (`self._kernel()`) or an imported module's
  # helper (`utils.weight(..)`), not read: it may make one.
  return root == "self" or root in imported and root not in _NO_MAKERS, True
