"""`tfpartial scan`'s `var-list-filter` where the variable a filter
leaves out is written from a table just read back from a checkpoint
(part forty-two's decomp_attend: `emb_0 = tf.Variable(0.)`, a `Saver`
restores it, `sess.run(emb[:n].assign(emb_0))`): a load, not a target
network's sync, so the filter still leaves `emb` out and should be
reported. Decided by when the write runs: once, before the training
loop, from a table a Saver restored (an initialisation), not in the
loop or after steps (a sync).
The look-alikes keep the module silent as a sync: the source is a
trained network's variable, a call of the project (which may train
it) runs between its making and the write, the write runs in a loop,
or the source is a name bound twice. Synthetic sources in the shape of
real code."""

import pytest
import scanned


_found = scanned.found

# Cases the scanner still gets wrong (base 4738d9ae and this branch),
# strict xfails: a restored table's one copy before the loop is read
# as a target network's sync (the module goes silent), and a target
# network's `is not` filter is reported although its sync op runs in
# the training loop.
_OPEN = pytest.mark.xfail(strict=True, reason="open: t67-miss42 left "
                          "the load-or-sync rule unbuilt (its report)")
_OPEN_NAMES = {
    "a table restored by compat.v1's Saver",
    "a table restored under a flag, then assigned",
    "a table restored, then assigned",
    "a target network's sync op built once, run in the loop"}


def _cases(names):
  """`names` sorted, the open ones marked as strict xfails."""
  return [pytest.param(n, marks=_OPEN) if n in _OPEN_NAMES else n
          for n in sorted(names)]


_LOADED = """\
    import tensorflow as tf


    def run(x, y, n_words):
      emb = tf.Variable(tf.random_normal([n_words, 300], 0, 1))
      w = tf.get_variable('w', [300, 1])
      h = tf.reduce_mean(tf.nn.embedding_lookup(emb, x), 1)
      loss = tf.reduce_mean(tf.square(tf.matmul(h, w) - y))
      opt = tf.train.AdamOptimizer(1e-3)
      grads = opt.compute_gradients(loss)
      train_op = opt.apply_gradients(
          [(g, v) for g, v in grads if v != emb])
      with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        {source}
        saver = tf.train.Saver({{'emb': emb_0}})
        saver.restore(sess, 'model.ckpt')
        {between}
        {loop}sess.run(emb[:tf.shape(emb_0)[0]].assign(emb_0))
        for _ in range(10):
          sess.run(train_op)
    """


def _loaded(source="emb_0 = tf.Variable(0., validate_shape=False)",
            between="pass", loop=""):
  return _LOADED.format(source=source, between=between, loop=loop)


# paraphrase_question: the filter and the load under one flag.
_FLAGGED = """\
    import tensorflow as tf


    def run(x, y, n_words, emb_glove):
      emb = tf.Variable(tf.random_normal([n_words, 300], 0, 1))
      w = tf.get_variable('w', [300, 1])
      h = tf.reduce_mean(tf.nn.embedding_lookup(emb, x), 1)
      loss = tf.reduce_mean(tf.square(tf.matmul(h, w) - y))
      opt = tf.train.AdamOptimizer(1e-3)
      grads = opt.compute_gradients(loss)
      grads = [(g, v) for g, v in grads if v != emb] if emb_glove else grads
      train_op = opt.apply_gradients(grads)
      with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if emb_glove:
          emb_0 = tf.Variable(0., validate_shape=False)
          saver = tf.train.Saver({'emb': emb_0})
          saver.restore(sess, 'model.ckpt')
          sess.run(emb[:tf.shape(emb_0)[0]].assign(emb_0))
        for i in range(10):
          sess.run(train_op)
    """

POSITIVE = {
    "a table restored under a flag, then assigned": (
        _FLAGGED, [("var-list-filter", 11)]),
    # decomp_attend: GloVe vectors restored into a fresh variable.
    "a table restored, then assigned": (_loaded(), [("var-list-filter", 12)]),
    "a table restored by compat.v1's Saver": (
        _loaded().replace("tf.train.Saver", "tf.compat.v1.train.Saver"),
        [("var-list-filter", 12)]),
}

NEGATIVE = {
    # The source is the network the step trains: a target network's sync.
    "the source is a trained variable": _loaded(source="emb_0 = w"),
    # A call of the project between making and writing may train it.
    "a project call between": _loaded(between="warm_up(sess, train_op)"),
    # Run after the training loop: a sync after steps.
    "the write after the steps": _loaded().replace(
        "        sess.run(emb[:tf.shape(emb_0)[0]].assign(emb_0))\n"
        "        for _ in range(10):\n          sess.run(train_op)\n",
        "        for _ in range(10):\n          sess.run(train_op)\n"
        "        sess.run(emb[:tf.shape(emb_0)[0]].assign(emb_0))\n"),
    # Written in a loop: later writes read what training made of it.
    "the write in a loop": _loaded(loop="for _ in range(3): "),
    # Bound twice: which variable the write reads is not one made here.
    "the source bound twice": _loaded(
        source="emb_0 = tf.Variable(0.)\n        emb_0 = w"),
    # Not TensorFlow's Variable: may return one shared or trained.
    "a look-alike Variable": _loaded(
        source="emb_0 = Variable(0.)").replace(
            "import tensorflow as tf\n",
            "import tensorflow as tf\n    from mylib import Variable\n"),
}


@pytest.mark.parametrize("name", _cases(POSITIVE))
def test_a_table_only_loaded_is_no_sync(name):
  source, expected = POSITIVE[name]
  assert _found(source) == expected


@pytest.mark.parametrize("name", _cases(NEGATIVE))
def test_a_sync_from_what_may_train_stays_silent(name):
  assert _found(NEGATIVE[name]) == []


# The read's cases: the write built once after the restore but run in
# the loop after the source trains, or run by a project helper that
# trains the source first: a sync, silent as base is.
_SYNC_RUN_LATER = """\
    import tensorflow as tf


    def run(x, y, n_words):
      emb = tf.Variable(tf.random_normal([n_words, 300], 0, 1))
      w = tf.get_variable('w', [300, 1])
      h = tf.reduce_mean(tf.nn.embedding_lookup(emb, x), 1)
      loss = tf.reduce_mean(tf.square(tf.matmul(h, w) - y))
      opt = tf.train.AdamOptimizer(1e-3)
      grads = opt.compute_gradients(loss)
      train_op = opt.apply_gradients(
          [(g, v) for g, v in grads if v != emb])
      with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        emb_0 = tf.Variable(0., validate_shape=False)
        saver = tf.train.Saver({'emb_0': emb_0})
        saver.restore(sess, 'model.ckpt')
        {write}
    """

_ONLINE = ("tf.reduce_mean(tf.square(tf.reduce_mean(\n"
           "            tf.nn.embedding_lookup(emb_0, x), 1) - y))")
LATER = {
    # A target network: the sync op built once after a restore, run in
    # the loop every 100 steps while `online` trains.
    "a target network's sync op built once, run in the loop": """\
    import tensorflow as tf


    def run(x, y, n_words):
      target = tf.Variable(tf.random_normal([n_words, 300], 0, 1))
      with tf.Session() as sess:
        online = tf.Variable(tf.random_normal([n_words, 300], 0, 1))
        saver = tf.train.Saver({'online': online})
        saver.restore(sess, 'model.ckpt')
        sync = target.assign(online)
        w = tf.get_variable('w', [300, 1])
        h = tf.reduce_mean(tf.nn.embedding_lookup(online, x), 1)
        ht = tf.reduce_mean(tf.nn.embedding_lookup(target, x), 1)
        loss = tf.reduce_mean(tf.square(
            tf.matmul(h, w) - tf.stop_gradient(tf.matmul(ht, w)) - y))
        opt = tf.train.AdamOptimizer(1e-3)
        grads = opt.compute_gradients(loss)
        train_op = opt.apply_gradients(
            [(g, v) for g, v in grads if v is not target])
        for step in range(1000):
          sess.run(train_op)
          if step % 100 == 0:
            sess.run(sync)
    """,
    "an op built once, run in the loop after the source trains":
        _SYNC_RUN_LATER.replace("{write}", f"""\
sync = emb[:tf.shape(emb_0)[0]].assign(emb_0)
        online_loss = {_ONLINE}
        train_online = tf.train.AdamOptimizer(1e-3).minimize(online_loss)
        for step in range(1000):
          sess.run([train_op, train_online])
          if step % 100 == 0:
            sess.run(sync)"""),
    "the write passed to a project helper that trains the source":
        _SYNC_RUN_LATER.replace("{write}", """\
train_then_sync(
            sess, x, y, emb_0, emb[:tf.shape(emb_0)[0]].assign(emb_0))""")
        + """

    def train_then_sync(sess, x, y, online, sync):
      loss = tf.reduce_mean(tf.square(tf.reduce_mean(
          tf.nn.embedding_lookup(online, x), 1) - y))
      step = tf.train.AdamOptimizer(1e-3).minimize(loss)
      for i in range(1000):
        sess.run(step)
        if i % 100 == 0:
          sess.run(sync)
    """,
}


@pytest.mark.parametrize("name", _cases(LATER))
def test_a_sync_run_later_stays_silent(name):
  assert _found(LATER[name]) == []
