"""A notebook is parsed once: the tree of reading's whole-notebook parse
check is the project's (a notebook project's parses were a third of its
scan); taken once, and only when it is the tree of the text kept (one
read cell by cell keeps its cells' trees, moved to where they land). And
the cycle collector is paused while a project is read and scanned (it
took 40% of a notebook folder's scan), then restored, error or not."""

import ast
import gc
import io
import json

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _main
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scan


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


def test_a_notebook_read_cell_by_cell_keeps_its_kept_cells_tree(tmp_path):
  source = _notebook(tmp_path, "z = 0", "x = (", "y = (1,\n     2)")
  assert source.text == "z = 0\ny = (1,\n     2)\n" and source.notes
  assert [ast.dump(t, include_attributes=True) for t in source.tree] == [
      ast.dump(ast.parse(source.text), include_attributes=True)]


@pytest.mark.parametrize("fails", [False, True], ids=["scans", "raises"])
def test_the_collector_is_paused_while_scanning_and_restored(
    tmp_path, monkeypatch, fails):
  (tmp_path / "t.py").write_text("x = 1\n")
  scan, seen = _scan.scan, []

  def watched(sources):
    seen.append(gc.isenabled())
    if fails:
      raise RuntimeError("boom")
    return scan(sources)

  monkeypatch.setattr(_scan, "scan", watched)
  assert gc.isenabled()
  try:
    _main.run([str(tmp_path)], "json", False, io.StringIO(), io.StringIO())
  except RuntimeError:
    assert fails
  assert seen == [False] and gc.isenabled()
  gc.disable()  # A caller that had paused it keeps it paused.
  try:
    _main.run([str(tmp_path)], "json", False, io.StringIO(), io.StringIO())
  except RuntimeError:
    pass
  finally:
    paused = not gc.isenabled()
    gc.enable()
  assert paused
