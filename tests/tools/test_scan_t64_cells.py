"""Notebook ports land in the cell that holds the finding, even where an
earlier cell (a markdown cell quoting the code) has the same source."""

import json
import os
import pathlib
import subprocess

from tfpartial._tools.scan import _main

import io

CELL = ('x = tf.Variable([1.0, 2.0, 3.0], name="x")\n'
        "loss = tf.reduce_sum(tf.square(x - 5.0))\n"
        "optimizer = tf.train.FtrlOptimizer(0.1, "
        "l1_regularization_strength=0.5)\n"
        "grads_and_vars = optimizer.compute_gradients(loss)\n"
        "mask = tf.constant([0.0, 1.0, 1.0])\n"
        "train_op = optimizer.apply_gradients("
        "[(g * mask, v) for g, v in grads_and_vars])\n")


def _cell(kind, text):
  cell = {"cell_type": kind, "metadata": {},
          "source": text.rstrip("\n").splitlines(True)}
  if kind == "code":
    cell.update(execution_count=None, outputs=[])
  return cell


def _port(folder, cells):
  path = pathlib.Path(folder) / "n.ipynb"
  path.write_text(json.dumps({
      "cells": cells, "metadata": {"kernelspec": {"language": "python"}},
      "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
  out, err = io.StringIO(), io.StringIO()
  here = os.getcwd()
  os.chdir(folder)
  try:
    assert _main.run(["n.ipynb"], "text", True, out, err) == 1
  finally:
    os.chdir(here)
  assert "port by hand" not in err.getvalue(), err.getvalue()
  (pathlib.Path(folder) / "port.diff").write_text(out.getvalue())
  for tool in (["git", "apply", "--check", "port.diff"],
               ["patch", "-p1", "-s", "-i", "port.diff"]):
    done = subprocess.run(tool, cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
  return json.loads(path.read_text())["cells"]


def test_the_port_lands_in_the_second_of_two_identical_cells(tmp_path):
  cells = [_cell("code", "import tensorflow.compat.v1 as tf\n"),
           _cell("markdown", CELL), _cell("code", CELL)]
  after = _port(tmp_path, cells)
  assert after[1] == cells[1]  # The quoting markdown cell is kept.
  ported = "".join(after[2]["source"])
  assert "tfpartial.freeze(" in ported, ported
  compile(ported, "cell", "exec")


def test_a_cell_alone_is_still_ported(tmp_path):
  # The usual case, kept: the only cell with that source.
  cells = [_cell("code", "import tensorflow.compat.v1 as tf\n"),
           _cell("markdown", "# Train\n"), _cell("code", CELL)]
  after = _port(tmp_path, cells)
  assert "tfpartial.freeze(" in "".join(after[2]["source"])
  assert after[1] == cells[1]
