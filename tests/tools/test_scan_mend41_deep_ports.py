"""mend41 (issue 30): `_deep.cut` puts `...` where an expression nests past
its limit, and marks it; no port rewrites a part it cut. On a line a tab
indents, the text of a node comes from the tree when the file's columns
do not match it, and a cut tree's text holds `...`: `--diff` once wrote
it into the user's file. Now such a finding says "port by hand: the
expression is too deep to rewrite" and its `--diff` is empty; a shallow
twin is still ported. Synthetic, from `test_scan_port_pairs.SCATTERED`."""

import textwrap

import pytest
import test_scan_port_pairs as pairs

from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_BY_HAND = "port by hand: the expression is too deep to rewrite"


def _scattered(terms, indent):
  deep = " + ".join(["1"] * terms)
  return textwrap.dedent(pairs.SCATTERED[0]).replace("    ", indent).replace(
      "num_points_aprox - 1", f"num_points_aprox - ({deep})")


def _finding_and_diff(text):
  findings = _scan.scan_text("m.py", text)
  assert [(f.idiom, f.line) for f in findings] == [("grads-mask", 11)]
  data, _ = _diff.diff(findings, {"m.py": _files.Source("m.py", text)})
  return findings[0], data.decode()


@pytest.mark.parametrize("indent", ["\t", "    "])
def test_a_deep_index_is_ported_by_hand_and_writes_no_placeholder(indent):
  finding, diff = _finding_and_diff(_scattered(200, indent))
  assert (finding.by_hand, finding.edits, diff) == (_BY_HAND, (), "")


@pytest.mark.parametrize("indent", ["\t", "    "])
def test_a_shallow_twin_is_still_ported(indent):
  finding, diff = _finding_and_diff(_scattered(40, indent))
  assert finding.by_hand == "" and "spec.apply_gradients" in diff
  assert "..." not in diff


def test_a_message_quoting_a_deep_mask_quotes_no_placeholder():
  deep = " + ".join(["1"] * 200)
  text = ("import tensorflow as tf\n\ndef train(opt, loss, w):\n"
          "\tgrads = tf.gradients(loss, [w])\n\tif 1:\n\t\tg = grads[0]\n"
          f"\t\tg *= tf.constant([0.0, 1.0, 1.0]) * ({deep})\n"
          "\topt.apply_gradients([(g, w)])\n")
  findings = _scan.scan_text("m.py", text)
  assert [(f.idiom, f.line, f.by_hand) for f in findings] == [
      ("grads-mask", 7, _BY_HAND)]


def test_the_cut_marks_what_it_puts_in():
  import ast
  from tfpartial._tools.scan import _deep
  tree = ast.parse("x = " + " + ".join(["1"] * 300) + "\ny = a + b\n")
  assert _deep.cut(tree) == 1
  assert [_deep.holds_cut(s) for s in tree.body] == [True, False]

