"""`tfpartial scan` on the rarer forms of real code it missed: each
(source, expected) pair is synthetic, written in the shape of what the
public files do (a padding row's reset fetched beside a train op that a
property returns, in Python 2; ...)."""

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
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_rare_form_is_found(name):
  files, expected = FORMS[name]
  assert _found(files) == expected
