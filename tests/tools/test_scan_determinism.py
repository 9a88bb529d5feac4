"""`tfpartial scan` gives the same findings on every run. Its memos are
keyed by `id`: a node made on the fly (a copy of an expression to read, a
name to look up) must stay alive while the analysis lives, or a later
node that Python places at the same address reads its labels. That made
a finding on a DARTS model come and go between runs (with the hash seed
and the memory layout), before the flow held what it memoised."""

import ast
import gc
import weakref

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def test_a_node_made_on_the_fly_outlives_its_memo():
  module = _scopes.collect(ast.parse(
      "g = tape.gradient(loss, w)\nw = tf.Variable(tf.zeros([3]))\n"))
  flow = Flow()
  made = [ast.Name(name, ast.Load()) for name in ("g", "w")]
  held = [weakref.ref(node) for node in made]
  assert "grad" in flow.labels(made[0], module)
  assert "grad" not in flow.labels(made[1], module)
  del made
  gc.collect()
  assert all(ref() is not None for ref in held)  # Its id stays its own.
