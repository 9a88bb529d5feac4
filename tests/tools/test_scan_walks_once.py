"""`tfpartial scan` reads what it asks of a tree once, and no more of it
than the question needs, answering as the plain reading does: the lists
the `if`s of an `elif` chain add to (each `if` once, not once per `if`
around it: part twenty-five's DINAE notebooks), the `with` statements
under a network's root scope (statements only: a `with` is never inside
an expression), the calls outside any scope (one stack, no `Load` or
`+`), the tests of the `if`s around each node of a function (each `if`'s
body found by id, not searched for each child: part twenty-three's zhihu
notebooks), and whether a method's outermost function is called (once
per name)."""

import ast
import textwrap

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _whole_writes
from tfpartial._tools.scan.idioms._wholes import _named_scopes
from tfpartial._tools.scan.idioms._wholes import _reached

_BLOCKS = textwrap.dedent("""\
    import tensorflow as tf
    with tf.variable_scope('net'):
      with tf.variable_scope('conv1'):
        pass
    def f(x):
      if x:
        with a: pass
      elif y:
        with b: pass
      else:
        with c: pass
      for i in x:
        with d: pass
      else:
        with e: pass
      while x:
        with g: pass
      else:
        with h: pass
      try:
        with i: pass
      except E:
        with j: pass
      else:
        with k: pass
      finally:
        with l: pass
      match x:
        case 1:
          with m: pass
      return lambda: [w for w in x]
    async def h():
      async with n:
        with o: pass
    class C:
      with p: pass
      def m(self):
        try:
          pass
        except* E:
          with q: pass
""")


def _chain(count, loop=True):
  """An `if` and `count - 1` `elif`s, each adding to its own list, then
  an `else`; in a loop (`for v in vs:`) or alone."""
  pad = "  " if loop else ""
  arms = [f"{pad}{'if' if i == 0 else 'elif'} k == {i}:\n"
          f"{pad}  l{i}.append(v)\n" for i in range(count)]
  body = "".join(arms) + f"{pad}else:\n{pad}  other += [v]\n"
  return f"for v in vs:\n{body}" if loop else body


def _added_by_hand(body):
  """`_scopes.added_to` as it read before: every node of every
  statement, walked afresh."""
  found = set()
  for statement in body:
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and isinstance(
          node.func, ast.Attribute) and node.func.attr in {
              "append", "extend", "insert", "add", "update"}:
        found.add(_names.dotted(node.func.value) or "")
      elif isinstance(node, ast.AugAssign):
        found.add(_names.dotted(node.target) or "")
  return found - {""}


def test_withs_are_those_a_full_walk_finds():
  tree = ast.parse(_BLOCKS)
  walked = [n for n in ast.walk(tree)
            if isinstance(n, (ast.With, ast.AsyncWith))]
  found = list(_reached._withs(tree))
  assert len(found) == len(walked) == 18
  assert {id(n) for n in found} == {id(n) for n in walked}


def test_sub_scopes_are_read_from_the_withs(monkeypatch):
  code = textwrap.dedent("""\
      with tf.variable_scope('net'):
        with tf.variable_scope('conv1'):
          h = layer(x)
        if deep:
          with tf.variable_scope('conv2'):
            h = layer(h)
        y = tf.layers.dense(h, 10, name='logits')
  """)
  project = _project.Project([_files.Source("m.py", code)])
  walks = []
  real = _reached._withs
  monkeypatch.setattr(_reached, "_withs",
                      lambda tree: walks.append(tree) or real(tree))
  assert sorted(_reached._children_of(project, "net")) == [
      "conv1", "conv2", "logits"]
  assert len(walks) == 1


def test_lists_added_to_are_as_a_full_walk_reads():
  codes = [_BLOCKS, _chain(1), _chain(7), _chain(5, loop=False),
           "if a:\n  pass\nelif b:\n  x.add(1)\n  if c:\n    y += 1\n"
           "  elif d:\n    z.m.extend(w)\nelse:\n  q.update(r)\n",
           "if f(x.append(1)):\n  pass\nelse:\n  if g:\n    y.insert(0, 1)\n"
           "  p += 1\n", "if a:\n  pass\n"]
  for code in codes:
    tree = ast.parse(code)
    blocks = [tree.body] + [getattr(n, f) for n in ast.walk(tree)
                            for f in ("body", "orelse") if isinstance(
                                getattr(n, f, None), list)]
    for _ in range(2):  # Kept the second time.
      for block in blocks:
        assert _scopes.added_to(block) == _added_by_hand(block), code


def test_an_elif_chain_in_a_loop_is_walked_once_per_if(monkeypatch):
  walked = []
  real = _scopes.walk
  monkeypatch.setattr(_scopes, "walk",
                      lambda node: walked.append(node) or real(node))
  for count in (10, 40):
    walked.clear()
    module = _scopes.collect(ast.parse(_chain(count)))
    assert set(module.defs) >= {"v", "other"}
    ifs = [n for n in walked if isinstance(n, ast.If)]
    # Before: each `if` walked again for each `if` around it (820 for 40).
    assert len(ifs) == 0 and len(walked) <= 4 * count, len(walked)


def test_outside_scopes_reads_as_the_recursive_walk():
  def by_hand(node):
    for child in ast.iter_child_nodes(node):
      yield child
      if not (isinstance(child, ast.With) and any(
          isinstance(i.context_expr, ast.Call) and _names.call_name(
              i.context_expr) in _names.TF_SCOPES for i in child.items)):
        yield from by_hand(child)
  tree = ast.parse(_BLOCKS + "z = sdae(a + b, -c, name='ae') and d\n")
  read = list(_named_scopes._outside_scopes(tree))
  kept = [n for n in by_hand(tree) if not isinstance(n, (
      ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop))]
  assert [id(n) for n in read] == [id(n) for n in kept]
  # One stack over the nodes a question can need: no `Load`, `+`, `and`.
  assert len(read) < len(list(by_hand(tree)))


def test_a_methods_caller_is_searched_once_per_name(monkeypatch):
  code = textwrap.dedent("""\
      class Pruner:
        def prune(self, model):
          model.set_weights(self.masked)
          model.set_weights(self.masked)
      Pruner().prune(net)
  """)
  project = _project.Project([_files.Source("p.py", code)])
  analysis = Analysis(project)
  asked = []
  real = project.all_modules_with
  monkeypatch.setattr(project, "all_modules_with",
                      lambda words, *rest: asked.append(words) or real(
                          words, *rest))
  places = [place for place, _ in analysis.calls_named(("set_weights",))]
  assert len(places) == 2
  assert [_whole_writes._runs(p, analysis) for p in places] == [True, True]
  assert asked == [("prune",)]


def test_the_tests_around_each_node_are_read_once_per_if(monkeypatch):
  from tfpartial._tools.scan.idioms._runs import _stage_values

  def by_hand(function):
    found = {}

    def visit(node, tests):
      for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef, ast.Lambda)):
          continue
        found[id(child)] = tests
        if isinstance(node, ast.If) and child in node.body:
          visit(child, [*tests, node.test])
        elif isinstance(node, ast.If) and child in node.orelse:
          visit(child, [*tests, ast.UnaryOp(ast.Not(), node.test)])
        else:
          visit(child, tests)
    for statement in function.body:
      found[id(statement)] = []
      visit(statement, [])
    return found
  code = "def f(x):\n" + textwrap.indent(_BLOCKS + _chain(6), "  ")
  function = ast.parse(code).body[0]
  read = _stage_values._around(function)
  plain = by_hand(function)
  # Every node a question asks about (all but a `Load` or `+`), with the
  # same tests around it.
  asked = [n for n in _scopes.walk(function) if id(n) in plain]
  assert len(asked) > 100 and {id(n) for n in asked} == set(read)
  for node in asked:
    assert [ast.dump(t) for t in read[id(node)]] == [
        ast.dump(t) for t in plain[id(node)]]
  seen = []
  real = _scopes.children
  monkeypatch.setattr(_scopes, "children",
                      lambda node: seen.append(node) or real(node))
  _stage_values._around(function)
  assert len(seen) == len(asked)  # Each node's children listed once.
