"""`tfpartial scan`'s `var-list-filter` on a list that a set's method
takes the frozen layers out of (part nineteen's config-driven freeze:
`every.symmetric_difference(frozen)` where `frozen` is drawn from
`every` by name, the same as `every - set(frozen)`); beside a twin whose
frozen list names nothing, silent."""

import pytest

from tests.tools import scanned

_FREEZE = """
import tensorflow as tf

def build_train_op(loss, args, step):
    layers = eval(args.get('Training', 'LAYERS_TO_FREEZE'))
    optim = tf.train.AdamOptimizer(1e-3)
    if len(layers) > 0:
        freeze_vars = []
        all_vars = set([var for var in tf.trainable_variables()])
        for layer in layers:
            freeze_vars += [v for v in all_vars if layer in v.name]
        train_vars = list(all_vars.symmetric_difference(freeze_vars))
        train_op = optim.minimize(loss, var_list=train_vars)
    else:
        train_op = optim.minimize(loss, global_step=step)
    return train_op
"""


@pytest.mark.parametrize("method", ["symmetric_difference", "difference"])
def test_a_set_method_taking_named_layers_out_is_found(method):
  code = _FREEZE.replace("symmetric_difference", method)
  assert scanned.found(code) == [("var-list-filter", 11)]


def test_a_set_method_taking_nothing_named_out_is_silent():
  code = _FREEZE.replace(
      "freeze_vars += [v for v in all_vars if layer in v.name]",
      "freeze_vars += []")
  assert scanned.found(code) == []
