"""`tfpartial scan` on code that looks like a hand-made freeze and is
not, in the families the negatives of parts twelve and thirteen showed:
learning-rate multipliers read by a variable's name, weight decay over
the weights but not the biases, a filter only saved or logged, a
per-tower gradient average, an adversarial perturbation trained alone,
a target network's Polyak average, a mask used in a loss. Beside them
the freezes they resemble stay found. Synthetic sources in the shape of
real code."""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _found(text):
  sources = [_files.Source("t.py", textwrap.dedent(text))]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.line) for f in findings]


# Each gradient scaled by its variable's learning-rate multiplier, if it
# has one; every pair is kept.
_SCALED = """\
    import tensorflow as tf

    LR_MULT = {{'conv1/weights:0': 0.1}}

    def scaled(grads_and_vars):
      out = []
      for grad, var in grads_and_vars:
        scale = LR_MULT.get(var.name)
        if {test}:
          grad *= scale
        {append}
      return out

    def train(loss, lr):
      opt = tf.train.MomentumOptimizer(lr, 0.9)
      grads = opt.compute_gradients(loss)
      return opt.apply_gradients(scaled(grads))
    """

_KEPT = "out.append((grad, var))"

# Each variable's gradients of the towers averaged, a mask choosing the
# towers (batches) that count: whole towers, not elements of a variable.
_TOWERS = """\
    import tensorflow as tf

    def average_gradients(tower_grads, mask=None):
      average_grads = []
      for grad_and_vars in zip(*tower_grads):
        grads = []
        for g, _ in grad_and_vars:
          grads.append(tf.expand_dims(g, 0))
        grad = {stacked}
        if mask is not None:
          grad = tf.boolean_mask(grad, tf.cast(mask, tf.bool), axis=0)
        grad = tf.reduce_mean(grad, 0)
        average_grads.append((grad, grad_and_vars[0][1]))
      return average_grads

    def train(opt, tower_losses, mask):
      tower_grads = [opt.compute_gradients(l) for l in tower_losses]
      return opt.apply_gradients(average_gradients(tower_grads, mask))
    """

POSITIVE = {
    # One gradient's rows dropped by a mask before the apply.
    "a gradient's own rows dropped by a boolean mask": (
        _TOWERS.format(stacked="grad_and_vars[0][0]"),
        [("grads-mask", 11)]),
    # The pair appended only where the name is chosen: a filter.
    "pairs appended only where the name is chosen": (
        _SCALED.format(test="'conv1' in var.name", append="  " + _KEPT),
        [("var-list-filter", 17)]),
}

NEGATIVE = {
    "towers' gradients concatenated, towers chosen by a mask":
        _TOWERS.format(stacked="tf.concat(grads, 0)"),
    "towers' gradients stacked, towers chosen by a mask": _TOWERS.format(
        stacked="tf.stack(grads)"),
    "a learning-rate multiplier tested with != None": _SCALED.format(
        test="scale != None", append=_KEPT),
    "a learning-rate multiplier tested with is not None": _SCALED.format(
        test="scale is not None", append=_KEPT),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_the_freeze_beside_a_look_alike_is_found(name):
  source, expected = POSITIVE[name]
  assert _found(source) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_stays_silent(name):
  assert _found(NEGATIVE[name]) == []
