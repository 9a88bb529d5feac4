"""`tfpartial scan`'s `var-list-filter` where a step takes `[params[k]
for k in keys]` and a loop sends the keys by key tests joined with `and`
(part sixteen's meta-RL adaptation: the keys without 'conv' and not a
step size adapt, the convolutional encoder stays). Each source is
synthetic."""

import scanned

_JOINED = """\
    import tensorflow as tf


    class VPG(object):

      def optimize(self, surr_obj, step_size):
        all_keys = list(self.policy.all_params.keys())
        update_keys, fixed_keys = [], []
        for key in all_keys:
          if 'conv' not in key and 'stepsize' not in key:
            update_keys.append(key)
          else:
            fixed_keys.append(key)
        grads = tf.gradients(
            surr_obj, [self.policy.all_params[key] for key in update_keys])
        return dict(zip(update_keys, grads))
    """


def test_keys_kept_by_joined_tests_are_found():
  assert scanned.found(_JOINED) == [("var-list-filter", 15)]


def test_the_keys_sent_elsewhere_trained_too_stay_silent():
  text = _JOINED.replace(
      "        return dict(",
      "        rest = tf.gradients(surr_obj, [self.policy.all_params[key]"
      " for key in fixed_keys])\n        return dict(")
  assert scanned.found(text) == []
