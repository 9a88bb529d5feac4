"""`tfpartial scan`'s `stop-gradient-mix` on a padding row set to zeros
by a scatter in the table the forward pass reads
(`tf.tensor_scatter_nd_update(table, [[0]], tf.zeros([1, E]))`), the
`zero_pad` concat of TF1 code (parts ten to thirteen) written the TF2 way.
The look-alikes stay silent: rows scattered from the data, a scatter into
an input, logits masked by a scatter."""

import pytest

import scanned


_found = scanned.in_project

_EMBED = """\
    import tensorflow as tf
    def embedding(inputs, vocab, dim):
      table = tf.get_variable('lookup_table', [vocab, dim])
      {mix}
      return tf.nn.embedding_lookup(table, inputs)
    """
_MAIN = """\
    import tensorflow as tf
    from modules import embedding
    loss = tf.reduce_mean(embedding(x, 100, 8))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    """


@pytest.mark.parametrize("mix, expected", [
    ("table = tf.tensor_scatter_nd_update(table, [[0]], tf.zeros([1, dim]))",
     [("stop-gradient-mix", "modules.py", 4)]),
    ("table = tf.tensor_scatter_nd_update(table, [[0], [1]], "
     "tf.zeros([2, dim]))", [("stop-gradient-mix", "modules.py", 4)]),
    # The look-alikes: rows scattered from the data (a batch's ids, values
    # of the step), the table's own rows untouched.
    ("table = tf.tensor_scatter_nd_update(table, inputs[:, None], "
     "tf.zeros([8, dim]))", []),
    ("table = tf.tensor_scatter_nd_update(table, [[0]], inputs)", []),
    ("inputs = tf.tensor_scatter_nd_update(inputs, [[0]], tf.zeros([1]))",
     []),
])
def test_a_padding_row_scattered_in_the_table_read(mix, expected):
  assert _found({"modules.py": _EMBED.format(mix=mix),
                 "main.py": _MAIN}) == expected


def test_logits_masked_by_a_scatter_are_silent():
  # An attention or logits mask set by a scatter: no variable's rows.
  assert _found({"modules.py": """\
      import tensorflow as tf
      def scores(q, k, n):
        logits = tf.matmul(q, k, transpose_b=True)
        logits = tf.tensor_scatter_nd_update(logits, [[0]], tf.fill([1, n], -1e9))
        return tf.matmul(logits, k)
      """, "main.py": _MAIN.replace("embedding(x, 100, 8)",
                                    "scores(q, k, 8)").replace(
                                        "import embedding", "import scores")
  }) == []
