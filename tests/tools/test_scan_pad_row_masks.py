"""`tfpartial scan`: an embedding table multiplied by a constant column
built by a comprehension that picks the padding row by number (`[0 if i
== 0 else 1 for i in range(A)]`: danielthank/dmn-rl-tensorflow, a copy of
jimfleming/recurrent-entity-networks): row 0 gets a zero gradient and
never trains; and the look-alikes that freeze nothing: a triangle built
by comparing two indices, a Clockwork RNN's block-triangular mask from a
helper, the same column on looked-up activations, on a table that does
not train, or a mask drawn from the ids."""

import pytest

import scanned


def _mixes(code):
  return scanned.in_text(code, "stop-gradient-mix")


POSITIVE = {
    # danielthank/dmn-rl-tensorflow learner/seq2seq.py: the column made
    # once, the table reassigned to the product before its lookups.
    "a table times a column zero at the pad row": ("""\
        class Seq2Seq:
          def build(self):
            A, V = self.vocab_size, 64
            embedding_mask = tf.constant(
                [0 if i == 0 else 1 for i in range(A)], dtype=tf.float32,
                shape=[A, 1])
            with tf.variable_scope("QA"):
              qa_embedding = tf.get_variable("qa_embedding", [A, V])
              qa_embedding = qa_embedding * embedding_mask
              story = tf.nn.embedding_lookup(qa_embedding, self.input)
            loss = tf.reduce_sum(story)
            self.train_op = tf.train.AdamOptimizer(0.1).minimize(loss)
        """, [("stop-gradient-mix", 9)]),
    # learner/dmn.py: the column made beside the table, ones above.
    "a table times a column of ones but the first, as a generator": ("""\
        emb = tf.get_variable("emb", [vocab, 32])
        pad_mask = tf.constant(
            list(1. if k > 0 else 0. for k in range(vocab)), shape=[vocab, 1])
        emb = emb * pad_mask
        x = tf.nn.embedding_lookup(emb, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """, [("stop-gradient-mix", 4)]),
}


NEGATIVE = {
    # A lower triangle built by comparing two indices: the shape of the
    # parametrization (an autoregressive weight), not rows a person picked.
    "a triangle built by comparing two indices": """\
        n = 16
        tri = tf.constant([[1. if j <= i else 0. for j in range(n)]
                           for i in range(n)])
        w = tf.get_variable("w", [n, n])
        h = tf.matmul(x, w * tri)
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    # pannous/tensorflow-ocr Clockwork_RNN.py: the block-triangular mask of
    # a Clockwork RNN from a helper named for its shape.
    "a clockwork RNN's block-triangular mask from a helper": """\
        def body(t, h):
          weight_mask = utils.block_triu_mask(units, periods).T
          weight_mask = tf.constant(weight_mask, dtype=tf.float32)
          W_h = tf.get_variable("W_h", shape=[n, n])
          W_h = weight_mask * W_h
          return t + 1, tf.tanh(tf.matmul(h, W_h))
        _, h = tf.while_loop(cond, body, [t0, h0])
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    # The same column on the looked-up rows: an activation mask.
    "the pad column on looked-up activations": """\
        emb = tf.get_variable("emb", [vocab, 32])
        pad = tf.constant([0 if i == 0 else 1 for i in range(vocab)],
                          dtype=tf.float32, shape=[vocab, 1])
        x = tf.nn.embedding_lookup(emb, ids)
        y = x * tf.nn.embedding_lookup(pad, other_ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(y))
        """,
    # A teacher's table that does not train: nothing is frozen by the mask.
    "the pad column on a table that does not train": """\
        teacher = tf.get_variable("teacher", [vocab, 32], trainable=False)
        pad = tf.constant([0 if i == 0 else 1 for i in range(vocab)],
                          dtype=tf.float32, shape=[vocab, 1])
        soft = tf.nn.embedding_lookup(teacher * pad, ids)
        student = tf.layers.dense(tf.nn.embedding_lookup(own, ids), 32)
        train_op = tf.train.AdamOptimizer().minimize(
            tf.reduce_mean((student - soft) ** 2))
        """,
    # A mask compared against the data: computed each step, not picked.
    "a column compared against a fed length": """\
        emb = tf.get_variable("emb", [vocab, 32])
        n_valid = tf.placeholder(tf.int32, [])
        keep = tf.cast(tf.range(vocab) < n_valid, tf.float32)[:, None]
        x = tf.nn.embedding_lookup(emb * keep, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_table_under_a_picked_pad_row_mask_is_found(name):
  code, expected = POSITIVE[name]
  assert _mixes(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_is_not_a_pad_row_mask(name):
  assert _mixes(NEGATIVE[name]) == []
