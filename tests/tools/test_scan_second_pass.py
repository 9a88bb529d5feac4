"""`tfpartial scan` on a file read twice through its conflicts: a place
both versions find is reported once, by line and idiom (the first
version's finding), as `_scan.scan` says; places found on one side only
are each reported."""

import textwrap

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _scan_of(text):
  scan = _scan.scan([_files.Source("train.py", textwrap.dedent(text))])
  return [(f.idiom, f.line, f.col) for f in scan.findings]


def test_a_place_both_versions_find_is_reported_once():
  assert _scan_of("""\
      import tensorflow as tf
      <<<<<<< HEAD
      rate = 1e-3
      =======
      rate = 1e-4
      >>>>>>> feature
      head = [v for v in model.trainable_variables if "head" in v.name]
      train_op = tf.train.AdamOptimizer(rate).minimize(loss, var_list=head)
      """) == [("var-list-filter", 7, 8)]


def test_places_each_side_finds_are_each_reported():
  found = _scan_of("""\
      import tensorflow as tf
      <<<<<<< HEAD
      head = [v for v in model.trainable_variables if "head" in v.name]
      =======
      head = [v for v in model.trainable_variables if "top" in v.name]
      >>>>>>> feature
      train_op = tf.train.AdamOptimizer().minimize(loss, var_list=head)
      """)
  assert [(idiom, line) for idiom, line, _ in found] == [
      ("var-list-filter", 3), ("var-list-filter", 5)]
