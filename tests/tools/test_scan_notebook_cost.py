"""`tfpartial scan` moves a notebook cell's tree to its line in one pass
of its own walk (part twenty-four's notebooks that do not parse whole):
`ast.increment_lineno` visited the shared `Load` and `+` leaves once per
use, three Python calls a node."""

import ast
import json

import scanned

from tfpartial._tools.scan import _notebook

_CELL = ("import tensorflow as tf\n"
         "w = tf.Variable(tf.zeros([3, 4]))\n"
         "loss = tf.reduce_sum(w * w) + f(a, b=[1, 2], *c)\n")


def _data(cells):
  return json.dumps({"nbformat": 4, "metadata": {}, "cells": [
      {"cell_type": "code", "source": c, "metadata": {}, "outputs": []}
      for c in cells]}).encode()


def test_cells_moved_in_one_pass():
  data = _data(["x = 1 +"] + [_CELL] * 20)  # The whole does not parse.
  calls, (text, _, notes, tree) = scanned.calls_made(
      lambda: _notebook.read_tree("n.ipynb", data), events=("call",))
  assert len(notes) == 1 and "cell 1" in notes[0]
  placed = sum(1 for node in ast.walk(tree) if hasattr(node, "lineno"))
  assert calls <= 4 * placed  # 8.7 a placed node with `increment_lineno`.


def test_moved_as_increment_lineno():
  source = ("async def f(a, *b, c=1, **d):\n"
            "  async with g() as (h, i):\n"
            "    return [j async for j in k if not j] + f'{a!r:>{c}}'\n"
            "match x:\n"
            "  case [1, *r] if r: pass\n"
            "  case {'a': b, **k} | C(d=1): pass\n"
            "try:\n  import a.b as c\nexcept* E as e:\n  x: int = -y < z\n")
  moved, expected = ast.parse(source), ast.parse(source)
  ast.increment_lineno(expected, 6)
  assert ast.dump(_notebook.moved(moved, 6), include_attributes=True) == (
      ast.dump(expected, include_attributes=True))
