"""`tfpartial scan`: a table whose padding row is replaced by zeros
(Kyubyong's `zero_pad`) stays a finding whether or not the scan sees a
step that trains it (deep_lip_reading, its transformer twins): the rule
that called a project where "nothing trains" silent (`_idle_project`)
is gone, since no static reader can tell that nothing ever trains."""

import scanned

_MODULES = """\
    import tensorflow as tf

    def embedding(inputs, vocab_size, num_units, zero_pad=True,
                  scope="embedding"):
      with tf.variable_scope(scope):
        lookup_table = tf.get_variable("lookup_table",
                                       shape=[vocab_size, num_units])
        if zero_pad:
          lookup_table = tf.concat((tf.zeros(shape=[1, num_units]),
                                    lookup_table[1:, :]), 0)
        return tf.nn.embedding_lookup(lookup_table, inputs)
    """

# The lip-reading graph: built for evaluation, restored, run.
_GRAPH = """\
    import tensorflow as tf
    from modules import embedding

    class TransformerGraph:
      def __init__(self, x, y, is_training=True):
        self.dec = embedding(y, 40, 512, zero_pad=True)
        self.logits = tf.layers.dense(self.dec + x, 40)
        self.preds = tf.argmax(self.logits, -1)
    """

# A character language model whose optimizer is built only for training.
_LM = """\
    import tensorflow as tf

    class CharRnnLm:
      def __init__(self, args, training=False):
        self.input_data = tf.placeholder(tf.int32, [None, 10])
        emb = tf.get_variable("emb", [args.vocab, 64])
        self.logits = tf.layers.dense(
            tf.nn.embedding_lookup(emb, self.input_data), args.vocab)
        if training:
          self.cost = tf.reduce_mean(self.logits)
          tvars = tf.trainable_variables()
          grads = tf.gradients(self.cost, tvars)
          optimizer = tf.train.AdamOptimizer(0.001)
          self.train_op = optimizer.apply_gradients(zip(grads, tvars))

    def load_lm(args, sess, path):
      model = CharRnnLm(args, training=False)
      tf.train.Saver().restore(sess, path)
      return model
    """

_MAIN = """\
    import tensorflow as tf
    from graph import TransformerGraph
    from lm import load_lm

    def main(config):
      sess = tf.Session()
      lm = load_lm(config, sess, config.lm_path)
      g = TransformerGraph(x_ph, y_ph, is_training=False)
      tf.train.Saver().restore(sess, config.ckpt)
      print(sess.run(g.preds, feed))
    """

_CONCAT_LINE = 9


def _lip(**changed):
  files = {"modules.py": _MODULES, "graph.py": _GRAPH, "lm.py": _LM,
           "main.py": _MAIN}
  files.update(changed)
  return scanned.in_project({k: v for k, v in files.items() if v})


def test_the_language_model_trained_by_a_script_is_found():
  # A training script builds the optimizer: a step of the project may
  # train every trainable variable of its graph, the table's rows too.
  train = """\
      from lm import CharRnnLm

      def train(args):
        model = CharRnnLm(args, training=True)
        for batch in data:
          sess.run(model.train_op, {model.input_data: batch})
      """
  assert _lip(**{"train_lm.py": train}) == [
      ("stop-gradient-mix", "modules.py", _CONCAT_LINE)]


def test_the_transformer_trained_by_its_own_graph_is_found():
  # Kyubyong's transformer: the graph builds its train op when training.
  graph = _GRAPH.replace("""\
        self.preds = tf.argmax(self.logits, -1)
    """, """\
        self.preds = tf.argmax(self.logits, -1)
        if is_training:
          self.loss = tf.reduce_mean(self.logits)
          self.optimizer = tf.train.AdamOptimizer(0.0001)
          self.train_op = self.optimizer.minimize(self.loss)
    """)
  train = """\
      from graph import TransformerGraph

      g = TransformerGraph(x, y, is_training=True)
      sess.run(g.train_op)
      """
  assert _lip(**{"graph.py": graph, "train.py": train}) == [
      ("stop-gradient-mix", "modules.py", _CONCAT_LINE)]


def test_an_ungated_step_in_a_function_nothing_calls_is_found():
  # `absl.app.run(main)` calls `main` without a call the project spells.
  train = """\
      import tensorflow as tf
      from absl import app
      from graph import TransformerGraph

      def main(argv):
        g = TransformerGraph(x, y)
        loss = tf.reduce_mean(g.logits)
        train_op = tf.train.AdamOptimizer(0.001).minimize(loss)

      app.run(main)
      """
  assert _lip(**{"train.py": train}) == [
      ("stop-gradient-mix", "modules.py", _CONCAT_LINE)]


def test_a_keras_fit_anywhere_is_found():
  train = """\
      from graph import TransformerGraph

      model = build_keras_model()
      model.fit(x, y, epochs=3)
      """
  assert _lip(**{"train.py": train}) == [
      ("stop-gradient-mix", "modules.py", _CONCAT_LINE)]


def test_a_step_gated_by_a_flag_a_caller_may_turn_on_is_found():
  # `training=args.train`: what the command line says, either way.
  lm = _LM.replace("CharRnnLm(args, training=False)",
                   "CharRnnLm(args, training=args.train)")
  assert _lip(**{"lm.py": lm}) == [
      ("stop-gradient-mix", "modules.py", _CONCAT_LINE)]
