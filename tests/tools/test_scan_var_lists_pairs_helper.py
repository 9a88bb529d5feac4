"""`tfpartial scan`'s `var-list-filter` on (gradient, variable) pairs that
pass through a helper of the project whose parameter is named for one
gradient (`deal_gradient(grad)`, `clean(gradients)`), then are cut by
position before `apply_gradients` (part twenty-five's PGML: the meta
update applies only `grads_vars[1:]`, zipped with an accumulator). The
helper returns the pairs it is given: they stay `compute_gradients`'
pairs whatever the parameter's name. Silent twins: the whole list after
the helper, the pair left out trained by a step of its own, a helper
that is handed one gradient."""

import pytest

from tests.tools import scanned

_DELETED = """
import tensorflow as tf


def deal_gradient(grad):
    for i in range(len(grad))[::-1]:
        if grad[i][0] is None:
            del grad[i]
    return grad


def train(model):
    loss = model.get_loss()
    optim = tf.train.MomentumOptimizer(0.01, 0.9)
    grads_vars = optim.compute_gradients(loss, tf.trainable_variables())
    grads_vars = deal_gradient(grads_vars)
    cache = [tf.Variable(tf.zeros_like(t[0]), trainable=False)
             for t in grads_vars[1:]]
    accumulate = tf.group([c.assign_add(gv[0])
                           for c, gv in zip(cache, grads_vars[1:])])
    new_grads_vars = [(c, gv[1]) for c, gv in zip(cache, grads_vars[1:])]
    apply_op = optim.apply_gradients(new_grads_vars)
    return accumulate, apply_op
"""

# Another team: a comprehension keeping the pairs with a gradient, its
# parameter `gradients`; the last two pairs cut off, applied directly.
_KEPT = """
import tensorflow as tf


def with_gradient(gradients):
    return [(g, v) for g, v in gradients if g is not None]


def build(loss, lr):
    opt = tf.train.AdamOptimizer(lr)
    pairs = with_gradient(opt.compute_gradients(loss))
    return opt.apply_gradients(pairs[:-2])
"""


def _lines(code):
  return [line for idiom, line in scanned.in_text(code)
          if idiom == "var-list-filter"]


@pytest.mark.parametrize("code, line", [
    (_DELETED, 21),
    (_KEPT, 12),
], ids=["deleted_in_helper_then_sliced", "kept_in_helper_then_sliced"])
def test_pairs_through_a_helper_then_cut_by_position_are_found(code, line):
  assert _lines(code) == [line]


@pytest.mark.parametrize("code", [
    # The whole list the helper returns: nothing cut.
    _DELETED.replace("grads_vars[1:]", "grads_vars"),
    _KEPT.replace("pairs[:-2]", "pairs"),
    # The pairs left out trained by a step of their own.
    _KEPT.replace(
        "    return opt.apply_gradients(pairs[:-2])",
        "    head = tf.train.GradientDescentOptimizer(lr)\n"
        "    return tf.group(opt.apply_gradients(pairs[:-2]),\n"
        "                    head.apply_gradients(pairs[-2:]))"),
], ids=["whole_after_deleting", "whole_after_keeping", "rest_trained"])
def test_pairs_through_a_helper_kept_whole_or_trained_apart_are_silent(code):
  assert _lines(code) == []


def test_one_gradient_handed_to_the_helper_is_not_a_list_of_pairs():
  code = """
import tensorflow as tf


def clip(grad):
    return tf.clip_by_norm(grad, 5.0)


def build(loss, lr, w):
    opt = tf.train.AdamOptimizer(lr)
    pairs = opt.compute_gradients(loss, [w])
    return opt.apply_gradients([(clip(g), v) for g, v in pairs])
"""
  assert _lines(code) == []



def test_one_gradient_of_the_pairs_sliced_in_the_helper_is_its_rows():
  code = """
import tensorflow as tf


def zero_rows(grad):
    return tf.concat([tf.zeros_like(grad[:2]), grad[2:]], axis=0)


def build(loss, optimizer):
    grads_and_vars = optimizer.compute_gradients(loss)
    out = [(zero_rows(g), v) for g, v in grads_and_vars]
    return optimizer.apply_gradients(out)
"""
  assert _lines(code) == []
