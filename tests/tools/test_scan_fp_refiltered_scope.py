"""`tfpartial scan`'s `var-list-filter` where a class lists the variables
of the scope its network is being built in, then drops the batch norm's
(part thirty-four's neural quantum states: `current_scope =
get_name_scope() + '/network'`, `get_collection(GLOBAL_VARIABLES,
scope=current_scope)`, then `if 'bn' in i.name: pass else:
para_list.append(i)`, the list every gradient takes): the collection is
the whole network, the name test is what leaves variables out, so the
one finding is at the list the test builds, for every step over it.
Each source is synthetic."""

import scanned

_NETWORK = """\
    import tensorflow as tf


    class NQS(object):

        def __init__(self, net, x, using_complex):
            if tf.get_default_graph().get_name_scope() == '':
                current_scope = 'network'
            else:
                current_scope = tf.get_default_graph().get_name_scope() + '/network'
            with tf.variable_scope('network'):
                self.amp = net(x)
            self.para_list_w_bn = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope=current_scope)
            self.para_list = []
            for i in self.para_list_w_bn:
                if 'bn' in i.name:
                    pass
                else:
                    self.para_list.append(i)
            if not using_complex:
                self.grads = tf.gradients(self.amp, self.para_list)
            else:
                self.grads = tf.gradients(tf.real(self.amp), self.para_list)
            self.train_op = opt.apply_gradients(zip(self.grads, self.para_list))
    """


def test_the_name_test_not_the_network_scope_is_shown():
  assert scanned.found(_NETWORK) == [("var-list-filter", 20)]


def test_a_scope_named_by_a_parameter_stays_the_filter():
  # A part chosen by the caller (`scope='head'`): the collection leaves
  # variables out itself, so the finding stays at it.
  text = _NETWORK.replace(
      "    def __init__(self, net, x, using_complex):\n",
      "    def __init__(self, net, x, using_complex, part):\n").replace(
      "scope=current_scope)", "scope=part)")
  assert scanned.found(text) == [("var-list-filter", 13)]
