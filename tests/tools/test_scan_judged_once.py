"""A fact read from a whole scope is worked out on the first question
only (`Scope.once`), whatever it is: a list, a set, a dict, False or
None; each key keeps its own; the scope's `judged` holds it."""

import ast

import pytest

from tfpartial._tools.scan import _scopes


def _scope():
  return _scopes.Scope(ast.parse("def f(x):\n  return x"), None)


@pytest.mark.parametrize("value", [[1], {2}, {"a": 3}, (4,), False, None, 0],
                         ids=["list", "set", "dict", "tuple", "false",
                              "none", "zero"])
def test_computed_once(value):
  scope = _scope()
  calls = []

  def compute():
    calls.append(1)
    return value

  key = ("judge", None, 0)
  assert scope.once(key, compute) == value
  assert scope.once(key, compute) == value
  assert calls == [1]
  assert scope.judged[key] == value


def test_each_key_its_own():
  scope = _scope()
  assert scope.once(("a", "x", 0), lambda: 1) == 1
  assert scope.once(("a", "x", 1), lambda: 2) == 2
  assert scope.once(("b", "x", 0), lambda: 3) == 3
  assert scope.once(("a", "x", 0), lambda: 4) == 1


def test_each_scope_its_own():
  one, two = _scope(), _scope()
  assert one.once(("a", None, 0), lambda: 1) == 1
  assert two.once(("a", None, 0), lambda: 2) == 2
