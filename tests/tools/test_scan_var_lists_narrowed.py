"""`tfpartial scan`'s `var-list-filter` on a helper that takes the
variables of the network its caller names and, under an option, narrows
them (`train_vars = tf.trainable_variables(scope=scope)`, then `train_vars
= [v for v in train_vars if v not in exclude]` for the variables a
pretrained model restored): the finding is at the narrowing, the helper's
own choice, not at the per-network list every caller trains (an actor's,
a critic's, an agent's). A helper's literal scope stays the choice.
Synthetic sources in the shape of real code (part thirteen)."""

import pytest

import scanned

_found = scanned.found

_HELPER = """\
    import tensorflow as tf


    class Model:
        def __init__(self):
            self.skip_re = None

        def exclude_train_vars(self, regex):
            self.skip_re = regex

        def _trainable_variables(self, scope):
            train_vars = tf.trainable_variables(scope={scope})
            if self.skip_re is not None:
                exclude = [v for v in train_vars if self.skip_re.search(v.name)]
                {narrowed}
            return train_vars


    class DQN(Model):
        def build(self, x, optimizer):
            with tf.variable_scope("agent_net"):
                loss = tf.reduce_sum(tf.layers.dense(x, 1))
            train_vars = self._trainable_variables(scope="agent_net")
            self.train_op = self._build_train_op(optimizer, loss, train_vars)

        def _build_train_op(self, optimizer, loss, agent_vars):
            grads = self._compute_gradients(optimizer, loss, agent_vars)
            return optimizer.apply_gradients(grads)

        def _compute_gradients(self, optimizer, loss, agent_vars):
            return optimizer.compute_gradients(loss, var_list=agent_vars)


    class Agent:
        def __init__(self, model, load_regex):
            self.model = model
            self.model.exclude_train_vars(re.compile(load_regex))
    """


@pytest.mark.parametrize("source, expected", [
    (_HELPER.format(scope="scope", narrowed=(
        "train_vars = [v for v in train_vars if v not in exclude]")),
     [("var-list-filter", 15)]),
    (_HELPER.format(scope="'agent_net/head'", narrowed=(
        "train_vars = [v for v in train_vars if v not in exclude]")),
     [("var-list-filter", 12)]),
], ids=["narrowed-by-an-option", "the-helper-s-own-scope"])
def test_a_narrowed_network_list(source, expected):
  assert _found(source) == expected
