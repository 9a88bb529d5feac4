"""`tfpartial scan` reads what each read of the same thing asks for once:
a notebook whose whole text does not parse is parsed cell by cell and
never again as a whole (part twenty-three's zhihu notebooks); the
assignments of `self.x` are looked up once per class and attribute, and a
method's straight-line assignments once per method, however often the
method reads `self.x` (part twenty-three's FuncSherl, fifty look-alike
classes); the calls outside any scope are found once per module."""

import ast
import json
import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _notebook
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _superseded
from tfpartial._tools.scan.idioms._wholes import _named_scopes

_CELLS = [
    "import tensorflow as tf\nx = tf.Variable(1.0)",
    "print 'python 2'",  # Repaired as Python 2.
    "def f(:\n  pass",  # Left out.
    "with tf.variable_scope('a'):\n  y = x * 2\nz = [y,\n     x]",
]


def _data(cells):
  return json.dumps({"nbformat": 4, "metadata": {}, "cells": [
      {"cell_type": "code", "source": c, "metadata": {}, "outputs": []}
      for c in cells]}).encode()


def test_cells_make_the_notebooks_tree():
  text, _, notes, tree = _notebook.read_tree("n.ipynb", _data(_CELLS))
  assert len(notes) == 1 and "cell 3" in notes[0]
  assert tree is not None
  assert ast.dump(tree, include_attributes=True) == ast.dump(
      ast.parse(text), include_attributes=True)


def test_notebook_text_parsed_once(monkeypatch, tmp_path):
  path = tmp_path / "n.ipynb"
  path.write_bytes(_data(_CELLS + [
      "opt = tf.train.AdamOptimizer(0.1)\n"
      "train = opt.minimize(z[0], var_list=[x])"]))
  texts = []
  real = ast.parse

  def parse(source, *args, **kwargs):
    texts.append(source)
    return real(source, *args, **kwargs)
  monkeypatch.setattr(ast, "parse", parse)
  source = _files.read(str(path))
  project = _project.Project([source])
  assert project.parsed(project.modules[0]) is not None
  monkeypatch.undo()
  assert texts.count(source.text) == 0  # Its cells' trees were taken.


def _classes(count, reads):
  made = "".join(f"""\
      class Net{i}(object):
        def build(self, loss):
          self.vars = tf.get_collection(
              tf.GraphKeys.TRAINABLE_VARIABLES, 'net{i}')
""" + "".join(f"""\
          self.op{j} = tf.train.AdamOptimizer(0.1).minimize(
              loss, var_list=self.vars)
""" for j in range(reads)) for i in range(count))
  return "import tensorflow as tf\n\n" + textwrap.dedent(made)


def _counted(monkeypatch, target, names, code):
  calls = dict.fromkeys(names, 0)
  for name in names:
    real = getattr(target, name)

    def counting(*args, real=real, name=name):
      calls[name] += 1
      return real(*args)
    monkeypatch.setattr(target, name, counting)
  scanned.in_project(code)
  monkeypatch.undo()
  return calls


@pytest.mark.parametrize("reads", [2, 8])
def test_straight_code_read_once_per_method(monkeypatch, reads):
  calls = _counted(monkeypatch, _superseded, ["_straight"],
                   _classes(3, reads))
  assert calls["_straight"] <= 3  # Each method once.


@pytest.mark.parametrize("reads", [2, 8])
def test_attribute_looked_up_once_per_class(monkeypatch, reads):
  calls = _counted(monkeypatch, _project.Project, ["scopes_at"],
                   _classes(3, reads))
  assert calls["scopes_at"] <= 3 + 3  # Each class's `vars`, its `build`.


def test_calls_outside_scopes_found_once_per_module(monkeypatch):
  project = _project.Project([_files.Source("m.py", textwrap.dedent("""\
      def sdae(x, name='SDAE'):
        with tf.variable_scope(name):
          return tf.layers.dense(x, 4)
      def fc(name, x):
        with tf.variable_scope(name):
          return tf.layers.dense(x, 4)
      def dense(x, name):
        with tf.variable_scope(name):
          return tf.layers.dense(x, 4)
      a = sdae(x, name='ae')
      with tf.variable_scope('top'):
        b = fc('inner', a)
      c = dense(b, 'head')
  """))])
  module = project.modules[0]
  project.parsed(module)
  tree = module.tree
  calls = {"walks": 0}
  real = _named_scopes._outside_scopes

  def counting(node):
    calls["walks"] += node is tree
    return real(node)
  monkeypatch.setattr(_named_scopes, "_outside_scopes", counting)
  found = [list(_named_scopes._literal_arguments(project, module, named))
           for named in ({"sdae"}, {"fc"}, {"dense"}, {"sdae", "dense"})]
  assert [[(c.lineno, where) for c, _, _, where in f] for f in found] == [
      [(10, "name")], [], [(13, 1)], [(10, "name"), (13, 1)]]
  assert calls["walks"] == 1
