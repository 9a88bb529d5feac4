"""A notebook is parsed once: the tree of reading's whole-notebook parse
check is the project's (a notebook project's parses were a third of its
scan); taken once, and only when it is the tree of the text kept."""

import ast
import json

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _project


def _notebook(tmp_path, *cells):
  path = tmp_path / "n.ipynb"
  path.write_text(json.dumps({"cells": [
      {"cell_type": "code", "source": cell} for cell in cells]}))
  return _files.read(str(path))


def test_the_tree_read_is_the_projects_and_is_taken_once(
    tmp_path, monkeypatch):
  source = _notebook(tmp_path, "!pip install x\nimport tensorflow as tf",
                     "w = tf.Variable(1.)\nw.assign(w * 0.)")
  assert len(source.tree) == 1
  parse = ast.parse
  parsed = []
  monkeypatch.setattr(ast, "parse", lambda *a, **k: parsed.append(a) or (
      parse(*a, **k)))
  project = _project.Project([source])
  module = project.modules[0]
  assert project.parsed(module) is not None
  assert parsed == [] and source.tree == []
  assert module.tree is not None
  assert ast.dump(module.tree, include_attributes=True) == ast.dump(
      parse(source.text), include_attributes=True)
  again = _project.Project([source])  # Taken: parsed anew.
  assert again.parsed(again.modules[0]) is not None and len(parsed) == 1


def test_a_notebook_read_cell_by_cell_keeps_no_tree(tmp_path):
  source = _notebook(tmp_path, "x = (", "y = 1")
  assert source.tree == [] and source.text == "y = 1\n"
  assert source.notes
