"""The scan's fast paths answer as the plain reading they stand for: a
module's `def` words, its words, its line starts, a notebook line's
state, a notebook cell past its last IPython line, a module's parents."""

import ast
import re
import textwrap

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _lines
from tfpartial._tools.scan import _notebook
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _project


def _project_of(texts):
  return _project.Project([_files.Source(p, t) for p, t in texts.items()])


def test_functions_named_in_any_module_parses_only_the_ones_writing_def():
  project = _project_of({
      "a.py": "def build_helper(x):\n  return x\n",  # A longer name.
      "b.py": "x = build(1)\n",  # Calls it, defines nothing.
      "c.py": "# def def build\ndef def_build(x):\n  pass\n",
      "d.py": "def  build(x):\n  return x\n",
      "e.py": "class A:\n  def build(self):\n    return 1\n",
  })
  found = list(project.functions_named(("build",), unscanned=True))
  assert sorted(project.module_of(s).path for s in found) == ["d.py", "e.py"]
  parsed = sorted(m.path for m in project.modules if m.scope is not None)
  # `c.py`'s comment writes `def build` (after `def def`): a candidate,
  # parsed, though it defines no `build`.
  assert parsed == ["c.py", "d.py", "e.py"]


def test_all_modules_with_finds_whole_words_only():
  project = _project_of({
      "a.py": "y = masks_of(x)\n",
      "b.py": "y = masks(x)\n",
      "c.py": "z = 'masks'\n",
      "d.py": "opt.minimize(loss)\nmasks = 1\n",  # Scanned.
  })
  asked = {("masks",): ["b.py", "c.py", "d.py"],
           ("masks_of", "x"): ["a.py", "b.py"],
           # One that is not a word is looked up in the text, as written.
           ("masks(x",): ["b.py"], ("mask",): []}
  for _ in range(20):  # Searched at first, then from the index of words.
    for words, paths in asked.items():
      assert [m.path for m in project.all_modules_with(words)] == paths
  assert project._all_words is not None


def test_line_starts_as_python_counts_lines():
  for text in ("", "a", "a\n", "a\nb", "\n\n", "a\r\nb\rc\n", "a\x0cb\n",
               "a\u2028b\nc"):
    module = _project.Module(_files.Source("a.py", text), ("a",))
    assert module._line_starts == [0, *(
        m.end() for m in re.finditer(r"\r\n|\r|\n", text))], text


def _state_by_hand(lines):
  """The line states, read character by character as before."""
  states, depth, quote = [], 0, ""
  for line in lines:
    at, joined = 0, False
    while at < len(line):
      if quote:
        if line[at] == "\\":
          at += 2
          continue
        if line.startswith(quote, at):
          at, quote = at + len(quote), ""
          continue
        at += 1
        continue
      for token in ('"""', "'''", '"', "'", "#", "(", ")", "\\"):
        if line.startswith(token, at):
          break
      else:
        at += 1
        continue
      if token == "#":
        break
      if token == "\\":
        joined = at == len(line) - 1
        at += 1
        continue
      if token in "()":
        depth = depth + 1 if token == "(" else max(0, depth - 1)
      else:
        quote = token
      at += len(token)
    if len(quote) == 1 and not line.endswith("\\"):
      quote = ""
    states.append((depth, quote, joined))
  return states


def test_line_state_skips_what_a_backslash_escapes_in_a_string():
  lines = ['x = "a\\"b" + f(', "  '''q\\''' \\\\", "'''", 's = "c\\\\" # (',
           'y = "open \\', 'still"', 't = ("""', 'u \\""" v', '""")']
  state, got = _lines.LineState(), []
  for line in lines:
    state.feed(line)
    got.append((state.depth, state.quote, state.joined))
  assert got == _state_by_hand(lines)


def test_a_cell_past_its_last_ipython_line_is_kept_as_written():
  code = textwrap.dedent("""\
      !pip install x \\
        y
      s = '''
      !not a magic: in a string
      '''
      z = f(a,
            b)
      w = 'ends the cell'""")
  assert _notebook.python_of(code) == textwrap.dedent("""\
      pass

      s = '''
      !not a magic: in a string
      '''
      z = f(a,
            b)
      w = 'ends the cell'""")
  assert _notebook.python_of("x = 1  # why?\n%time y = 2\nz = 3") == (
      "x = 1  # why?\npass\nz = 3")


def test_parents_are_those_ast_walk_gives():
  tree = ast.parse(textwrap.dedent("""\
      @d(k=1)
      def f(a, *b, c=2, **e):
        with g() as (h, i):
          return [j for j in h if j > -1] + {k: v async for k, v in i}
      match p:
        case [1, *rest] if rest:
          pass
      """))
  walked = {}
  for node in ast.walk(tree):
    for child in ast.iter_child_nodes(node):
      walked[id(child)] = node
  assert _order.Order(tree)._parents == walked


def test_whether_a_line_assigns_an_attribute_is_kept_per_line_and_name():
  module = _project.Module(_files.Source("a.py", textwrap.dedent("""\
      self.w = 1
      self.w_mask.append(m)
      f(self.w, self.ww)
      x = self.w == 2
      """)), ("a",))
  for _ in range(2):  # Worked out, then remembered: the same answers.
    assert [module.assigns(n, "w") for n in (1, 2, 3, 4)] == [
        True, False, True, False]
    assert [module.assigns(n, "w_mask") for n in (1, 2, 3, 4)] == [
        False, True, False, False]
    assert module.assigns(3, "ww") and not module.assigns(3, "w_")


def _fed_analysis():
  from tfpartial._tools.scan._analysis import Analysis
  project = _project_of({
      "net.py": textwrap.dedent("""\
          def build(w):
            mask = tf.placeholder(tf.float32, name="prune_mask")
            drop = tf.placeholder(tf.float32, name="drop_mask")
            plain = tf.placeholder(tf.float32)
            return w * mask * drop * plain
          """),
      "train.py": textwrap.dedent("""\
          feed = {plain: np.ones(3)}
          feed["prune_mask:0"] = np.abs(sess.run(w)) > 0.1
          feed["drop_mask:0"] = np.random.binomial(1, 0.5, size=3)
          sess.run(train_op, feed_dict=feed)
          """),
  })
  analysis = Analysis(project)
  scope = next(iter(project.functions_named(("build",), unscanned=True)))
  return analysis, scope


def test_fed_masks_read_each_modules_keyed_values_once(monkeypatch):
  from tfpartial._tools.scan.idioms._masks import _evaluated
  listed = []
  keyed = _evaluated._keyed

  def counted(tree):
    listed.append(id(tree))
    return keyed(tree)

  monkeypatch.setattr(_evaluated, "_keyed", counted)
  analysis, scope = _fed_analysis()
  found = {name: (_evaluated.fed(ast.Name(name), scope, analysis),
                  _evaluated.fed_otherwise(ast.Name(name), scope, analysis))
           for name in ("mask", "drop", "plain", "mask")}
  # A thresholding of the session's values, a draw, a constant.
  assert found == {"mask": (True, False), "drop": (False, True),
                   "plain": (False, False)}
  # Six questions over the feeding module: its keyed values listed once.
  assert listed and len(listed) == len(set(listed))


def test_a_call_that_adds_to_no_list_binds_nothing(monkeypatch):
  from tfpartial._tools.scan import _scopes
  made = []

  class Counted(_scopes._Binder):

    def __init__(self, *args, **kwargs):
      made.append(args[1])
      super().__init__(*args, **kwargs)

  monkeypatch.setattr(_scopes, "_Binder", Counted)
  module = _scopes.collect(ast.parse(textwrap.dedent("""\
      f(x)
      opt.minimize(loss)
      g.sort()
      g.append(v)
      h.remove(u)
      """)))
  # Only the calls that write into a list bind (one binder each).
  assert len(made) == 2
  assert [ast.unparse(d.value) for d in module.defs["g"]] == ["v"]
  assert [ast.unparse(d.value) for d in module.defs["h"]] == ["h.remove(u)"]
  assert set(module.defs) == {"g", "h"}


def test_unread_gradients_read_a_modules_tree_once(monkeypatch):
  from tfpartial._tools.scan._analysis import Analysis
  from tfpartial._tools.scan.idioms._runs import _dropped
  read = []
  reads = _dropped._reads

  def counted(tree, *builtins):
    read.append(tree)
    return reads(tree, *builtins)

  monkeypatch.setattr(_dropped, "_reads", counted)
  project = _project_of({"train.py": textwrap.dedent("""\
      def train(loss, w1, w2):
        w1_grad = tf.gradients(loss, [w1])[0]
        # print(w1_grad)
        w2_grad = tf.gradients(loss, [w2])[0]
        return w2_grad
      """)})
  analysis = Analysis(project)
  scope = next(iter(project.functions_named(("train",), unscanned=True)))
  calls = [n for n in scope.nodes if isinstance(n, ast.Call) and (
      getattr(n.func, "attr", "") == "gradients")]
  # The first is read nowhere (its print commented out); the second is
  # returned. Asked twice each, the module's tree read once.
  assert [_dropped.unread_gradients(c, scope, analysis)
          for c in calls * 2] == [True, False, True, False]
  assert len(read) == 1
