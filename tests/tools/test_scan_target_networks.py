"""`tfpartial scan` on a target network's soft update in a TF1 graph:
`assign(t, (1 - tau) * t + tau * s)` over `zip(targets, sources)`, whose
sources are the list a train op trains. The target follows the trained
network whole: nothing of it is frozen. Beside it, the same blend
written into the list the step trains: chosen elements of the trained
variables replaced after the step, a freeze."""

import scanned

_TRAINED = """\
    import tensorflow as tf

    class Agent:
      def __init__(self, vf, vf_target, tau, lr):
        self._tau = tau
        self._vf_params = vf.get_params_internal()
        self._vf_target_params = vf_target.get_params_internal()
        loss = tf.reduce_mean(vf.output ** 2)
        self._train_op = tf.train.AdamOptimizer(lr).minimize(
            loss=loss, var_list=self._vf_params)
        self._init_target_ops()

      def _init_target_ops(self):
        source_params = self._vf_params
        target_params = self._vf_target_params
        self._target_ops = [
            tf.assign(target, (1 - self._tau) * target + self._tau * source)
            for target, source in zip(target_params, source_params)]

      def train(self, feed_dict):
        self._sess.run(self._train_op, feed_dict)
        self._sess.run(self._target_ops)
    """


def test_a_target_network_following_the_trained_list_is_silent():
  assert scanned.in_text(_TRAINED) == []


def test_the_same_blend_into_the_trained_list_is_found():
  # The written list is the one the step trains: chosen elements of the
  # trained variables replaced after each step, a freeze.
  code = _TRAINED.replace("var_list=self._vf_params",
                          "var_list=self._vf_target_params")
  assert [f[0] for f in scanned.in_text(code)] == ["write-back"]
