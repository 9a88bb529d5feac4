"""`tfpartial scan`: a variable's own rows replaced by constants in the
table the forward pass uses (`tf.concat((tf.zeros([1, E]), table[1:]),
0)`, Kyubyong's `zero_pad`), counted where that branch runs, and masked
terms of one weight summed over a loop with some of them stopped
(Conure's per-task masks); and the look-alikes that freeze nothing: a
constant row appended to a whole variable, a table split into a trainable
and a non-trainable variable, sequences shifted on a time axis, a branch
no call takes (corpus rule: tests/tools/scan_corpus/BUILDING.md, "Tables
joined from constants")."""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


_found = scanned.in_text


def _mixes(code):
  return [f for f in _found(code) if f[0] == "stop-gradient-mix"]


POSITIVE = {
    # Kyubyong's helper, `zero_pad=True` by default, called with it.
    "a padding row replaced by zeros, branch on by default": ("""\
        def embed(inputs, vocab_size, num_units, zero_pad=True):
          lookup_table = tf.get_variable("lookup_table", [vocab_size, num_units])
          if zero_pad:
            lookup_table = tf.concat((tf.zeros(shape=[1, num_units]),
                                      lookup_table[1:, :]), 0)
          return tf.nn.embedding_lookup(lookup_table, inputs)

        enc = embed(x, 100, 64)
        train_op = tf.train.AdamOptimizer().minimize(loss(enc))
        """, [("stop-gradient-mix", 4)]),
    # SASRec: off by default, a call passes True.
    "the branch off by default, a call turns it on": ("""\
        def embedding(inputs, vocab_size, num_units, zero_pad=False,
                      scope="embedding"):
          with tf.variable_scope(scope):
            table = tf.get_variable("lookup_table", [vocab_size, num_units])
            if zero_pad:
              table = tf.concat((tf.zeros(shape=[1, num_units]),
                                 table[1:, :]), 0)
            return tf.nn.embedding_lookup(table, inputs)

        seq = embedding(items, 1000, 50, zero_pad=True, scope="items")
        pos = embedding(positions, 200, 50, zero_pad=False, scope="pos")
        train_op = tf.train.AdamOptimizer().minimize(loss(seq + pos))
        """, [("stop-gradient-mix", 6)]),
    # A seq2seq model's method, returned to `__init__` and looked up later.
    "a method returning the table, called by its default": ("""\
        class Seq2Seq:
          def __init__(self, vocab_size, embedding_size):
            self.vocab_size = vocab_size
            self.embedding_size = embedding_size
            self.embedding_matrix = self._get_embedding_matrix()

          def _get_embedding_matrix(self, zero_pad=True):
            with tf.variable_scope("embedding"):
              embeddings = tf.get_variable(
                  "embedding_w", shape=(self.vocab_size, self.embedding_size))
              if zero_pad:
                embeddings = tf.concat(
                    (tf.zeros(shape=[1, self.embedding_size]),
                     embeddings[1:, :]), 0)
            return embeddings

          def build(self, ids):
            words = tf.nn.embedding_lookup(self.embedding_matrix, ids)
            self.train_op = tf.train.AdamOptimizer().minimize(loss(words))
        """, [("stop-gradient-mix", 12)]),
    # The same by padding the sliced variable, into a matmul.
    "rows padded back with zeros by tf.pad": ("""\
        w = tf.Variable(tf.random.normal([100, 64]))
        table = tf.pad(w[1:], [[1, 0], [0, 0]])
        logits = tf.matmul(h, table, transpose_b=True)
        train_op = tf.train.AdamOptimizer().minimize(loss(logits))
        """, [("stop-gradient-mix", 2)]),
    # The last column of a kernel replaced by ones (axis 1, slice at the end).
    "the last column of a kernel replaced by ones": ("""\
        kernel = tf.get_variable("kernel", [64, 10])
        used = tf.concat([kernel[:, :-1], tf.ones([64, 1])], axis=1)
        logits = tf.matmul(h, used)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss(logits))
        """, [("stop-gradient-mix", 2)]),
    # Conure's retraining: each task's masked kernel summed in a loop, the
    # earlier tasks' through `stop_gradient`.
    "masked terms of one kernel summed, the earlier ones stopped": ("""\
        def conv1d_fine(input_, channels, task_count):
          weight = tf.get_variable("weight", [1, 1, 8, channels])
          weight_ = tf.zeros_like(weight)
          for index in range(task_count):
            mask_val = tf.get_variable("mask_%d" % index, [1, 1, 8, channels],
                                       trainable=False)
            if index < task_count - 1:
              weight_mask = tf.stop_gradient(weight * mask_val)
              weight_ += weight_mask
            else:
              weight_mask = weight * mask_val
              weight_ += weight_mask
          return tf.nn.conv2d(input_, weight_, [1, 1, 1, 1], "SAME")

        out = conv1d_fine(x, 4, 3)
        train_op = tf.train.AdamOptimizer().minimize(loss(out))
        """, [("stop-gradient-mix", 8)]),
    # A Keras layer's `self.zero_pad`, True by default: one construction
    # keeps the default.
    "a layer constructed once with its padding flag's default": ("""\
        class PaddedEmbedding(tf.keras.layers.Layer):
          def __init__(self, vocab, dim, zero_pad=True):
            super().__init__()
            self.vocab, self.dim, self.zero_pad = vocab, dim, zero_pad

          def build(self, shape):
            self.table = self.add_weight(name="table",
                                         shape=(self.vocab, self.dim))

          def call(self, ids):
            table = self.table
            if self.zero_pad:
              table = tf.concat([tf.zeros([1, self.dim]), table[1:]], 0)
            return tf.nn.embedding_lookup(table, ids)

        class Model(tf.keras.Model):
          def __init__(self):
            super().__init__()
            self.enc = PaddedEmbedding(1000, 64, zero_pad=False)
            self.dec = PaddedEmbedding(1000, 64)

          def call(self, x):
            return self.enc(x) + self.dec(x)

        def step(model, opt, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
          opt.apply_gradients(zip(tape.gradient(
              loss, model.trainable_variables), model.trainable_variables))
        """, [("stop-gradient-mix", 13)]),
}

NEGATIVE = {
    # Conure's generator: the helper's default is True, but every call
    # passes False.
    "every call passes False": """\
        class Generator:
          def embedding(self, inputs, size, num_units, zero_pad=True):
            table = tf.get_variable("lookup_table_position", [size, num_units])
            if zero_pad:
              table = tf.concat((tf.zeros(shape=[1, num_units]),
                                 table[1:, :]), 0)
            return tf.nn.embedding_lookup(table, inputs)

          def build(self, items, positions):
            pos = self.embedding(positions, 50, 64, zero_pad=False)
            self.train_op = tf.train.AdamOptimizer().minimize(loss(pos))
        """,
    # A Keras layer's `self.zero_pad`, from its constructor's parameter:
    # every construction passes False.
    "every construction of a layer passes False": """\
        class PaddedEmbedding(tf.keras.layers.Layer):
          def __init__(self, vocab, dim, zero_pad=True):
            super().__init__()
            self.vocab, self.dim, self.zero_pad = vocab, dim, zero_pad

          def build(self, shape):
            self.table = self.add_weight(name="table",
                                         shape=(self.vocab, self.dim))

          def call(self, ids):
            table = self.table
            if self.zero_pad:
              table = tf.concat([tf.zeros([1, self.dim]), table[1:]], 0)
            return tf.nn.embedding_lookup(table, ids)

        class Model(tf.keras.Model):
          def __init__(self):
            super().__init__()
            self.enc = PaddedEmbedding(1000, 64, zero_pad=False)
            self.dec = PaddedEmbedding(1000, 64, zero_pad=False)

          def call(self, x):
            return self.enc(x) + self.dec(x)

        def step(model, opt, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
          opt.apply_gradients(zip(tape.gradient(
              loss, model.trainable_variables), model.trainable_variables))
        """,
    "the branch off by default and no call turns it on": """\
        def embed(inputs, vocab_size, num_units, zero_pad=False):
          table = tf.get_variable("lookup_table", [vocab_size, num_units])
          if zero_pad:
            table = tf.concat((tf.zeros(shape=[1, num_units]),
                               table[1:, :]), 0)
          return tf.nn.embedding_lookup(table, inputs)

        enc = embed(x, 100, 64)
        train_op = tf.train.AdamOptimizer().minimize(loss(enc))
        """,
    # NeuRec: the helper is only shown in its docstring, never called.
    "a helper nothing calls": """\
        def embedding(inputs, vocab_size, num_units, zero_pad=True):
          '''outputs = embedding(inputs, 6, 2, zero_pad=True)'''
          table = tf.get_variable("lookup_table", [vocab_size, num_units])
          if zero_pad:
            table = tf.concat((tf.zeros(shape=[1, num_units]),
                               table[1:, :]), 0)
          return tf.nn.embedding_lookup(table, inputs)

        items = tf.get_variable("items", [1000, 64])
        train_op = tf.train.AdamOptimizer().minimize(loss(items))
        """,
    # NAIS/FISM and DiSAN: constant rows joined to a variable that trains in
    # full; SogouMRCToolkit: a trainable and a non-trainable variable.
    "constant rows joined to whole variables": """\
        c1 = tf.Variable(tf.random.normal([1000, 64]))
        c2 = tf.constant(0.0, tf.float32, [1, 64])
        table_q = tf.concat([c1, c2], 0)
        other = tf.get_variable("emb_mat_other", [500, 64])
        table_w = tf.concat([tf.constant(0, tf.float32, [2, 64]), other], 0)
        top = tf.get_variable("top", [100, 64])
        rest = tf.get_variable("rest", [900, 64], trainable=False)
        table_s = tf.concat([top, rest], 0)
        x = (tf.nn.embedding_lookup(table_q, a) + tf.nn.embedding_lookup(table_w, b)
             + tf.nn.embedding_lookup(table_s, c))
        train_op = tf.train.AdagradOptimizer(0.1).minimize(loss(x))
        """,
    # RCNN contexts, decoder inputs, attention masks: activations shifted.
    "activations shifted with zeros": """\
        emb = tf.get_variable("emb", [1000, 64])
        fw = tf.nn.embedding_lookup(emb, ids)
        left = tf.concat([tf.zeros([batch, 1, 64]), fw[:, :-1]], axis=1)
        right = tf.concat([fw[:, 1:], tf.zeros([batch, 1, 64])], axis=1)
        dec = tf.concat((tf.ones_like(y[:, :1]) * 2, y[:, :-1]), -1)
        mask = tf.concat([tf.ones([b, 1]), attn_mask[:, 1:]], 1)
        scores = tf.matmul(left + right, tf.transpose(emb)) * mask
        train_op = tf.train.AdamOptimizer().minimize(loss(scores, dec))
        """,
    # A new variable initialised from the table, and the table's first row
    # written to zeros: neither is a table the forward pass reads.
    "a new variable's initial value from a slice": """\
        w = tf.get_variable("w", [100, 64])
        w2 = tf.Variable(tf.concat([tf.zeros([1, 64]), w[1:]], 0))
        x = tf.nn.embedding_lookup(w2, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(x))
        """,
    # An export script: the graph is rebuilt only to be served (no loss, no
    # step in the file, and no other file imports it); nothing trains here.
    "a table rebuilt in a script that only exports it": """\
        def forward(features, mode):
          table = tf.Variable(np.load("vectors.npy"), name="vectors")
          table = tf.concat([tf.zeros(shape=[1, 300]), table[1:, :]], axis=0)
          return tf.nn.embedding_lookup(table, features["words"])

        def model_fn(features, labels, mode, params):
          ids = tf.argmax(forward(features, mode), -1)
          return tf.estimator.EstimatorSpec(mode, predictions=ids)

        estimator = tf.estimator.Estimator(model_fn, "model_dir")
        estimator.export_saved_model("export_dir", serving_input_fn)
        """,
    # The raw table is also looked up (the encoder's input) before the name
    # is rebound to the join: every row of the variable still trains.
    "the raw table read by another lookup before the join": """\
        embedding = tf.Variable(np.load("word.npy"), name="vectors")
        x = tf.nn.embedding_lookup(embedding, words)
        embedding = tf.concat([tf.zeros(shape=[1, 300]), embedding[1:, :]], 0)
        y = tf.nn.embedding_lookup(embedding, decoder_inputs)
        train_op = tf.train.AdamOptimizer().minimize(loss(x, y))
        """,
    # A straight-through estimator and a stopped running sum.
    "a straight-through estimator and a stopped sum": """\
        w = tf.get_variable("w", [64, 64])
        q = w + tf.stop_gradient(tf.round(w) - w)
        total = tf.zeros([64, 64])
        for i in range(3):
          total += tf.stop_gradient(h[i])
          total += h[i]
        y = tf.matmul(x, q) + total
        train_op = tf.train.AdamOptimizer().minimize(loss(y))
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_replaced_rows_and_summed_masks_are_found(name):
  code, expected = POSITIVE[name]
  assert _mixes(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_is_not_a_mix(name):
  assert _mixes(NEGATIVE[name]) == []


def test_a_helper_module_with_no_step_is_read_through_its_callers():
  sources = [_files.Source(path, textwrap.dedent(text)) for path, text in {
      "modules.py": """\
          import tensorflow as tf

          def embed(inputs, vocab_size, num_units, zero_pad=True):
            with tf.variable_scope("embed"):
              lookup_table = tf.get_variable(
                  "lookup_table", dtype=tf.float32,
                  shape=[vocab_size, num_units])
              if zero_pad:
                lookup_table = tf.concat(
                    (tf.zeros(shape=[1, num_units]), lookup_table[1:, :]), 0)
            return tf.nn.embedding_lookup(lookup_table, inputs)
          """,
      "train.py": """\
          from modules import *

          class Graph:
            def __init__(self):
              self.x = tf.placeholder(tf.int32, [None, 10])
              enc = embed(self.x, 30, 64)
              self.loss = tf.reduce_mean(enc)
              self.train_op = tf.train.AdamOptimizer().minimize(self.loss)
          """}.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors
  assert [(f.idiom, f.path, f.line) for f in findings] == [
      ("stop-gradient-mix", "modules.py", 9)]
  message = findings[0].message
  assert "row" in message and "never train" in message


def test_a_helper_called_only_from_a_module_with_no_step():
  sources = [_files.Source(path, textwrap.dedent(text)) for path, text in {
      "modules.py": """\
          def embed(inputs, vocab_size, num_units, zero_pad=True):
            lookup_table = tf.get_variable("lookup_table",
                                           shape=[vocab_size, num_units])
            if zero_pad:
              lookup_table = tf.concat((tf.zeros(shape=[1, num_units]),
                                        lookup_table[1:, :]), 0)
            return tf.nn.embedding_lookup(lookup_table, inputs)
          """,
      "networks.py": """\
          from modules import *

          def text_encoder(chars):
            return embed(chars, vocab_size=40, num_units=128)
          """,
      "train.py": """\
          from networks import text_encoder

          loss = tf.reduce_mean(text_encoder(chars))
          train_op = tf.train.AdamOptimizer().minimize(loss)
          """}.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors
  assert [(f.idiom, f.path, f.line) for f in findings] == [
      ("stop-gradient-mix", "modules.py", 5)]


def test_a_helper_reached_through_two_star_imports():
  # GST-Tacotron: the graph star-imports the network module, which
  # star-imports the helpers: Python re-exports them, so the call is
  # `embed`'s and its default branch runs.
  findings = scanned.in_project({
      "modules.py": """\
          def embed(inputs, vocab_size, num_units, zero_pad=True):
            lookup_table = tf.get_variable("lookup_table",
                                           shape=[vocab_size, num_units])
            if zero_pad:
              lookup_table = tf.concat((tf.zeros(shape=[1, num_units]),
                                        lookup_table[1:, :]), 0)
            return tf.nn.embedding_lookup(lookup_table, inputs)
          """,
      "network.py": """\
          from modules import *

          def build_encoder(inputs):
            return tf.layers.dense(inputs, 8)
          """,
      "graph.py": """\
          from network import *

          class Graph:
            def __init__(self):
              self.x = tf.placeholder(tf.int32, [None, 10])
              enc = build_encoder(embed(self.x, 30, 64))
              self.train_op = tf.train.AdamOptimizer().minimize(
                  tf.reduce_mean(enc))
          """})
  assert findings == [("stop-gradient-mix", "modules.py", 5)]


def test_an_unconditional_table_in_a_helper_nothing_calls():
  code = """\
      def embed(inputs, vocab_size, dimension):
        lookup_table = tf.get_variable("lookup_table", [vocab_size, dimension])
        lookup_table = tf.concat(
            (tf.zeros(shape=[1, dimension]), lookup_table[1:, :]), 0)
        return tf.nn.embedding_lookup(lookup_table, inputs)

      class Model:
        def __init__(self, vocab_size, size):
          table = tf.get_variable("table", [vocab_size, size])
          table = tf.concat((tf.zeros([1, size]), table[1:, :]), axis=0)
          x = tf.nn.embedding_lookup(table, self.inputs)
          self.optimizer = tf.train.AdamOptimizer().minimize(loss(x))

      model = Model(100, 64)
      """
  assert _mixes(code) == [("stop-gradient-mix", 10)]


def test_a_flag_passed_on_by_a_caller_that_never_turns_it_on():
  code = """\
      def embed_seq(inputs, vocab_size, embed_dim, zero_pad=False):
        table = tf.get_variable("table", [vocab_size, embed_dim])
        if zero_pad:
          table = tf.concat((tf.zeros([1, embed_dim]), table[1:, :]), 0)
        return tf.nn.embedding_lookup(table, inputs)

      def learned_positions(inputs, embed_dim, zero_pad=False):
        return embed_seq(inputs, 50, embed_dim, zero_pad=zero_pad)

      x = embed_seq(ids, 1000, 64) + learned_positions(pos, 64)
      train_op = tf.train.AdamOptimizer().minimize(loss(x))
      """
  assert _mixes(code) == []
  turned_on = code.replace("learned_positions(pos, 64)",
                           "learned_positions(pos, 64, zero_pad=True)")
  assert _mixes(turned_on) == [("stop-gradient-mix", 4)]


def test_an_accumulator_reset_in_a_loop_over_itself_is_not_a_mask():
  # rl_coach: the accumulated gradients, kept on the object, zeroed
  # element by element after they are applied.
  code = """\
      class Network:
        def __init__(self, sess, loss, weights):
          self.sess, self.weights = sess, weights
          self.grads = tf.gradients(loss, weights)
          self.accumulated = None
          self.placeholders = [tf.placeholder(tf.float32) for _ in weights]
          self.update = tf.train.AdamOptimizer().apply_gradients(
              zip(self.placeholders, weights))

        def accumulate(self, feed):
          grads = self.sess.run(self.grads, feed)
          if self.accumulated is None:
            self.accumulated = self.sess.run(self.weights)
          for ix, grad in enumerate(grads):
            self.accumulated[ix] += grad

        def reset(self):
          for ix, grad in enumerate(self.accumulated):
            self.accumulated[ix] = grad * 0

        def apply(self):
          self.sess.run(self.update, dict(zip(self.placeholders,
                                              self.accumulated)))
          self.reset()
      """
  assert _found(code) == []


def test_an_export_script_named_by_a_serving_script_is_not_imported():
  # The serving script names the export's folder (a string), it imports
  # nothing of it: the export still steps nothing.
  export = NEGATIVE["a table rebuilt in a script that only exports it"]
  assert scanned.in_project({
      "transformer_export.py": export,
      "serving.py": """\
          model = tf.saved_model.load("../model/transformer_export")
          print(model.signatures["serving_default"](words))
          """}) == []
  # Imported by a training script, the same file's table is reported.
  assert scanned.in_project({
      "transformer_export.py": export,
      "train.py": """\
          from transformer_export import forward
          loss = tf.reduce_mean(forward(features, "train"))
          train_op = tf.train.AdamOptimizer().minimize(loss)
          """}) == [("stop-gradient-mix", "transformer_export.py", 3)]


def test_a_name_defined_through_itself_is_not_a_fill():
  # Real code (part ten) rebinds a join's other part through itself; the
  # fill check followed the name into its own definition without end.
  code = """\
      import tensorflow as tf
      table = tf.get_variable("t", [10, 4])
      zero = tf.zeros([1, 4])
      pad = pad * 2
      emb = tf.concat((pad, table[1:]), 0)
      out = tf.nn.embedding_lookup(emb, ids)
      train = tf.train.AdamOptimizer().minimize(tf.reduce_sum(out))
      """
  assert scanned.in_text(code) == []
  assert scanned.in_text(code.replace("pad = pad * 2", "pad = zero * 2")) == [
      ("stop-gradient-mix", 5)]
