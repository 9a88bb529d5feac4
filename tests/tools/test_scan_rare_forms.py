"""`tfpartial scan` on the rarer forms of real code it missed: each
(source, expected) pair is synthetic, written in the shape of what the
public files do (a padding row's reset fetched beside a train op that a
property returns, in Python 2; a helper that mixes into a local it
returns; a script's exercises, each in a new graph; a sampler trained in
front of a restored classifier; a warm-up that trains one table beside
the whole loss's step; a hand-written list beside a step switched off)."""

import pytest

import scanned


_found = scanned.in_project


FORMS = {
    # A char-aware LM: the backend's reset op fetched beside the network's
    # train op, which a lazily built property returns; the script is
    # Python 2, its progress `print` continued after a comma.
    "weight-remask fetched beside a train op a property returns": ({
        "emb.py": """\
            import tensorflow as tf
            class Words:
              def __init__(self, n, d):
                self.emb = tf.get_variable('emb', [n, d])
                self.reset_op = tf.scatter_update(self.emb, [0], tf.constant(0.0, shape=[1, d]))
            """,
        "net.py": """\
            import tensorflow as tf
            from lazy_property import LazyProperty
            class Net:
              def __init__(self, x, embedder):
                self.embedder, self.x = embedder, x
              @LazyProperty
              def loss(self):
                return tf.reduce_mean(self.embedder.embed(self.x))
              @LazyProperty
              def train_op(self):
                tvars = tf.trainable_variables()
                grads = tf.gradients(self.loss, tvars)
                return tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, tvars))
            """,
        "train.py": """\
            import tensorflow as tf
            from emb import Words
            from net import Net
            words = Words(100, 8)
            net = Net(x, words)
            session = tf.Session()
            for b in batches:
                l, _, _ = session.run([net.loss, net.train_op, words.reset_op], b)
                print '%d: loss %6.4f' % (step,
                                          l)
            """,
    }, [("weight-remask", "emb.py", 5)]),
    # A pretrained table whose rows found in the pretrained file train and
    # the others keep their values: a helper mixes into a local it returns.
    "stop-gradient-mix by a helper that returns the mix by a name": ({
        "utils.py": """\
            import tensorflow as tf
            def entry_stop_gradients(target, mask):
                mask_h = tf.cast(tf.logical_not(mask), dtype=target.dtype)
                mask = tf.cast(mask, dtype=target.dtype)
                ret = tf.stop_gradient(mask_h * target) + mask * target
                return ret
            """,
        "model.py": """\
            import tensorflow as tf
            from utils import entry_stop_gradients
            class Model:
              def add_embedding(self):
                matrix, valid_mask = read_embedding(self.vocab)
                embedding = tf.Variable(matrix, 'Embedding')
                return entry_stop_gradients(embedding, tf.expand_dims(valid_mask, 1))
              def build(self):
                emb = self.add_embedding()
                loss = tf.reduce_mean(tf.nn.embedding_lookup(emb, self.x))
                self.train_op = tf.train.AdamOptimizer().minimize(loss)
            """,
    }, [("stop-gradient-mix", "model.py", 7)]),
    # A book's exercises as one script: each starts a new graph and trains
    # new layers on top of restored ones (filters of one scope, but of
    # three graphs: not a GAN's two halves, nor one filter written twice).
    "var-list-filter in each exercise of a script, a new graph each": ("""\
        import tensorflow as tf
        def reset_graph(seed=42):
          tf.reset_default_graph()

        reset_graph()
        logits = tf.layers.dense(tf.layers.dense(build(X), 20, name='hidden4'), 10, name='outputs')
        loss = tf.reduce_mean(xent(y, logits))
        train_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='hidden[34]|outputs')
        training_op = optimizer.minimize(loss, var_list=train_vars)

        reset_graph()
        logits = tf.layers.dense(tf.layers.dense(build(X), 20, name='hidden4'), 10, name='outputs')
        loss = tf.reduce_mean(xent(y, logits))
        train_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='hidden[34]|outputs')
        training_op = optimizer.minimize(loss, var_list=train_vars)

        tf.reset_default_graph()
        weights1 = tf.Variable(init([784, 150]))
        weights3 = tf.Variable(init([150, 10]))
        clf_loss = tf.reduce_mean(xent(y, tf.matmul(tf.matmul(X, weights1), weights3)))
        clf_op = tf.train.AdamOptimizer().minimize(clf_loss, var_list=[weights3])
        """, [("var-list-filter", "t.py", 8), ("var-list-filter", "t.py", 14),
              ("var-list-filter", "t.py", 21)]),
    # A sampler trained in front of a pretrained classifier: the step
    # trains the one scope the script opens, and the rest of the graph is
    # restored from a checkpoint by a `Saver` over those variables.
    "var-list-filter of one model's scope, the rest restored": ("""\
        import tensorflow as tf
        def train():
          with tf.Graph().as_default():
            with tf.variable_scope("sampler"):
              points = SAMPLER.get_model(pointclouds_pl, is_training_pl)
            pred = CLASSIFIER.get_model(points, False)
            loss = CLASSIFIER.get_loss(pred, labels_pl)
            sampler_params = [v for v in tf.trainable_variables() if v.name.startswith("sampler")]
            train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=sampler_params)
            classifier_params = [v for v in tf.global_variables() if not v.name.startswith("sampler")]
            classifier_saver = tf.train.Saver(var_list=classifier_params)
          sess = tf.Session()
          classifier_saver.restore(sess, CLASSIFIER_MODEL_PATH)
          for batch in batches:
            sess.run(train_op, feed_dict=batch)
        """, [("var-list-filter", "t.py", 8)]),
    # A cold-start warm-up: the same loss trained whole by one op and only
    # on the new items' table by another, which the warm-up runs.
    "var-list-filter a hand-written list beside the whole loss's step": ("""\
        import tensorflow as tf
        class MetaModel(object):
          def __init__(self, columns):
            def get_embeddings():
              tables = [tf.get_variable(c, [100, 8]) for c in columns]
              return [tf.nn.embedding_lookup(t, ids[c]) for t, c in zip(tables, columns)], tables[0]
            with tf.variable_scope("model"):
              embs, ID_table = get_embeddings()
              warm_loss = tf.losses.log_loss(label, deep_fm(embs))
            warm_optimizer = tf.train.AdamOptimizer(1e-3)
            warm_update_op = warm_optimizer.minimize(warm_loss)
            warm_update_emb_op = warm_optimizer.minimize(warm_loss, var_list=[ID_table])
            def train_warm(sess, feed_dict, embedding_only=False):
              return sess.run([warm_loss, warm_update_emb_op if embedding_only else warm_update_op], feed_dict)
            self.train_warm = train_warm

        model = MetaModel(["item", "user"])
        for batch in batches:
          model.train_warm(sess, batch, embedding_only=True)
        """, [("var-list-filter", "t.py", 12)]),
    # A generator of new items' embeddings trained in front of a restored
    # CTR model: its hand-written list is the choice (shown where it is
    # written); a warm-up step switched off by a constant is no other half.
    "var-list-filter a hand-written list, the other step switched off": ("""\
        import tensorflow as tf
        def run(warm_up_bool=False):
          warm_up_bool = False
          emb_mat = tf.Variable(tf.random_normal([1000, 8]))
          W_meta = tf.Variable(tf.random_uniform([30, 10]))
          W_senet = tf.Variable(tf.random_uniform([3, 3]))
          meta_vars = [W_meta, W_senet]
          weights = {i: tf.Variable(tf.random_uniform([80, 80])) for i in range(3)}
          if warm_up_bool:
            warm_loss = tf.reduce_mean(dnn(emb_mat, weights, x))
            warm_vars = [emb_mat]
          meta_loss = tf.reduce_mean(dnn(generate(emb_mat, W_meta, W_senet), weights, x))
          meta_optimizer = tf.train.AdamOptimizer(1e-3).minimize(meta_loss, var_list=meta_vars)
          if warm_up_bool:
            warm_optimizer = tf.train.AdamOptimizer(1e-3).minimize(warm_loss, var_list=warm_vars)
          with tf.Session() as sess:
            saver.restore(sess, "./tmp/dnn/")
            for batch in batches:
              sess.run(meta_optimizer, batch)
        """, [("var-list-filter", "t.py", 7)]),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_rare_form_is_found(name):
  files, expected = FORMS[name]
  assert _found(files) == expected


def test_a_hand_list_beside_the_whole_step_of_another_graph_is_silent():
  # A course notebook's exercises, each in a new graph, each minimising
  # its own `f`: the whole step of the next exercise trains another model.
  code = """\
      import tensorflow as tf
      tf.reset_default_graph()
      x = tf.get_variable("x", shape=(), dtype=tf.float32)
      f = x ** 2
      step = tf.train.GradientDescentOptimizer(0.1).minimize(f, var_list=[x])
      with tf.Session() as s:
        s.run(step)
      tf.reset_default_graph()
      x = tf.get_variable("x", shape=(), dtype=tf.float32)
      f = x ** 2
      step = tf.train.GradientDescentOptimizer(0.1).minimize(f)
      with tf.Session() as s:
        s.run(step)
      """
  assert _found(code) == []
  # Without the second reset, one graph: the list beside the whole step.
  assert _found(code.replace(
      "s.run(step)\n      tf.reset_default_graph()", "s.run(step)")) == [
          ("var-list-filter", "t.py", 5)]
