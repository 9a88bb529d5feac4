"""`tfpartial scan`'s flag defaults: a `var-list-filter` whose scopes come
from a command-line flag is reported where the flag's default names the
scopes (that default is what a run without arguments trains). The
default is that of the flag's first definition outside test code,
dashes read as argparse reads them (`--trainable-scopes` is
`trainable_scopes`); a test's own parser sets no default of the run,
and a default of None chooses nothing (the finding stays at the
filter). Moved from test_scan_t60_costs.py, where they were written
beside the flag index that made the lookup linear."""

import scanned


def test_a_dashed_flags_default_is_found_through_the_flag_index():
  """A flag defined as `--trainable-scopes` (argparse reads it as
  `trainable_scopes`) gives the finding its default, as before the
  flag index: the index reads the flags a module defines, dashes and
  all, not only its words."""
  flags = """\
      def add_flags(parser):
        parser.add_argument('--trainable-scopes', default='Logits')
      """
  train = """\
      import argparse
      import tensorflow as tf
      from flags import add_flags

      parser = argparse.ArgumentParser()
      add_flags(parser)
      FLAGS = parser.parse_args()
      with tf.variable_scope('Net'):
        y = tf.layers.dense(x, 4)
      with tf.variable_scope('Logits'):
        z = tf.layers.dense(y, 4)
      scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
      var_list = []
      for s in scopes:
        var_list += tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, s)
      op = tf.train.AdamOptimizer().minimize(tf.reduce_sum(z), var_list=var_list)
      """
  assert scanned.in_project({"flags.py": flags, "train.py": train}) == [
      ("var-list-filter", "flags.py", 2)]


def test_a_tests_own_parser_gives_no_default_to_the_run():
  """The final read of the round: a test's own parser defining the flag
  with a default (`tests/flags_test.py`) is not the run's definition,
  and the run's own definition, whose default is None, chooses nothing:
  the finding stays at the filter."""
  flags = """\
      import argparse
      parser = argparse.ArgumentParser()
      parser.add_argument('--trainable-scopes', default=None)
      FLAGS, _ = parser.parse_known_args()
      """
  test = """\
      import argparse
      import tensorflow as tf

      class FlagsTest(tf.test.TestCase):
        def test_parse(self):
          parser = argparse.ArgumentParser()
          parser.add_argument('--trainable-scopes', default='Logits')

      if __name__ == '__main__':
        tf.test.main()
      """
  train = """\
      import tensorflow as tf
      from flags import FLAGS

      def variables_to_train():
        if FLAGS.trainable_scopes is None:
          return tf.trainable_variables()
        out = []
        for scope in FLAGS.trainable_scopes.split(','):
          out.extend(tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
        return out

      loss = tf.reduce_sum(tf.layers.dense(x, 4))
      op = tf.train.AdamOptimizer().minimize(loss, var_list=variables_to_train())
      """
  found = scanned.in_project({"flags.py": flags, "tests/flags_test.py": test,
                              "train.py": train})
  assert [(i, p) for i, p, _ in found] == [("var-list-filter", "train.py")]
