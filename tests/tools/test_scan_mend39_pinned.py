"""`tfpartial scan` after the review of `_pinned` (a whole variable a
step trains, set back to a number after that step: a weight-remask said
to be exact) and of `_sub_loss`.

- `X[k]` is a whole variable only when `X` is bound once to a list (a
  literal, a comprehension, `.trainable_variables`): `emb[0]` of one
  variable, the padding row, is a part of it, found as before.
- Only a step that is a statement of the same loop body before the
  write, with no `continue` or `break` between, counts: a reset once
  per epoch after an inner loop of steps is not exact.
- A trained whole variable held at 0 after every step is the same idiom.
- The work is linear in the writes of one loop body.
- `_sub_loss` is removed: a GAN's halves beside a generator's
  pretraining step and a distillation's student head stay silent.
"""

import pytest

import scanned
import test_scan_part33_misses as part33

_PADDING_ROW = """\
    import tensorflow as tf

    emb = tf.Variable(tf.random.normal([1000, 8]))
    opt = tf.keras.optimizers.Adam(1e-3)

    def loss_fn(ids):
        return tf.reduce_sum(tf.nn.embedding_lookup(emb, ids))

    for step in range(100):
        opt.minimize(lambda: loss_fn([1, 2, 0]), var_list=emb)
        emb[0].assign(tf.zeros([8]))
    """


def test_padding_row_of_one_variable_is_a_part():
  assert scanned.found(_PADDING_ROW) == [("weight-remask", 11)]


_ONE_VARIABLE = """\
    import tensorflow as tf

    params = tf.Variable(tf.zeros([10]))
    optimizer = tf.keras.optimizers.Adam(0.1)
    x = tf.ones([10])

    for i in range(20):
        optimizer.minimize(lambda: tf.reduce_sum(params * x), var_list=params)
        params[-1].assign(VALUE)
    """


def test_last_element_of_one_variable_held_at_zero_is_a_part():
  code = _ONE_VARIABLE.replace("VALUE", "0.0")
  assert scanned.found(code) == [("weight-remask", 9)]
  found = scanned.finding_and_diff(code, "weight-remask")[0]
  assert "exact as it is" not in found.message


def test_last_element_of_one_variable_held_at_a_number_is_not_exact():
  code = _ONE_VARIABLE.replace("VALUE", "1.56")
  assert [idiom for idiom, _ in scanned.found(code)] in (
      ["write-back"], ["weight-remask"])
  found = scanned.finding_and_diff(code, scanned.found(code)[0][0])[0]
  assert "exact as it is" not in found.message


_KEEP = part33._PARAMS + """\
    for epoch in range(20):
        for batch in range(1000):
            with tf.GradientTape() as tape:
                loss = tf.square(t1 * t0 - 3.0)
            gradients = tape.gradient(loss, params)
            optimizer.apply_gradients(zip(gradients, params))
        t0.assign(1.56)
    """


def test_reset_once_per_epoch_after_inner_steps_is_not_exact():
  assert scanned.found(_KEEP) == []


_SKIPPED = part33._PARAMS + """\
    for i in range(20):
        with tf.GradientTape() as tape:
            loss = tf.square(t1 * t0 - 3.0)
        gradients = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(gradients, params))
        if i % 5:
            JUMP
        t0.assign(1.56)
    """


@pytest.mark.parametrize("jump", ["continue", "break"])
def test_continue_or_break_between_step_and_write_is_not_exact(jump):
  assert scanned.found(_SKIPPED.replace("JUMP", jump)) == []


# part 33's tight-binding fit (`keep t0`), its set-back written as WRITE.
_KEEP_ZERO = part33._KEEP_T0.replace(
    "        # keep t0\n        params[-1].assign(1.56)", "        WRITE")


@pytest.mark.parametrize("write", ["params[-1].assign(0.0)",
                                   "t0.assign(0.0)", "t0.assign(0)"])
def test_whole_variable_held_at_zero_is_exact(write):
  code = _KEEP_ZERO.replace("WRITE", write)
  assert scanned.found(code) == [("weight-remask", 16)]
  found = scanned.finding_and_diff(code, "weight-remask")[0]
  assert "a whole variable held fixed; exact as it is" in found.message


def test_items_of_a_model_list_held_at_a_number_are_exact():
  code = """\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    params = model.trainable_variables
    optimizer = tf.keras.optimizers.Adam(0.1)

    for i in range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(tf.ones([1, 3])))
        gradients = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(gradients, params))
        params[-1].assign(1.56)
    """
  assert scanned.found(code) == [("weight-remask", 12)]
  found = scanned.finding_and_diff(code, "weight-remask")[0]
  assert "exact as it is" in found.message


def _writes_after_one_step(n):
  """One loop: a step over `n` variables, then `n` writes of a number
  into them, by name."""
  made = "".join(f"v{i} = tf.Variable(1.0)\n" for i in range(n))
  listed = "params = [" + ", ".join(f"v{i}" for i in range(n)) + "]\n"
  return ("import tensorflow as tf\n" + made + listed +
          "opt = tf.keras.optimizers.Adam(0.1)\n"
          "for step in range(10):\n"
          "  with tf.GradientTape() as tape:\n"
          "    loss = tf.add_n(params)\n"
          "  grads = tape.gradient(loss, params)\n"
          "  opt.apply_gradients(zip(grads, params))\n" + "".join(
              f"  v{i}.assign(1.5)\n" for i in range(n)))


def test_pinned_work_is_linear_in_the_writes_of_a_loop():
  small, large = (scanned.scan_work(_writes_after_one_step(n), "_pinned.py")
                  for n in (40, 160))
  assert large <= 6 * small


def test_whole_scan_work_is_linear_in_the_writes_of_a_loop():
  small, large = (scanned.scan_work(_writes_after_one_step(n))
                  for n in (40, 160))
  assert large <= 6 * small


def test_gan_halves_beside_a_pretraining_step_stay_silent():
  code = """\
    import tensorflow as tf

    def gan(z, x):
        g_w = tf.get_variable('g_w', [4, 4])
        d_w = tf.get_variable('d_w', [4, 1])
        fake = tf.matmul(z, g_w)
        d_fake = tf.matmul(fake, d_w)
        d_real = tf.matmul(x, d_w)
        recon = tf.reduce_mean(tf.square(fake - x))
        d_loss = tf.reduce_mean(d_fake - d_real)
        g_loss = -tf.reduce_mean(d_fake)
        return recon, d_loss, g_loss, d_w, g_w

    z = tf.placeholder(tf.float32, [None, 4])
    x = tf.placeholder(tf.float32, [None, 4])
    recon, d_loss, g_loss, d_w, g_w = gan(z, x)
    opt = tf.train.AdamOptimizer(1e-4)
    pre_op = opt.minimize(recon)
    d_op = opt.minimize(d_loss, var_list=[d_w])
    g_op = opt.minimize(g_loss, var_list=[g_w])
    sess = tf.Session()
    for _ in range(100):
        sess.run(pre_op)
    for _ in range(100):
        sess.run(d_op)
        sess.run(g_op)
    """
  assert scanned.found(code) == []


def test_distilled_student_head_stays_silent():
  code = """\
    import tensorflow as tf

    def teacher_student(x, y):
        t_w1 = tf.get_variable('t_w1', [4, 64])
        t_w2 = tf.get_variable('t_w2', [64, 10])
        s_w = tf.get_variable('s_w', [4, 10])
        t_logits = tf.matmul(tf.nn.relu(tf.matmul(x, t_w1)), t_w2)
        s_logits = tf.matmul(x, s_w)
        t_loss = tf.losses.softmax_cross_entropy(y, t_logits)
        soft = tf.nn.softmax(tf.stop_gradient(t_logits) / 4.0)
        kd_loss = tf.losses.softmax_cross_entropy(soft, s_logits / 4.0)
        return t_loss, kd_loss, s_w

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 10])
    t_loss, kd_loss, s_w = teacher_student(x, y)
    opt = tf.train.AdamOptimizer(1e-3)
    teacher_op = opt.minimize(t_loss)
    student_op = opt.minimize(kd_loss, var_list=[s_w])
    sess = tf.Session()
    for _ in range(1000):
        sess.run(teacher_op)
    for _ in range(1000):
        sess.run(student_op)
    """
  assert scanned.found(code) == []


_MADE = """\
    import tensorflow as tf

    def make(n):
        t0 = tf.Variable(1.0)
        a0 = tf.Variable(2.0)

        def fn(k):
            return t0 * a0 * k
        return fn, RETURNED

    fn, params = make(4)
    optimizer = tf.keras.optimizers.Adam(0.1)

    for i in range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(fn(1.0))
        gradients = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(gradients, params))
        params[-1].assign(1.56)
    """


@pytest.mark.parametrize("returned", ["[t0, a0]",
                                      "list({'t0': t0, 'a0': a0}.values())"])
def test_item_of_a_list_a_function_returns_held_fixed_is_exact(returned):
  # The notebook's shape: `fn, params = make(...)`, `make` ending `return
  # fn, [t0, a0]`.
  code = _MADE.replace("RETURNED", returned)
  assert scanned.found(code) == [("weight-remask", 19)]
  found = scanned.finding_and_diff(code, "weight-remask")[0]
  assert "exact as it is" in found.message


def test_element_of_one_variable_a_function_returns_is_a_part():
  code = _MADE.replace("RETURNED", "tf.Variable(tf.zeros([4]))")
  found = scanned.found(code)
  assert [line for _, line in found] == [19]
  idiom = found[0][0]
  assert "exact as it is" not in scanned.finding_and_diff(
      code, idiom)[0].message
