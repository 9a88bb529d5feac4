"""`tfpartial scan` (var-list-filter): a policy's list filtered from the
agent's list by one test, the value function's by another from the same
list, and that other list handed to an optimizer made over it
(baselines' `MpiAdam(vf_var_list)`): TRPO's two halves, both trained
(youngwoon/DnC-RL-Tensorflow). Twins that stay findings: the other list
only restored from a checkpoint (a frozen, pretrained value function),
or `MpiAdam` made over the policy's own list while the rest is left
out."""

import pytest

import scanned


def _trpo(handed):
  return f"""\
    class Trainer:
      def build(self, pi, ret):
        all_var_list = pi.get_trainable_variables()
        pol_var_list = [v for v in all_var_list
                        if v.name.split("/")[1].startswith("pol")]
        vf_var_list = [v for v in all_var_list
                       if v.name.split("/")[1].startswith("vf")]
        {handed}
        vf_loss = tf.reduce_mean(tf.square(pi.vpred - ret))
        mean_kl = tf.reduce_mean(pi.kl)
        self._set_from_flat = U.SetFromFlat(pol_var_list)
        klgrads = tf.gradients(mean_kl, pol_var_list)
        self._vf_grads = U.flatgrad(vf_loss, vf_var_list)
        return klgrads
    """


def _found(code):
  return scanned.in_text(code, "var-list-filter")


def test_the_value_functions_list_handed_to_mpi_adam_is_trained():
  assert _found(_trpo("self._vf_adam = MpiAdam(vf_var_list)")) == []


@pytest.mark.parametrize("handed", [
    "tf.train.Saver(vf_var_list).restore(sess, ckpt)",
    "self._pol_adam = MpiAdam(pol_var_list)",
])
def test_the_rest_not_given_an_optimizer_is_left_out(handed):
  assert _found(_trpo(handed)) == [("var-list-filter", 4)]
