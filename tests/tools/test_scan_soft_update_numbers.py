"""`tfpartial scan` on a soft update done by a helper (`blend(target,
online, tau)`): its coefficient is a number when it is a literal, a
module's constant or a parameter defaulting to one; a parameter with no
default is whatever a call passes, even where the module binds the same
name to a number elsewhere (a mask passed in chooses elements: found)."""

import scanned

_HELPER = """\
    import numpy as np
    import tensorflow as tf
    {module}

    def blend(target, online{params}):
      target.set_weights(
          (1 - tau) * np.array(target.get_weights())
          + tau * np.array(online.get_weights()))

    def train(model, target, data, opt):
      for x, y in data:
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((y - model(x)) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        blend(target, model{passed})
    """


def _helper(module="", params="", passed=""):
  return _HELPER.format(module=module, params=params, passed=passed)


def test_a_coefficient_defaulting_to_a_number_is_silent():
  assert scanned.in_text(_helper(params=", tau=0.005")) == []


def test_a_module_constant_read_in_the_helper_is_silent():
  assert scanned.in_text(_helper(module="tau = -0.005")) == []


def test_a_parameter_with_no_default_is_not_the_module_s_number():
  # The module's `tau = 0.01` is another name; the call passes a mask.
  code = _helper(module="tau = 0.01\nkeep = np.load('keep.npy')",
                 params=", tau", passed=", keep")
  assert [f[0] for f in scanned.in_text(code)] == ["write-back"]
