"""`tfpartial scan`: rows of a table set back to zeros by a write that a
lookup of the same table depends on (LibRecommender's `zero_padding_op =
tf.scatter_update(embed_var, oov, zeros)` in `control_dependencies`, in a
library function the model calls each step): a `weight-remask` with each
forward pass; and the look-alikes: a max-norm censor writing the rows'
own values, a counter reset, a block that does not read the table."""

import pytest

import scanned


def _remasks(code):
  return scanned.in_text(code, "weight-remask")


POSITIVE = {
    # LibRecommender's seq_embeds_pooling: its own table, nothing in the
    # file calls it (a library's layer).
    "a padding row zeroed before each lookup of its table": ("""\
        def seq_embeds_pooling(seq_indices, n_items, var_shape):
          embed_var = tf.get_variable("item_embed", shape=var_shape)
          zero_padding_op = tf.scatter_update(
              embed_var, n_items, tf.zeros([var_shape[1]], dtype=tf.float32))
          with tf.control_dependencies([zero_padding_op]):
            multi_item_embed = tf.nn.embedding_lookup(embed_var, seq_indices)
          return tf.reduce_sum(multi_item_embed, axis=1)
        """, [("weight-remask", 3)]),
    # LibRecommender's multi_sparse_alone: the table passed in by the
    # model, the write in the dependency list itself.
    "OOV rows of a table passed in, zeroed before the lookup": ("""\
        def multi_sparse_alone(embed_var, indices, embed_size, oov):
          with tf.control_dependencies([tf.scatter_update(
              embed_var, [oov], tf.zeros([embed_size]))]):
            embed = tf.nn.embedding_lookup(embed_var, indices)
          return tf.reduce_sum(embed, axis=1)

        table = tf.get_variable("sparse_embed", [1000, 16])
        out = multi_sparse_alone(table, ids, 16, 999)
        train_op = tf.train.AdamOptimizer().minimize(loss(out))
        """, [("weight-remask", 2)]),
    # LibRecommender's multi_sparse_combine: the OOV ids chosen by the
    # table's rank (a test of its shape, not of the step's data).
    "OOV ids picked by the table's rank": ("""\
        def multi_sparse_combine(embed_var, indices, embed_size, oov):
          variable_dim = len(embed_var.get_shape().as_list())
          oov_indices = [oov] if variable_dim == 1 else oov
          zero_padding_op = tf.scatter_update(
              embed_var, oov_indices, tf.zeros([embed_size]))
          with tf.control_dependencies([zero_padding_op]):
            embed = tf.nn.embedding_lookup(embed_var, indices)
          return tf.reduce_sum(embed, axis=1)

        table = tf.get_variable("sparse_embed", [1000, 16])
        out = multi_sparse_combine(table, ids, 16, 999)
        train_op = tf.train.AdamOptimizer().minimize(loss(out))
        """, [("weight-remask", 4)]),
    # FToDTF's ngrams_to_vectors: the padding row of the first partition
    # (a local name bound to the table or its first part) zeroed before a
    # lookup of the whole list of partitions.
    "the padding row of the first partition, the list looked up": ("""\
        def ngrams_to_vectors(ngrams, embeddings):
          first_part = embeddings
          if isinstance(embeddings, list):
            first_part = embeddings[0]
          pad_zero = tf.scatter_update(
              first_part, 0, tf.zeros([first_part.shape[1]]))
          with tf.control_dependencies([pad_zero]):
            looked_up = tf.nn.embedding_lookup(embeddings, ngrams)
            return tf.reduce_sum(looked_up, 1)

        emb = tf.create_partitioned_variables([5000, 32], [2, 1], init)
        loss = tf.reduce_mean(ngrams_to_vectors(batch, emb) - target)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        """, [("weight-remask", 5)]),
    # The same written by another team: an attribute of the model, its
    # head shard taken by subscript in the method that looks it up.
    "a shard of the model's table zeroed before each lookup": ("""\
        class Tagger:
          def __init__(self):
            self.shards = tf.get_variable(
                "words", [20000, 64], partitioner=tf.fixed_size_partitioner(4))

          def embed(self, ids):
            head = self.shards[0]
            clear_pad = tf.scatter_update(head, [0], tf.zeros([1, 64]))
            with tf.control_dependencies([clear_pad]):
              return tf.nn.embedding_lookup(self.shards, ids)

          def build(self, ids, labels):
            logits = tf.layers.dense(self.embed(ids), 10)
            loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
            self.train_op = tf.train.AdamOptimizer().minimize(loss)
        """, [("weight-remask", 8)]),
}

NEGATIVE = {
    # openrec's max-norm censoring: the rows' own values, renormalised.
    "a max-norm censor of the looked-up rows": """\
        def censored(table, ids):
          rows = tf.gather(table, ids)
          censor = tf.scatter_update(table, ids, tf.clip_by_norm(rows, 1.0))
          with tf.control_dependencies([censor]):
            return tf.nn.embedding_lookup(table, ids)
        """,
    # A counter (not trained) reset before a read.
    "a non-trainable counter reset": """\
        def counted(table, ids):
          counts = tf.Variable(tf.zeros([1000]), trainable=False)
          reset = tf.scatter_update(counts, ids, tf.zeros_like(ids, tf.float32))
          with tf.control_dependencies([reset]):
            return tf.nn.embedding_lookup(counts, ids)
        """,
    # The write orders something else: the table is not read under it.
    "a block that does not read the zeroed table": """\
        def pooled(ids, n_items):
          embed_var = tf.get_variable("item_embed", shape=[1000, 16])
          other = tf.get_variable("other_embed", shape=[1000, 16])
          zero = tf.scatter_update(embed_var, n_items, tf.zeros([16]))
          with tf.control_dependencies([zero]):
            return tf.nn.embedding_lookup(other, ids)
        """,
    # A dynamic (hash-table) embedding: rows freed for new keys are reset
    # to zeros before the lookup; they then train for their new keys.
    "rows handed to new keys reset before the lookup": """\
        class DynamicEmbedding(tf.keras.layers.Layer):
          def build(self, shape):
            self.table = self.add_weight("table", (100000, 16))

          def call(self, ids):
            slots = self.keys.lookup(ids)
            fresh = self.allocate(tf.boolean_mask(ids, slots < 0))
            reset = tf.compat.v1.scatter_update(
                self.table, fresh, tf.zeros([tf.size(fresh), 16]))
            with tf.control_dependencies([reset]):
              return tf.nn.embedding_lookup(self.table, self.keys.lookup(ids))

        model = tf.keras.Sequential([DynamicEmbedding()])
        model.fit(x, y)
        """,
    "evicted rows zeroed before the lookup": """\
        class Emb(tf.keras.layers.Layer):
          def build(self, shape):
            self.table = self.add_weight("table", (1000, 16))

          def call(self, ids):
            evicted = self.evict_ids()
            zero_rows = tf.compat.v1.scatter_update(
                self.table, evicted,
                tf.zeros_like(tf.gather(self.table, evicted)))
            with tf.control_dependencies([zero_rows]):
              return tf.gather(self.table, ids)

        model = tf.keras.Sequential([Emb()])
        model.fit(x, y)
        """,
    # A serving graph zeroes the padding row; the training graph reads the
    # table unguarded.
    "a padding row zeroed in the serving graph only": """\
        class Rec:
          def __init__(self):
            self.table = tf.get_variable("item_embed", [1000, 16])

          def build_train(self, ids, labels):
            emb = tf.nn.embedding_lookup(self.table, ids)
            loss = tf.reduce_mean((tf.reduce_sum(emb, 1) - labels) ** 2)
            self.train_op = tf.train.AdamOptimizer().minimize(loss)

          def build_serving(self, ids):
            zero = tf.scatter_update(self.table, [0], tf.zeros([16]))
            with tf.control_dependencies([zero]):
              self.serve_out = tf.nn.embedding_lookup(self.table, ids)
        """,
    # A local name bound to one table, the lookup reads another one.
    "the zeroed part's table is not the one looked up": """\
        def pooled(ids, tables):
          first = tables[0]
          zero = tf.scatter_update(first, 0, tf.zeros([16]))
          with tf.control_dependencies([zero]):
            return tf.nn.embedding_lookup(other_tables, ids)

        tables = [tf.get_variable("t%d" % i, [1000, 16]) for i in range(2)]
        train_op = tf.train.AdamOptimizer().minimize(loss(pooled(x, tables)))
        """,
    # The padding row of the first partition zeroed once at start-up: no
    # lookup depends on it.
    "a padding row of the first partition zeroed once": """\
        emb = tf.create_partitioned_variables([5000, 32], [2, 1], init)
        first = emb[0]
        pad_zero = tf.scatter_update(first, 0, tf.zeros([32]))
        vectors = tf.reduce_sum(tf.nn.embedding_lookup(emb, batch), 1)
        train_op = tf.train.AdamOptimizer().minimize(loss(vectors))
        with tf.Session() as sess:
          sess.run(tf.global_variables_initializer())
          sess.run(pad_zero)
          for _ in range(1000):
            sess.run(train_op)
        """,
    # A dependency that only reads the first partition (a check), then the
    # lookup.
    "a check of the first partition before the lookup": """\
        def ngrams_to_vectors(ngrams, embeddings):
          first = embeddings[0]
          check = tf.debugging.assert_all_finite(first, "nan in embeddings")
          with tf.control_dependencies([check]):
            return tf.reduce_sum(tf.nn.embedding_lookup(embeddings, ngrams), 1)

        emb = tf.create_partitioned_variables([5000, 32], [2, 1], init)
        train_op = tf.train.AdamOptimizer().minimize(
            loss(ngrams_to_vectors(batch, emb)))
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_rows_zeroed_before_each_lookup_are_found(name):
  code, expected = POSITIVE[name]
  assert _remasks(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_is_not_a_guarded_zeroing(name):
  assert _remasks(NEGATIVE[name]) == []
