"""`tfpartial scan`: a table's looked-up rows multiplied by a second lookup,
with the same ids, into a fixed 0/1 column over the table's rows
(`tf.nn.embedding_lookup(emb, ids) * tf.nn.embedding_lookup(mask2d(emb),
ids)`, `mask2d` joining `tf.zeros([1, 1])` and `tf.ones([V - 1, 1])`).
That product is `embedding_lookup(emb * mask, ids)` written as two lookups:
every read of a row whose mask is 0 is multiplied by 0, so that row's
gradient is exactly 0 and it never trains, the "tables joined from
constants" case of `stop-gradient-mix` (tests/tools/scan_corpus/BUILDING.md),
counted only where the branch runs.

A mask computed from the ids themselves (`tf.sign(ids)`, `ids != 0`,
`tf.sequence_mask(lengths)`) is not counted, though where it is `ids != 0`
it also zeros row 0's gradient: it masks positions of a sequence (padding,
loss and attention masks), settled as not an instance, and the scan cannot
tell it from the sequence masks that hold rows of no table back; only a
mask kept per row of the table (looked up by the same ids as the table)
says that rows of that table are held out.
"""

import pytest

import scanned


def _mixes(code):
  return [f for f in scanned.found(code) if f[0] == "stop-gradient-mix"]


POSITIVE = {
    # hasky's melt ops: `exclude_zero_index=True` by default, the mask
    # column made by a helper from the table's shape.
    "a helper's row mask looked up by the same ids, on by default": ("""\
        def mask2d(emb):
          return tf.concat([tf.zeros([1, 1]),
                            tf.ones([emb.get_shape()[0] - 1, 1])], 0)

        def masked_lookup_sum(emb, index, exclude_zero_index=True):
          lookup_result = tf.nn.embedding_lookup(emb, index)
          if exclude_zero_index:
            masked_emb = mask2d(emb)
            mask_lookup_result = tf.nn.embedding_lookup(masked_emb, index)
            lookup_result = tf.multiply(lookup_result, mask_lookup_result)
          return tf.reduce_sum(lookup_result, 1)

        emb = tf.get_variable("emb", [1000, 64])
        enc = masked_lookup_sum(emb, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(enc))
        """, [("stop-gradient-mix", 10)]),
    # The column made in place, read by `gather` and `*`.
    "a row mask made in place, gathered by the same ids": ("""\
        table = tf.get_variable("table", [1000, 64])
        keep = tf.concat([tf.zeros([2, 1]), tf.ones([998, 1])], axis=0)
        x = tf.gather(table, ids) * tf.gather(keep, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """, [("stop-gradient-mix", 3)]),
}

NEGATIVE = {
    # The same helper, off by default and no call turns it on.
    "the branch off by default, never turned on": """\
        def mask2d(emb):
          return tf.concat([tf.zeros([1, 1]),
                            tf.ones([emb.get_shape()[0] - 1, 1])], 0)

        def masked_lookup_sum(emb, index, exclude_zero_index=False):
          lookup_result = tf.nn.embedding_lookup(emb, index)
          if exclude_zero_index:
            mask_lookup_result = tf.nn.embedding_lookup(mask2d(emb), index)
            lookup_result = tf.multiply(lookup_result, mask_lookup_result)
          return tf.reduce_sum(lookup_result, 1)

        emb = tf.get_variable("emb", [1000, 64])
        enc = masked_lookup_sum(emb, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(enc))
        """,
    # A padding mask computed from the ids: a mask of positions.
    "a padding mask of the ids on the looked-up vectors": """\
        emb = tf.get_variable("emb", [1000, 64])
        x = tf.nn.embedding_lookup(emb, ids)
        mask = tf.expand_dims(tf.cast(tf.not_equal(ids, 0), tf.float32), -1)
        x = tf.multiply(x, mask)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """,
    # The column looked up by other ids (positions): not the table's rows.
    "a constant column looked up by other ids": """\
        table = tf.get_variable("table", [1000, 64])
        keep = tf.concat([tf.zeros([1, 1]), tf.ones([49, 1])], axis=0)
        x = tf.gather(table, ids) * tf.gather(keep, positions)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """,
    # A trainable gate per row: nothing fixed.
    "a trainable gate per row": """\
        table = tf.get_variable("table", [1000, 64])
        gate = tf.get_variable("gate", [1000, 1])
        x = tf.gather(table, ids) * tf.gather(gate, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """,
    # A column of ones only: every row trains.
    "a column of ones": """\
        table = tf.get_variable("table", [1000, 64])
        keep = tf.concat([tf.ones([1, 1]), tf.ones([999, 1])], axis=0)
        x = tf.gather(table, ids) * tf.gather(keep, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_row_mask_looked_up_beside_the_table_is_found(name):
  code, expected = POSITIVE[name]
  assert _mixes(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_mask_of_positions_or_of_nothing_is_not(name):
  assert _mixes(NEGATIVE[name]) == []


def test_the_message_says_which_variable_and_that_its_rows_never_train():
  code, _ = POSITIVE["a row mask made in place, gathered by the same ids"]
  finding, _ = scanned.finding_and_diff(code, "stop-gradient-mix")
  assert "`table`" in finding.message and "never train" in finding.message


def test_a_helper_re_exported_through_a_package_of_star_imports():
  # hasky: `import melt` names `util/melt/__init__.py`, which star-imports
  # `melt.ops`, whose `__init__.py` star-imports `melt.ops.ops`: neither
  # package file spells the helper's name, yet Python re-exports it, so
  # `melt.lookup_reduce(...)` calls it and its branch runs as passed.
  found = scanned.in_project({
      "util/melt/__init__.py": "from melt.ops import *\n",
      "util/melt/ops/__init__.py": "from melt.ops.ops import *\n",
      "util/melt/ops/ops.py": """\
          import tensorflow as tf

          def mask2d(emb):
            return tf.concat([tf.zeros([1, 1]),
                              tf.ones([emb.get_shape()[0] - 1, 1])], 0)

          def lookup_sum(emb, index, exclude_zero_index=True):
            lookup_result = tf.nn.embedding_lookup(emb, index)
            if exclude_zero_index:
              mask_lookup_result = tf.nn.embedding_lookup(mask2d(emb), index)
              lookup_result = tf.multiply(lookup_result, mask_lookup_result)
            return tf.reduce_sum(lookup_result, 1)

          def lookup_reduce(emb, index, exclude_zero_index=True):
            return lookup_sum(emb, index, exclude_zero_index)
          """,
      "deepiu/bow.py": """\
          import tensorflow as tf
          import melt
          FLAGS = tf.app.flags.FLAGS

          def encode(sequence, emb):
            return melt.lookup_reduce(
                emb, sequence, exclude_zero_index=FLAGS.exclude_zero_index)
          """,
      "deepiu/train.py": """\
          import tensorflow as tf
          from deepiu import bow
          emb = tf.get_variable("emb", [1000, 64])
          loss = tf.reduce_mean(bow.encode(ids, emb))
          train_op = tf.train.AdamOptimizer().minimize(loss)
          """})
  assert found == [("stop-gradient-mix", "util/melt/ops/ops.py", 11)]
