"""`tfpartial scan`'s `var-list-filter` on a filtered step named by
`name=`, fetched elsewhere by that name (`get_operation_by_name(
'fc_train_op')`) and run alone in one arm of a count's test while the
other arm runs another op (part twenty-five's DeepPose: the head alone
while `step < fix_conv_iter`, then the whole). Silent twins: steps taking
turns by parity (a GAN's halves), the op run on every turn or in both
arms, another op's name, a named step over every variable."""

import pytest

from tests.tools import scanned


# Part twenty-five's DeepPose: the head's step, named, fetched by its
# op's name and run alone while a count is below a threshold.
_NET = """
import tensorflow as tf


def training_op(loss_op, lr):
    conv_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'conv')
    fc_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'fc')
    grads = tf.gradients(loss_op, conv_vars + fc_vars)
    conv_op = tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
        zip(grads[:len(conv_vars)], conv_vars), name='conv_train_op')
    fc_op = tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
        zip(grads[len(conv_vars):], fc_vars), name='fc_train_op')
    return tf.group(conv_op, fc_op)
"""

_LOOP = """
def train_loop(net, train_op, fix_conv_iter, n):
    fc_train_op = net.graph.get_operation_by_name('fc_train_op')
    for step in range(n):
        if step < fix_conv_iter:
            cur_train_op = fc_train_op
        else:
            cur_train_op = train_op
        net.sess.run(cur_train_op)
"""


def _in_run(loop):
  return [(path, line) for idiom, path, line
          in scanned.in_project({"net.py": _NET, "train.py": loop})
          if idiom == "var-list-filter"]


@pytest.mark.parametrize("loop, line", [
    (_LOOP, 6),
    # Another team: a conditional expression, the count on the right.
    ("""
def run(sess, train_op, warmup, n):
    for it in range(n):
        op = (sess.graph.get_operation_by_name('fc_train_op')
              if warmup > it else train_op)
        sess.run(op)
""", 4),
    # The fetch itself in the arm, the whole step in the first arm.
    ("""
def run(sess, graph, train_op, frozen_epochs, epochs):
    for epoch in range(epochs):
        if epoch >= frozen_epochs:
            sess.run(train_op)
        else:
            sess.run(graph.get_operation_by_name('fc_train_op'))
""", 7),
], ids=["if_assigned", "conditional_expression", "fetched_in_the_arm"])
def test_a_named_step_fetched_alone_for_the_first_steps_is_found(loop, line):
  assert _in_run(loop) == [("train.py", line)]


@pytest.mark.parametrize("loop", [
    # Taking turns by parity (a GAN's halves).
    _LOOP.replace("step < fix_conv_iter", "step % 2 == 0"),
    # Run on every turn with the rest.
    """
def train_loop(net, train_op, n):
    fc_train_op = net.graph.get_operation_by_name('fc_train_op')
    for step in range(n):
        net.sess.run([fc_train_op, train_op])
""",
    # Both arms run it.
    _LOOP.replace("cur_train_op = train_op",
                  "cur_train_op = [train_op, fc_train_op]"),
    # Another op's name.
    _LOOP.replace("'fc_train_op'", "'train_op'"),
], ids=["parity", "every_turn", "both_arms", "other_name"])
def test_a_named_step_run_with_the_rest_or_by_turns_is_silent(loop):
  assert _in_run(loop) == []


def test_a_whole_named_step_fetched_alone_is_silent():
  net = _NET.replace(
      "zip(grads[len(conv_vars):], fc_vars), name='fc_train_op')",
      "zip(grads, tf.trainable_variables()), name='fc_train_op')")
  assert [line for idiom, path, line in scanned.in_project(
      {"net.py": net, "train.py": _LOOP})
          if idiom == "var-list-filter" and path == "train.py"] == []
