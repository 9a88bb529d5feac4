"""A long flat expression (a generated table's `1 + 1 + ... + 1`, one
`BinOp` inside the next) never costs a file its findings: every check
reads an expression to `_deep.LIMIT` levels, so a real grads-mask and a
real var-list filter beside such a sum are found at their lines at any
depth Python's parser takes; a file the parser itself refuses is one line
of the report and the other files are scanned."""

import ast
import importlib
import io
import json

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _main
from tfpartial._tools.scan import _scan

# Where the deep sum stands: (top of the module, the masking step, the
# filtering step, the mask's value, the filtered step's loss).
_PLACES = ("module", "masking", "filtering", "mask", "loss")
_DEPTHS = (40, 200, 1000, 2000, 2800)  # 2800: near the parser's own limit.


def _sum(terms, term="1"):
  return " + ".join([term] * terms)


def _train(terms, place):
  """A grads-mask (line 8) and a var-list filter (line 14) beside a sum
  of `terms` terms; the lines do not move with the place."""
  deep = _sum(terms)
  return (
      "import tensorflow as tf\n"
      f"TABLE = {deep if place == 'module' else 0}\n"
      "\n"
      "def train(opt, x):\n"
      f"  scale = {deep if place == 'masking' else 1}\n"
      "  loss = tf.reduce_sum(x * x) * scale\n"
      f"  mask = tf.constant([0.0, 1.0, 1.0]) * "
      f"({deep if place == 'mask' else 1})\n"
      "  gvs = opt.compute_gradients(loss)\n"
      "  return opt.apply_gradients([(g * mask, v) for g, v in gvs])\n"
      "\n"
      "def finetune(loss):\n"
      f"  total = {_sum(terms, 'loss') if place == 'filtering' else 0}\n"
      "  opt = tf.train.AdamOptimizer(1e-3)\n"
      "  tvars = [v for v in tf.trainable_variables()\n"
      "           if v.name.startswith('decoder')]\n"
      "  return opt.minimize(\n"
      f"      loss * ({deep if place == 'loss' else 1}), var_list=tvars)\n")


def _found(text):
  findings, errors = _scan.scan_project([_files.Source("t.py", text)])
  return [(f.idiom, f.line) for f in findings], errors


@pytest.mark.parametrize("terms", _DEPTHS)
@pytest.mark.parametrize("place", _PLACES)
def test_a_deep_sum_beside_a_mask_and_a_filter_keeps_both(place, terms):
  found, errors = _found(_train(terms, place))
  assert errors == [], errors  # No check stopped on the file.
  assert found == [("grads-mask", 9), ("var-list-filter", 14)], found


def test_without_the_sum_the_same_two_findings():
  # The twin that fixes the lines: what the deep files must still give.
  assert _found(_train(1, "module"))[0] == [
      ("grads-mask", 9), ("var-list-filter", 14)]


def test_a_deep_sum_alone_is_silent():
  for terms in _DEPTHS:
    assert _found(f"import tensorflow as tf\nX = {_sum(terms)}\n") == (
        [], [])


def test_a_file_the_parser_refuses_is_one_line_and_the_rest_is_scanned(
    tmp_path):
  (tmp_path / "table.py").write_text(
      f"import tensorflow as tf\nX = {_sum(20000)}\n"
      "opt.apply_gradients(grads_and_vars)\n")
  (tmp_path / "train.py").write_text(_train(1, "module"))
  out, err = io.StringIO(), io.StringIO()
  status = _main.run([str(tmp_path)], "json", False, out, err)
  found = [(f["path"].rsplit("/", 1)[-1], f["line"], f["idiom"])
           for f in json.loads(out.getvalue())]
  assert status == 1, err.getvalue()
  assert found == [("train.py", 9, "grads-mask"),
                   ("train.py", 14, "var-list-filter")], found
  lines = [line for line in err.getvalue().splitlines() if "table.py" in line]
  assert lines == [f"tfpartial scan: {tmp_path / 'table.py'}: skipped: "
                   "nested too deeply to parse"], err.getvalue()


def _deep():
  # Imported by the tests that read it: the others run on any scanner.
  return importlib.import_module("tfpartial._tools.scan._deep")


def test_the_cut_reads_an_expression_to_its_limit_and_no_deeper():
  limit = _deep().LIMIT
  tree = ast.parse(f"x = {_sum(limit + 20)}\n")
  assert _deep().cut(tree) == 1
  assert ast.unparse(tree).startswith("x = ... + 1")
  shallow = ast.parse(f"x = {_sum(limit)}\n")
  assert _deep().cut(shallow) == 0


def test_keywords_and_calls_count_as_levels():
  # `f(a=f(a=...))`: a keyword is a level of the expression, never a new
  # statement, so alternating calls and keywords are cut as well.
  deep = "f(a=" * 200 + "0" + ")" * 200
  tree = ast.parse(f"x = {deep}\n")
  assert _deep().cut(tree) == 1


def test_work_grows_linearly_with_the_depth():
  # A count of the scan's calls, not a time (a time bound with slack let
  # a quadratic cut pass): a quadratic cut would do about 16 times the
  # work for 4 times the terms (the cut reads no deeper than its limit).
  import scanned
  small, large = (scanned.scan_work(_train(terms, "filtering"))
                  for terms in (700, 2800))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("terms", (200, 2000))
def test_a_deep_table_over_many_lines_keeps_both(terms):
  # A generated table written one term a line: deep, each line short.
  table = "TABLE = (\n" + " +\n".join(["    1"] * terms) + ")\n"
  text = _train(1, "module") + table
  found, errors = _found(text)
  assert errors == [], errors
  assert found == [("grads-mask", 9), ("var-list-filter", 14)], found
