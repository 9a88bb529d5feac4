"""`tfpartial scan`'s cost on real code (round forty-four, corpus speed):
work a profile of part thirty-seven found done for nothing, each counted
in calls (not timed) on synthetic source in the shape of the corpus.

The cut of expressions too deep to read (`_deep.cut`) ran a whole pass
over every statement of every parsed file and pushed each `Load` and `+`
of a long expression: a third of the nodes it read were such marks, and
most statements are one short line, which nests no expression past the
limit. It now reads neither: the same cut (the tests of
`test_scan_deep_expressions`), a fraction of the calls.

A step whose list is a name had `_stage_values` read the `if` tests
around every node of its function before it looked for what it needs (a
scope's collection added to the list, a `variable_scope` opened): most
functions hold neither, and now cost a walk alone."""

import ast

import pytest

import scanned
from test_scan_deep_expressions import _deep, _sum


def _cut_calls(text):
  """The Python calls `_deep.cut` makes in its own module on `text`'s
  tree (5 a statement at 2aeb820, 1 now), and what it replaced."""
  tree = ast.parse(text)
  return scanned.calls_made(lambda: _deep().cut(tree), "_deep.py", ("call",))


@pytest.mark.parametrize("statement", (
    "x = a + b", "opt.minimize(loss, var_list=vs)", "return g * m",
    "if step > 10: train_op = None"))
def test_a_short_statement_costs_the_cut_one_call(statement):
  lines = 300
  indent = "  " if statement.startswith("return") else ""
  head = "def f():\n" if indent else ""
  calls, replaced = _cut_calls(head + "".join(
      f"{indent}{statement}\n" for _ in range(lines)))
  assert replaced == 0
  assert calls <= 2 * lines, calls


def test_a_long_expression_costs_no_call_for_its_marks():
  # `(a0 +\n a1 +\n ...)`: every `+` over two lines or more is read (it
  # might nest deep), but its `+` and each name's `Load` are no levels
  # (7 calls a term at 2aeb820: 3 for each `+`; 5 now).
  terms = 90
  text = "total = (" + " +\n    ".join(f"a{i}" for i in range(terms)) + ")\n"
  calls, replaced = _cut_calls(text)
  assert replaced == 0
  assert calls <= 5 * terms, calls


def test_a_call_over_many_lines_costs_one_call_a_keyword():
  # `tf.layers.dense(\n    x,\n    units=8,\n ...)`: the call is read (it
  # spans lines), but each keyword on a line of its own is short (4
  # calls a keyword at 2aeb820, 1 now).
  keywords = 200
  text = "y = f(\n" + "".join(f"    k{i}=v{i},\n" for i in range(
      keywords)) + ")\n"
  calls, replaced = _cut_calls(text)
  assert replaced == 0
  assert calls <= 2 * keywords, calls


def test_a_deep_sum_on_one_line_is_still_cut():
  # The short statement skipped is short: one past the limit is read.
  limit = _deep().LIMIT
  assert _cut_calls(f"x = {_sum(limit + 20)}\n")[1] == 1
  assert _cut_calls(f"if x: y = {_sum(limit + 20)}\n")[1] == 1


@pytest.mark.parametrize("body", ["def step(): pass", "class Step: pass"])
def test_a_deep_decorator_of_a_one_line_definition_is_still_cut(body):
  # The final read of round forty-four: a definition's span starts at
  # its `def`, so its decorators, on the lines above, are not within
  # the short line it looks (a 2,400-term decorator stopped a detector
  # with a RecursionError).
  limit = _deep().LIMIT
  assert _cut_calls(f"@deco({_sum(limit + 20)})\n{body}\n")[1] == 1


def _steps_of_a_grown_list(lines):
  """A function of `lines` layers whose two steps train a list grown
  under a stage test, with no scope's collection in it."""
  body = "".join(f"    h{i} = tf.layers.dense(h{i - 1 if i else ''}x, 8)\n"
                 for i in range(lines))
  return f"""import tensorflow as tf


def train(x, loss, stage):
{body}    train_vars = [v for v in tf.trainable_variables() if "d" in v.name]
    if stage == "a":
        train_vars.append(x)
    op = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=train_vars)
    op2 = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=train_vars)
    return op, op2
"""


def test_a_list_grown_with_no_scope_reads_no_tests_around():
  # `_stage_values` read the `if` tests around every node of the function
  # (a walk of its own, 86 calls a line at 2aeb820) before it looked for
  # a scope's collection added to the list; it looks first (13 now).
  small, large = (scanned.scan_work(_steps_of_a_grown_list(n),
                                    "_stage_values.py") for n in (50, 200))
  assert large - small <= 30 * 150, (small, large)
