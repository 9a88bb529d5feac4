"""What a `with` statement's scope call opens, asked in one place
(`_opened_scopes`): the expression a `tf.variable_scope(...)` or
`tf.name_scope(...)` opens on, the literal it opens, and the parameter a
function opens as its scope, in each form the judges of `var-list-filter`
met (a worker's `with tf.variable_scope(scope):`, a helper's `with
tf.name_scope(name) as ns:`, `reuse=`, `name_or_scope=`, a literal, a
`with` nested under an `if` or inside another `with`)."""

import ast
import textwrap

import pytest

from tfpartial._tools.scan import _opened_scopes


def _call(text):
  return ast.parse(text).body[0].value


def _function(text):
  return ast.parse(textwrap.dedent(text)).body[0]


@pytest.mark.parametrize("text, expected", [
    ("tf.variable_scope(scope)", "scope"),
    ("tf.compat.v1.variable_scope(scope, reuse=tf.AUTO_REUSE)", "scope"),
    ("tf.name_scope(name)", "name"),
    ("tf.variable_scope('gen')", "'gen'"),
    ("tf.variable_scope(self.scope + '/head')", "self.scope + '/head'"),
    ("tf.variable_scope(name_or_scope=scope)", None),  # First argument only.
    ("tf.device('/cpu:0')", None),
    ("open('log.txt')", None),
    ("tf.variable_scope()", None),
], ids=["parameter", "reuse", "name_scope", "literal", "expression",
        "keyword_unasked", "device", "open", "no_argument"])
def test_opened_on_reads_the_first_argument(text, expected):
  found = _opened_scopes.opened_on(_call(text))
  assert (ast.unparse(found) if found is not None else None) == expected


@pytest.mark.parametrize("text, expected", [
    ("tf.variable_scope(name_or_scope=scope)", "scope"),
    ("tf.variable_scope(name_or_scope='disc', reuse=True)", "'disc'"),
    ("tf.variable_scope(default_name='block')", None),
], ids=["keyword", "keyword_literal", "default_name"])
def test_opened_on_reads_name_or_scope_when_asked(text, expected):
  found = _opened_scopes.opened_on(_call(text), keyword=True)
  assert (ast.unparse(found) if found is not None else None) == expected


def test_kinds_choose_which_calls_count():
  # A name scope leaves `get_variable`'s names alone; a judge of variable
  # names asks for variable scopes only.
  only = frozenset({"variable_scope"})
  assert _opened_scopes.opened_on(_call("tf.name_scope(s)"), only) is None
  assert _opened_scopes.opened_on(_call("tf.variable_scope(s)"), only)
  reused = _call("tf.compat.v1.VariableScope(s)")
  assert _opened_scopes.opened_on(reused) is None
  assert _opened_scopes.opened_on(reused, frozenset({"VariableScope"}))


@pytest.mark.parametrize("text, expected", [
    ("tf.variable_scope('generator')", "generator"),
    ("tf.name_scope('loss/')", "loss/"),
    ("tf.variable_scope('', reuse=True)", ""),
    ("tf.variable_scope('disc', reuse=tf.AUTO_REUSE)", "disc"),
    ("tf.variable_scope(scope)", None),
    ("tf.variable_scope(name_or_scope='d')", None),
    ("tf.device('/gpu:0')", None),
    ("tf.variable_scope(1)", None),
], ids=["variable_scope", "name_scope", "empty", "reuse", "parameter",
        "keyword", "device", "not_a_string"])
def test_literal(text, expected):
  assert _opened_scopes.literal(_call(text)) == expected


def test_literal_of_any_node_is_none():
  assert _opened_scopes.literal(ast.parse("x = 1").body[0]) is None


_WORKER = """
def build(x, scope, trainer):
  if scope != 'global':
    with tf.variable_scope(scope):
      net = dense(x)
"""
_HELPER = """
def block(x, name='block'):
  with tf.name_scope(name) as ns:
    return dense(x)
"""
_SECOND = """
def net(x, scope):
  with tf.device('/cpu:0'):
    pass
  with tf.variable_scope(scope):
    return dense(x)
"""
_NESTED = """
def net(x, scope, reuse):
  with tf.variable_scope('outer'):
    with tf.variable_scope(scope, reuse=reuse):
      return dense(x)
"""
_SAME_WITH = """
def net(x, scope):
  with tf.device('/gpu:0'), tf.variable_scope(scope):
    return dense(x)
"""
_KEYWORD_ONLY = """
def net(x, *, scope):
  with tf.variable_scope(scope):
    return dense(x)
"""
_LOCAL = """
def net(x):
  scope = 'a'
  with tf.variable_scope(scope):
    return dense(x)
"""
_LITERAL = """
def net(x, scope):
  with tf.variable_scope('net'):
    return dense(x)
"""


@pytest.mark.parametrize("text, anywhere, outermost", [
    (_WORKER, "scope", None),  # Under an `if`: not around all it builds.
    (_HELPER, "name", "name"),  # `as ns`
    (_SECOND, "scope", None),  # The first `with` opens no scope.
    (_NESTED, "scope", None),  # Inside a literal scope.
    (_SAME_WITH, "scope", "scope"),  # A later item of the first `with`.
    (_KEYWORD_ONLY, "scope", "scope"),
    (_LOCAL, None, None),  # Not a parameter.
    (_LITERAL, None, None),
], ids=["worker_under_if", "name_scope_as", "second_with", "nested_with",
        "second_item", "keyword_only", "local_name", "literal"])
def test_parameter(text, anywhere, outermost):
  function = _function(text)
  assert _opened_scopes.parameter(function, outermost=False) == anywhere
  assert _opened_scopes.parameter(function, outermost=True) == outermost


def test_parameter_of_nothing_or_a_lambda():
  assert _opened_scopes.parameter(None, outermost=True) is None
  lam = ast.parse("lambda scope: tf.variable_scope(scope)").body[0].value
  assert _opened_scopes.parameter(lam, outermost=True) is None
  assert _opened_scopes.parameter(lam, outermost=False) is None
