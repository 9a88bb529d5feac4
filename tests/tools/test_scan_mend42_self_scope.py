"""`tfpartial scan` still finds a head-only A3C worker step when its
network class names most layers under its scope attribute
(`fully_connected(x, n, scope=self._name_scope + '/fc1')`) but one layer
is made outside that scope: by a layer function with its own fixed scope
(`linear(fc1, n, scope='fc_pi')`), in another method of the class, or
after the attribute is rebound (the collection then holds the head
only). The network that names every layer under its one attribute stays
silent. Synthetic sources in the shape of deep_rl_vizdoom (36c)."""

import pytest
import scanned

from test_scan_a3c_guards import _LEARNER  # The same learner.


_NETS = """\
    import tensorflow as tf
    from tensorflow.contrib.layers import fully_connected, linear

    class ACNet(object):
      def __init__(self, actions_num, thread="global"):
        self._name_scope = "net_" + str(thread)
        self.state = tf.placeholder(tf.float32, [None, 8], name="state")
        fc1 = fully_connected(self.state, num_outputs=64,
                              scope=self._name_scope + "/fc1")
        {head}
        v = fully_connected(fc1, num_outputs=1,
                            scope=self._name_scope + "/fc_value")
        self.loss = -tf.reduce_sum(tf.log(pi)) + tf.reduce_sum(v ** 2)
        self.params = tf.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES, scope=self._name_scope)

      def _policy(self, x, n):
        return fully_connected(x, num_outputs=n, scope={policy_scope})

      def get_params(self):
        return self.params

      def prepare_sync_op(self, global_network):
        sync = [d.assign(s) for d, s in zip(
            self.get_params(), global_network.get_params())]
        self.sync = tf.group(*sync, name="sync")
    """



_UNDER = 'self._name_scope + "/fc_pi"'


@pytest.mark.parametrize("head, policy_scope, expected", [
    # Every layer under the attribute: the whole network, silent.
    ('pi = fully_connected(fc1, num_outputs=actions_num, '
     'scope=self._name_scope + "/fc_pi")', _UNDER, []),
    # The head made in another method, under the attribute too: silent.
    ('pi = self._policy(fc1, actions_num)', _UNDER, []),
    # A layer function the scanner does not list, with its own scope.
    ('pi = linear(fc1, num_outputs=actions_num, scope="fc_pi")', _UNDER,
     [("var-list-filter", "networks.py", 14)]),
    # The same layer with no scope at all: made at the root.
    ('pi = linear(fc1, num_outputs=actions_num)', _UNDER,
     [("var-list-filter", "networks.py", 14)]),
    # A layer with a fixed scope made in another method.
    ('pi = self._policy(fc1, actions_num)', '"fc_pi"',
     [("var-list-filter", "networks.py", 14)]),
    # The attribute rebound after the body: the collection holds the
    # head's scope only.
    ('self._name_scope = "head_" + str(thread); pi = fully_connected('
     'fc1, num_outputs=actions_num, scope=self._name_scope + "/fc_pi")', _UNDER,
     [("var-list-filter", "networks.py", 14)]),
], ids=["every_layer_under_the_attribute", "head_in_another_method",
        "unlisted_layer_fixed_scope",
        "unlisted_layer_no_scope", "fixed_scope_in_another_method",
        "attribute_rebound"])
def test_layer_outside_the_named_scope_is_found(head, policy_scope,
                                                expected):
  files = {"networks.py": _NETS.format(head=head, policy_scope=policy_scope),
           "learner.py": _LEARNER}
  assert scanned.in_project(files) == expected
