"""`tfpartial scan`'s `var-list-filter` on two steps over different
groups for different losses that are stages, not a model's two halves:
a later step trains only a new part on a loss that reads an
earlier-trained part no step trains in that phase of the run (stage 2
of tensor_holography: a net appended to a trained CNN, in a loop after
the CNN's loop; a value-head burn-in in the `if step < N` arm, the whole
loss in the `else` arm). Look-alikes stay silent: both steps in one loop
(the new part trained beside the part it reads), a GAN whose halves read
each other, the appended net reading the trained CNN only below
`stop_gradient`, a later loop that trains the CNN again. Sources are
synthetic, in the shape of the miss analysis's probes."""

import pytest
import scanned

_STAGES = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, [None, 32, 32, 3])
    y = tf.placeholder(tf.float32, [None, 32, 32, 3])
    with tf.variable_scope('main'):
        h = tf.layers.conv2d(x, 8, 3, padding='same')
        out = tf.layers.conv2d(h, 3, 3, padding='same')
    loss1 = tf.reduce_mean(tf.square(out - y))
    with tf.variable_scope('ddpm'):
        d = tf.layers.conv2d(out, 3, 3, padding='same')
    loss2 = tf.reduce_mean(tf.square(d - out))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss1)
    ddpm_vars = [v for v in tf.global_variables()
                 if v.name.startswith('ddpm')]
    train_identity_op = tf.train.AdamOptimizer(1e-3).minimize(
        loss2, var_list=ddpm_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(100):
            sess.run(train_op, {x: 0, y: 0})
        for epoch in range(50):
            sess.run(train_identity_op, {x: 0, y: 0})
    """

_BURN_IN = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, [None, 16])
    ret = tf.placeholder(tf.float32, [None])
    with tf.variable_scope('model'):
        with tf.variable_scope('body'):
            h = tf.layers.dense(x, 32)
        with tf.variable_scope('pi'):
            logits = tf.layers.dense(h, 4)
        with tf.variable_scope('vf'):
            v = tf.squeeze(tf.layers.dense(h, 1), -1)
    pg_loss = -tf.reduce_mean(tf.nn.log_softmax(logits)[:, 0] * ret)
    vf_loss = tf.reduce_mean(tf.square(v - ret))
    loss = pg_loss + vf_loss
    params = tf.trainable_variables('model')
    params_vf = tf.trainable_variables('model/vf')
    opt = tf.train.AdamOptimizer(1e-3)
    train_op = opt.apply_gradients(zip(tf.gradients(loss, params), params))
    burn_in_op = opt.apply_gradients(
        zip(tf.gradients(vf_loss, params_vf), params_vf))
    burn_in_timesteps = 1000
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(100000):
            if step < burn_in_timesteps:
                sess.run(burn_in_op, {x: 0, ret: 0})
            else:
                sess.run(train_op, {x: 0, ret: 0})
    """

_GAN = """\
    import tensorflow as tf
    z = tf.placeholder(tf.float32, [None, 8])
    real = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope('gen'):
        fake = tf.layers.dense(tf.layers.dense(z, 16), 4)
    def disc(t):
        with tf.variable_scope('disc', reuse=tf.AUTO_REUSE):
            return tf.layers.dense(tf.layers.dense(t, 16), 1)
    d_loss = tf.reduce_mean(disc(fake)) - tf.reduce_mean(disc(real))
    g_loss = -tf.reduce_mean(disc(fake))
    g_vars = [v for v in tf.trainable_variables() if 'gen' in v.name]
    d_vars = [v for v in tf.trainable_variables() if 'disc' in v.name]
    d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
    g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(100):
            sess.run(d_op)
        for epoch in range(100):
            sess.run(g_op)
    """


# The stage's filter (`ddpm_vars = [...]`), where the idiom reports.
_STAGE_LINE = 12


def test_a_part_appended_in_a_later_loop_is_found():
  assert scanned.found(_STAGES) == [("var-list-filter", _STAGE_LINE)]


def test_the_earlier_stage_listed_by_hand_is_found():
  text = _STAGES.replace(
      "minimize(loss1)", "minimize(loss1, var_list=tf.trainable_variables("
      "'main'))")
  assert scanned.found(text) == [("var-list-filter", _STAGE_LINE)]


def test_a_stage_run_by_a_while_loop_is_found():
  # Attacker: the later phase is a `while`, not a `for`.
  text = _STAGES.replace(
      "        for epoch in range(50):\n",
      "        epoch = 0\n        while epoch < 50:\n"
      "            epoch += 1\n")
  assert scanned.found(text) == [("var-list-filter", _STAGE_LINE)]


@pytest.mark.xfail(strict=True, reason=(
    "left: the arms of a counter test as phases, and a sub-scope "
    "(`model/vf`) of one literal root, are not read by `_later_stage`"))
def test_a_value_head_burn_in_arm_is_found():
  assert ("var-list-filter", 18) in scanned.found(_BURN_IN)


def test_both_steps_in_one_loop_stay_silent():
  # The appended net trained beside the CNN it reads: an online probe.
  text = _STAGES.replace(
      "        for epoch in range(50):\n"
      "            sess.run(train_identity_op, {x: 0, y: 0})\n", "").replace(
          "            sess.run(train_op, {x: 0, y: 0})\n",
          "            sess.run(train_op, {x: 0, y: 0})\n"
          "            sess.run(train_identity_op, {x: 0, y: 0})\n")
  assert scanned.found(text) == []


def test_a_later_loop_that_trains_the_cnn_again_stays_silent():
  # Attacker: the second loop trains the part read as well.
  text = _STAGES.replace(
      "            sess.run(train_identity_op, {x: 0, y: 0})\n",
      "            sess.run(train_identity_op, {x: 0, y: 0})\n"
      "            sess.run(train_op, {x: 0, y: 0})\n")
  assert scanned.found(text) == []


def test_the_cnn_read_below_stop_gradient_stays_silent():
  text = _STAGES.replace(
      "d = tf.layers.conv2d(out, 3", "d = tf.layers.conv2d("
      "tf.stop_gradient(out), 3").replace(
          "tf.square(d - out)", "tf.square(d - tf.stop_gradient(out))")
  assert scanned.found(text) == []


def test_gan_halves_in_successive_loops_stay_silent():
  # Each half's loss reads the other's variables: mutual, halves.
  assert scanned.found(_GAN) == []


_OVERLAP = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, [None, 16])
    a = tf.placeholder(tf.float32, [None, 2])
    c = tf.placeholder(tf.float32, [None, 2])
    conv = tf.layers.dense(x, 32, name='conv1')
    fc4 = tf.layers.dense(conv, 32, name='fc4')
    fc5 = tf.layers.dense(fc4, 32, name='fc5')
    act = tf.layers.dense(fc5, 2, name='fc6_1')
    cls = tf.layers.dense(fc5, 2, name='fc6_2')
    loss_act = tf.losses.softmax_cross_entropy(a, act)
    loss_cls = tf.losses.softmax_cross_entropy(c, cls)
    tvars = tf.trainable_variables()
    act_vars = [v for v in tvars if 'fc' in v.name and 'fc6_2' not in v.name]
    cls_vars = [v for v in tvars if 'fc' in v.name and 'fc6_1' not in v.name]
    op_act = tf.train.AdamOptimizer(1e-4).minimize(loss_act, var_list=act_vars)
    op_cls = tf.train.AdamOptimizer(1e-4).minimize(loss_cls, var_list=cls_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(100):
            sess.run([op_act, op_cls])
    """


@pytest.mark.xfail(strict=True, reason=(
    "left: overlapping lists of two losses still pass as halves "
    "(class H of the miss analysis)"))
def test_two_fine_tunes_over_overlapping_lists_are_found():
  # Both lists hold fc4 and fc5: no halves; conv1 trains in neither.
  assert scanned.found(_OVERLAP) != []


def test_disjoint_heads_over_one_trained_trunk_stay_silent():
  # Look-alike: a third step trains the trunk in the same loop.
  text = _OVERLAP.replace(
      "    with tf.Session()",
      "    op_all = tf.train.AdamOptimizer(1e-4).minimize(loss_act + loss_cls)"
      "\n    with tf.Session()").replace(
          "sess.run([op_act, op_cls])", "sess.run([op_act, op_cls, op_all])")
  assert scanned.found(text) == []


def _chained_stages(n):
  """One script: `n` scopes each built on the last, each trained alone
  on its own loss in a loop of its own after the last one's loop."""
  built = "".join(f"with tf.variable_scope('s{i}'):\n"
                  f"  h{i + 1} = tf.layers.dense(h{i}, 4)\n"
                  f"loss{i} = tf.reduce_mean(h{i + 1})\n" for i in range(n))
  steps = "".join(
      f"v{i} = [v for v in tf.trainable_variables() "
      f"if v.name.startswith('s{i}')]\n"
      f"op{i} = tf.train.AdamOptimizer(1e-3).minimize(loss{i}, "
      f"var_list=v{i})\n" for i in range(n))
  runs = "".join(f"for _ in range(9):\n  sess.run(op{i})\n"
                 for i in range(n))
  return "import tensorflow as tf\nh0 = tf.zeros([1, 4])\n" + (
      built + steps + runs)


def test_the_stage_rule_reads_each_function_once():
  # Each function's reach is read once and looked up per step; a step
  # is ordered only against a module list of at most `_STEPS` steps, so
  # the rule's work grows with the stages, not with their square: the
  # version without that bound (every step ordered against every other)
  # gave x14.5 here (21,061 calls at 10 stages, 305,536 at 40).
  small, large = (scanned.scan_work(_chained_stages(n), "_later_stage.py")
                  for n in (10, 40))
  assert large / max(small, 1) <= 6, (small, large)


def test_chained_stages_are_each_found():
  # Greedy layer-wise: each later stage trains one scope on a loss read
  # through the earlier ones, which only earlier loops train.
  found = scanned.found(_chained_stages(3))
  assert [line for _, line in found] == [14, 16], found


def test_an_earlier_stage_kept_by_dropping_a_name_is_found():
  # Attacker: the CNN's list leaves `ddpm` out by `not in`; it may train
  # any other scope, and runs in the loop before.
  text = _STAGES.replace(
      "minimize(loss1)", "minimize(loss1, var_list=[v for v in "
      "tf.trainable_variables() if 'ddpm' not in v.name])")
  assert scanned.found(text) == [("var-list-filter", _STAGE_LINE)]


def test_a_later_net_only_compared_with_the_cnn_stays_silent():
  # Look-alike: the later net is built on the targets, not on the CNN;
  # the CNN's output only meets it in the loss (downstream of nothing
  # the net computes from): no stage built on a trained part.
  text = _STAGES.replace("d = tf.layers.conv2d(out, 3",
                         "d = tf.layers.conv2d(y, 3")
  assert scanned.found(text) == []


def test_a_cnn_made_untrainable_whole_stays_silent():
  # Look-alike: the CNN's layers are made `trainable=False` (a freeze
  # written as such, not a stage left out by a list).
  text = _STAGES.replace("padding='same')\n        out",
                         "padding='same', trainable=False)\n        out")
  assert "trainable=False" in text
  assert scanned.found(text) == []
