"""`tfpartial scan` reads a scope joined with a `'/'` of its own
(`get_name_scope() + '/' + 'network'`, `'{}/{}'.format(scope,
'network')`, `f"{scope}/network"`) as it reads the plain
`get_name_scope() + '/network'`: the whole network being built, so the
one finding stays at the name test that drops the batch norm; a joined
scope that names a part (`'decoder'`) is a part, as its plain form is.
Synthetic sources in the shape of part thirty-four's neural quantum
states."""

import pytest
import scanned

_NETWORK = """\
    import tensorflow as tf


    class NQS(object):

        def __init__(self, net, x, using_complex):
            if tf.get_default_graph().get_name_scope() == '':
                current_scope = 'network'
            else:
                current_scope = {joined}
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
            self.grads = tf.gradients(self.amp, self.para_list)
            self.train_op = opt.apply_gradients(zip(self.grads, self.para_list))
    """

_NOW = "tf.get_default_graph().get_name_scope()"


def _found(joined):
  return scanned.found(_NETWORK.format(joined=joined))


@pytest.mark.parametrize("joined", [
    f"{_NOW} + '/network'",  # The plain form.
    f"{_NOW} + '/' + 'network'",
    f"'{{}}/{{}}'.format({_NOW}, 'network')",
    f"'{{}}/network'.format({_NOW})",
    f"f'{{{_NOW}}}/network'",
    f"'/'.join([{_NOW}, 'network'])",
])
def test_a_joined_network_scope_reads_as_the_plain_one(joined):
  assert _found(joined) == [("var-list-filter", 20)]


@pytest.mark.parametrize("joined", [
    f"{_NOW} + '/decoder'",  # The plain form of a part.
    f"{_NOW} + '/' + 'decoder'",
    f"'{{}}/{{}}'.format({_NOW}, 'decoder')",
    f"f'{{{_NOW}}}/decoder'",
    f"'/'.join([{_NOW}, 'decoder'])",
])
def test_a_joined_part_scope_reads_as_the_plain_one(joined):
  assert _found(joined) == _found(f"{_NOW} + '/decoder'")
  assert _found(joined) != [("var-list-filter", 20)]
