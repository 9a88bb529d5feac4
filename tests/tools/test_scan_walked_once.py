"""`tfpartial scan` walks a function, class, module or loop once and keeps
the walk: the idioms ask for the nodes of the same function many times
(part twenty-four's detr-tensorflow and part twenty-three's slow
repositories listed the same nodes' children again for each question).
A step's scope names are read once per scan, not once per other step
that asks (`_wider_step`), and a loop's gathered lists read the loop's
kept walk (`_newest_first`)."""

import ast
import collections
import gc
import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _newest_first
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _wider_step

_TRAIN = textwrap.dedent("""\
    import tensorflow as tf

    def train(x, y, steps):
      with tf.variable_scope('body'):
        h = tf.layers.dense(x, 4)
      with tf.variable_scope('head'):
        out = tf.layers.dense(h, 2)
      loss = tf.reduce_mean(tf.square(out - y))
      head = [v for v in tf.trainable_variables() if 'head' in v.name]
      kept = []
      for v in tf.trainable_variables():
        if 'body' not in v.name:
          kept.append(v)
      op = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=head)
      with tf.Session() as sess:
        for i in range(steps):
          sess.run(op)

    class Net(object):
      def build(self, x):
        return tf.layers.dense(x, 2)

    while steps:
      steps = next(steps)
    """)


def _listings(monkeypatch):
  """How many times each node's children are listed, by `id`, through
  the scanner's walk or `ast.walk`."""
  listed = collections.Counter()
  children, iter_children = _scopes._children, ast.iter_child_nodes

  def counted(node):
    listed[id(node)] += 1
    return children(node)

  def iter_counted(node):
    listed[id(node)] += 1
    return iter_children(node)
  monkeypatch.setattr(_scopes, "_children", counted)
  monkeypatch.setattr(ast, "iter_child_nodes", iter_counted)
  return listed


@pytest.mark.parametrize("kind", ["module", "function", "class", "for",
                                  "while"])
def test_scope_and_loop_walked_once(monkeypatch, kind):
  tree = ast.parse(_TRAIN)
  node = {"module": tree,
          "function": tree.body[1],
          "class": tree.body[2],
          "for": next(n for n in ast.walk(tree) if isinstance(n, ast.For)),
          "while": tree.body[3]}[kind]
  listed = _listings(monkeypatch)
  first = list(_scopes.walk(node))
  assert all(list(_scopes.walk(node)) == first for _ in range(5))
  inner = [n for n in first if isinstance(n, ast.Call)]
  assert inner and all(listed[id(n)] == 1 for n in inner)
  assert listed[id(node)] == 1


def test_kept_walk_is_the_walk():
  """Silent twin: the kept walk is the walk, breadth first, each time."""
  tree = ast.parse(_TRAIN)
  statements = [type(n).__name__ for n in tree.body[1].body]
  first = [type(n).__name__ for n in _scopes.walk(tree.body[1])]
  assert first[:2] == ["FunctionDef", "arguments"]
  assert first[2:2 + len(statements)] == statements
  again = [type(n).__name__ for n in _scopes.walk(tree.body[1])]
  assert again == first
  parts = [tree.body[1].args, *tree.body[1].body]
  assert sorted(first) == sorted(["FunctionDef"] + [
      type(n).__name__ for part in parts for n in _scopes.walk(part)])


def test_expression_walks_not_kept(monkeypatch):
  """Silent twin: an expression's walk is not kept (its nodes are walked
  again), so a value the scanner builds is read as it stands."""
  value = ast.parse("f(a, g(b))").body[0].value
  listed = _listings(monkeypatch)
  list(_scopes.walk(value))
  list(_scopes.walk(value))
  assert listed[id(value)] == 2
  assert set(vars(value)) == {*value._fields, *value._attributes}


def test_function_walked_once_per_scan(monkeypatch):
  """Over a whole scan, each idiom asking for a function's nodes reads
  one walk: its `def` is listed a few times (its own walk, its module's,
  its class's), not once per question."""
  listed = collections.Counter()
  children = _scopes._children

  def counted(node):
    if isinstance(node, (ast.FunctionDef, ast.For)):
      listed[(type(node).__name__, getattr(node, "name", node.lineno))] += 1
    return children(node)
  monkeypatch.setattr(_scopes, "_children", counted)
  found = scanned.in_project({"train.py": _TRAIN})
  assert ("var-list-filter", "train.py", 9) in found
  assert listed[("FunctionDef", "train")] <= 3, listed
  assert all(count <= 4 for count in listed.values()), listed


def _steps(count):
  module = _scopes.collect(ast.parse("pass"))
  steps = []
  for i in range(count):
    names = " + ".join(f"col('s{j}')" for j in range(i + 1))
    value = ast.parse(f"[v for v in ({names}) if v.trainable]").body[0].value
    steps.append(Step(ast.Call(ast.Name("f"), [], []), module, value,
                      "loss", {}))
  return steps


def test_step_scope_names_read_once(monkeypatch):
  steps = _steps(30)
  listed = _listings(monkeypatch)
  wider = [_wider_step.trained_wider(step, steps) for step in steps]
  assert wider == [True] * 29 + [False]
  lists = [step.var_list for step in steps]
  assert all(listed[id(v)] == 1 for v in lists), max(
      listed[id(v)] for v in lists)


def test_step_scope_names_as_before():
  """Silent twin: steps over the same scopes, or a comprehension's own
  variable, are not wider (the names read once are the same names)."""
  steps = _steps(3)
  same = _steps(3)[2]
  assert not _wider_step.trained_wider(steps[2], [steps[2], same])
  assert _wider_step.trained_wider(steps[0], steps)


def test_loop_gathered_lists_walk_the_loop_once(monkeypatch):
  tree = ast.parse(textwrap.dedent("""\
      for v in every:
        if 'a' in v.name:
          kept.append(v)
      for w in every:
        other.append(w)
      """))
  loop = tree.body[0]
  listed = _listings(monkeypatch)
  found = [list(_newest_first._gathered_into(loop, "every"))
           for _ in range(10)]
  assert found == [["kept"]] * 10
  assert [list(_newest_first._gathered_into(tree.body[1], "every"))] == [
      ["other"]]
  assert listed[id(loop)] == 1
  assert listed[id(loop.body[0])] == 1


def _functions_alive():
  return sum(1 for each in gc.get_objects() if isinstance(
      each, ast.FunctionDef))


def test_kept_walk_frees_the_tree_without_the_collector():
  """Silent twin: what a node keeps holds no cycle (the scan pauses the
  cycle collector and frees its trees as their last reference goes)."""
  gc.collect()
  before = _functions_alive()
  paused = gc.isenabled()
  gc.disable()
  try:
    tree = ast.parse(_TRAIN)
    for node in ast.walk(tree):
      if type(node) in (ast.Module, ast.FunctionDef, ast.ClassDef, ast.For):
        list(_scopes.walk(node))
    assert _functions_alive() == before + 2
    del tree, node
    assert _functions_alive() == before
  finally:
    if paused:
      gc.enable()
