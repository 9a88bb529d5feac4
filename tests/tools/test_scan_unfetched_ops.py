"""`tfpartial scan` on a TF1 script that builds a second train op over
every variable and never fetches it (part twenty-nine's DeepLab-LargeFOV
with attention maps: `train_all = optim.apply_gradients(
optim.compute_gradients(main_loss, tf.trainable_variables()))` beside
the step over the list that drops conv1..conv4, and the loop runs only
the filtered step). In a graph an op nothing fetches never runs: the
filtered step is the one that trains. Beside it, the look-alikes that
must stay silent: the train-all op fetched too, the filtered op never
fetched, a function that fetches no train op at all, eager code (no
session: a step runs at its call), and a train op kept at module level
(another module may import and run it)."""

import pytest

import scanned


_found = scanned.in_project

_SCRIPT = """\
    import tensorflow as tf
    def main():
        main_loss, att_loss = Model().loss(images, labels)
        trainable = tf.trainable_variables()
        final_trainable = trainable
        for f in [u'conv1', u'conv2', u'conv3', u'conv4']:
            final_trainable = [x for x in final_trainable if f not in x.name]
        optim = tf.train.MomentumOptimizer(learning_rate=0.01, momentum=0.9)
        att_optim = tf.train.MomentumOptimizer(0.1, 0.9).minimize(att_loss, var_list=final_trainable)
        grads_and_vars = optim.compute_gradients(main_loss, tf.trainable_variables())
        train_all = optim.apply_gradients(grads_and_vars)
        sess = tf.Session()
        tf.train.Saver(var_list=trainable).restore(sess, ckpt)
        for step in range(1000):
            {run}
    """


@pytest.mark.parametrize("run, expected", [
    ("sess.run([att_optim, att_loss])", [("var-list-filter", "t.py", 7)]),
    # The step over every variable runs too: nothing is kept.
    ("sess.run([att_optim, train_all])", []),
    ("sess.run([train_all, main_loss])", []),
    # No op fetched here (a builder whose caller runs them): both count.
    ("print(step)", []),
])
def test_a_train_op_over_everything_nothing_fetches(run, expected):
  assert _found(_SCRIPT.format(run=run)) == expected


def test_the_pairs_read_elsewhere_keep_the_step():
  # The gradients of every variable are also clipped and shown: the
  # pairs are read beside the unfetched op, so their step stays.
  code = _SCRIPT.replace(
      "train_all = optim.apply_gradients(grads_and_vars)",
      "train_all = optim.apply_gradients(grads_and_vars)\n"
      "        shown = [g for g, _ in grads_and_vars]")
  assert _found(code.format(run="sess.run([att_optim, shown])")) == []


_EAGER = """\
    import tensorflow as tf
    def train(model, data, opt, att_opt):
        head = [v for v in model.trainable_variables if 'conv' not in v.name]
        for x, y in data:
            with tf.GradientTape(persistent=True) as tape:
                main_loss, att_loss = model.losses(x, y)
            att_opt.apply_gradients(zip(tape.gradient(att_loss, head), head))
            done = opt.apply_gradients(zip(tape.gradient(
                main_loss, model.trainable_variables), model.trainable_variables))
    """


def test_an_eager_step_runs_at_its_call():
  assert _found(_EAGER) == []


_MODULE_LEVEL = """\
    import tensorflow as tf
    main_loss, att_loss = Model().loss(images, labels)
    head = [x for x in tf.trainable_variables() if 'conv' not in x.name]
    att_optim = tf.train.AdamOptimizer(0.1).minimize(att_loss, var_list=head)
    train_all = tf.train.AdamOptimizer(0.1).minimize(main_loss)
    sess = tf.Session()
    """


def test_a_module_level_op_may_be_run_from_another_module():
  assert _found({"t.py": _MODULE_LEVEL, "run.py": """\
    import t
    for i in range(10):
        t.sess.run([t.train_all, t.att_optim])
    """}) == []
