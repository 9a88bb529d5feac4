"""`tfpartial scan` on what part 33 missed, each found by what the code
does, beside its silent twins.

- A person re-id net whose model function returns two losses and the
  classifier's weight (`loss, feat, loss_cs, w_cs = net(...)`): one step
  trains every variable on `loss`, a later one trains only `[w_cs]` on
  `loss_cs`, which reads the same conv tower. The rule that found it
  (`_sub_loss`) was removed after its review (it fired on a GAN's halves
  beside a pretraining step and on distillation, with super-linear
  work): that branch is a miss again; another branch's head fine-tune on
  `loss` beside it is found. Silent: a GAN's two halves of one call with
  no whole step, an auxiliary loss that reads only the listed weight, a
  whole step on a loss of another call (a teacher's).
- A tight-binding fit whose loop sets one of the parameters the step
  trains back to its physical value after every `apply_gradients`
  (`params[-1].assign(1.56)`, 'keep t0'): a whole variable held fixed,
  a weight-remask said to be exact (`_pinned`), as is one held at zero.
  Silent: the value set once before training, a clip of the variable's
  own value, a periodic reset under a test, a variable the step does not
  train, a target network's soft update. (Main read `params[-1]` as a
  part of a variable: a write-back of saved values, and a re-mask for
  zero.)
"""

import pytest
import scanned

# The branch whose fine-tune on the sub-loss part 33 missed (line 35: a
# miss again), beside the branch whose fine-tune on the whole loss it
# found (line 39).
_REID = """\
    import tensorflow as tf

    def net_iv(xa, xb, y):
        w1 = tf.get_variable('w1', [3, 3, 3, 8])
        h = tf.nn.relu(tf.nn.conv2d(xa, w1, [1, 1, 1, 1], 'SAME'))
        fa = tf.reduce_mean(h, [1, 2])
        w_cs = tf.get_variable('w_cs', [8, 10])
        w_vs = tf.get_variable('w_vs', [8, 2])
        ce = tf.losses.softmax_cross_entropy(y, tf.matmul(fa, w_cs))
        vs = tf.reduce_mean(tf.matmul(fa, w_vs))
        reg = tf.nn.l2_loss(w1)
        loss = ce + vs + reg
        loss_cs = ce + reg
        return loss, fa, loss_cs, w_cs

    def net_i(x, y):
        w1 = tf.get_variable('w1', [3, 3, 3, 8])
        f = tf.reduce_mean(tf.nn.conv2d(x, w1, [1, 1, 1, 1], 'SAME'), [1, 2])
        w_fc = tf.get_variable('w_fc', [8, 10])
        loss = tf.losses.softmax_cross_entropy(y, tf.matmul(f, w_fc))
        return loss, f, w_fc

    def train(kind, xa, xb, y, steps):
        if kind == 'iv':
            loss, feat, loss_cs, w_cs = net_iv(xa, xb, y)
        else:
            loss, feat, w_fc = net_i(xa, y)
        optimizer = tf.train.AdamOptimizer(1e-3)
        train_op = optimizer.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train_op)
            if kind == 'iv':
                train_cs = optimizer.minimize(loss_cs, var_list=[w_cs])
                for _ in range(7001):
                    sess.run(train_cs)
            else:
                train_sm = optimizer.minimize(loss, var_list=[w_fc])
                for _ in range(7001):
                    sess.run(train_sm)
            for _ in range(101):
                sess.run(train_op)
    """


def test_head_fine_tune_on_the_whole_loss_is_found():
  assert scanned.found(_REID) == [("var-list-filter", 39)]


_GAN = """\
    import tensorflow as tf

    def gan(z, x):
        g_w = tf.get_variable('g_w', [4, 4])
        d_w = tf.get_variable('d_w', [4, 1])
        fake = tf.matmul(z, g_w)
        d_fake = tf.matmul(fake, d_w)
        d_real = tf.matmul(x, d_w)
        d_loss = tf.reduce_mean(d_fake - d_real)
        g_loss = -tf.reduce_mean(d_fake)
        return d_loss, g_loss, d_w, g_w

    z = tf.placeholder(tf.float32, [None, 4])
    x = tf.placeholder(tf.float32, [None, 4])
    d_loss, g_loss, d_w, g_w = gan(z, x)
    d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=[d_w])
    g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=[g_w])
    sess = tf.Session()
    for _ in range(100):
        sess.run(d_op)
        sess.run(g_op)
    """


def test_gan_halves_of_one_call_stay_silent():
  assert scanned.found(_GAN) == []


def test_auxiliary_loss_of_the_listed_weight_alone_stays_silent():
  # The sub-loss reads only the weight it lists: nothing is left out.
  code = """\
    import tensorflow as tf

    def net(x, y):
        w1 = tf.get_variable('w1', [4, 8])
        w_aux = tf.get_variable('w_aux', [8, 8])
        h = tf.matmul(x, w1)
        loss = tf.losses.mean_squared_error(y, h) + tf.nn.l2_loss(w_aux)
        aux = tf.nn.l2_loss(w_aux)
        return loss, aux, w_aux

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 8])
    loss, aux, w_aux = net(x, y)
    opt = tf.train.AdamOptimizer(1e-3)
    train_op = opt.minimize(loss)
    aux_op = opt.minimize(aux, var_list=[w_aux])
    sess = tf.Session()
    for _ in range(100):
        sess.run([train_op, aux_op])
    """
  assert scanned.found(code) == []


def test_whole_step_on_another_calls_loss_stays_silent():
  # A teacher trained whole, then a student's head on the student's
  # own loss: two calls, two models.
  code = """\
    import tensorflow as tf

    def teacher(x, y):
        w = tf.get_variable('t_w', [4, 10])
        return tf.losses.softmax_cross_entropy(y, tf.matmul(x, w)), w

    def student(x, y):
        w1 = tf.get_variable('s_w1', [4, 8])
        w2 = tf.get_variable('s_w2', [8, 10])
        logits = tf.matmul(tf.matmul(x, w1), w2)
        return tf.losses.softmax_cross_entropy(y, logits), w2

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 10])
    t_loss, t_w = teacher(x, y)
    s_loss, s_w2 = student(x, y)
    opt = tf.train.AdamOptimizer(1e-3)
    t_op = opt.minimize(t_loss)
    sess = tf.Session()
    for _ in range(100):
        sess.run(t_op)
    """
  assert scanned.found(code) == []


# A tight-binding fit: every parameter trained, the last set back to its
# physical value after each step ('keep t0'), line 17 (`_pinned`). Its
# parameters and optimizer are shared with `test_scan_mend39_pinned`.
_PARAMS = """\
    import tensorflow as tf

    t1 = tf.Variable(1.0)
    t0 = tf.Variable(2.0)
    params = [t1, t0]
    optimizer = tf.keras.optimizers.Adam(0.1)

"""

_KEEP_T0 = _PARAMS + """\
    def loss_fn():
        return tf.square(t1 * t0 - 3.0)

    for i in range(20):
        with tf.GradientTape() as tape:
            loss = loss_fn()
        gradients = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(gradients, params))
        # keep t0
        params[-1].assign(1.56)
    """


def test_whole_variable_set_back_after_each_step_is_found():
  assert scanned.found(_KEEP_T0) == [("weight-remask", 17)]


def test_whole_variable_by_name_set_back_is_found():
  code = _KEEP_T0.replace("params[-1].assign(1.56)", "t0.assign(1.56)")
  assert scanned.found(code) == [("weight-remask", 17)]


def test_whole_variable_held_at_zero_is_found():
  # Zero is a number like any other: the trained variable held at 0.
  code = _KEEP_T0.replace("params[-1].assign(1.56)", "params[-1].assign(0.0)")
  assert scanned.found(code) == [("weight-remask", 17)]


def test_whole_variable_set_back_says_it_is_exact():
  found = scanned.finding_and_diff(_KEEP_T0, "weight-remask")[0]
  assert "a whole variable held fixed; exact as it is" in found.message
  assert "after each `apply_gradients` (line 15)" in found.message


@pytest.mark.parametrize("write", [
    # Set once, before training: an initial value.
    "pass",
    # A projection of the step's own value: no freeze.
    "params[-1].assign(tf.clip_by_value(params[-1], 0.0, 1.0))",
    # A periodic reset, under a test.
    "if i % 10 == 0:\n            params[-1].assign(1.56)",
    # A variable the step does not train (a temperature, a rate).
    "scale.assign(0.5)",
    # A target network's sync from the trained one.
    "target.assign(0.99 * target + 0.01 * t0)",
])
def test_look_alikes_of_a_set_back_stay_silent(write):
  code = _KEEP_T0.replace(
      "params = [t1, t0]",
      "params = [t1, t0]\n    t0.assign(1.56)\n    scale = tf.Variable(1.0)"
      "\n    target = tf.Variable(2.0)").replace(
          "params[-1].assign(1.56)", write)
  assert scanned.found(code) == []
