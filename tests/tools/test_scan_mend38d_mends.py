"""`tfpartial scan` after the review of the second mends: both sides of a
conflict binding one attribute (`self.head =`) bind a name in common, so
each side is read as its own version. Reduced from the reviewer's probes."""

import textwrap

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _scan_of(text):
  scan = _scan.scan([_files.Source("train.py", textwrap.dedent(text))])
  return [(f.idiom, f.line) for f in scan.findings]


def test_both_sides_binding_one_attribute_are_read_apart():
  assert _scan_of('''\
      import tensorflow as tf


      class Trainer(object):
        def build(self, model, loss):
      <<<<<<< HEAD
          self.head = [v for v in model.trainable_variables if "head" in v.name]
      =======
          self.head = model.trainable_variables
      >>>>>>> feature
          self.train_op = tf.train.AdamOptimizer().minimize(
              loss, var_list=self.head)
      ''') == [("var-list-filter", 7)]

