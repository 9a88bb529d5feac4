"""`tfpartial scan` stays silent on a weight decay summed in place under
a name test (`if 'bias' not in v.name: loss += wd * tf.nn.l2_loss(v)`)
before the full list's `compute_gradients`/`apply_gradients`: a loss's
term, a number, not a list of the variables to train (part 26's skim-RNN
question answering). The twin that adds the variables themselves under
the same test, and trains that list, is still found. Synthetic sources
in the shape of real code."""

import pytest
import scanned

_found = scanned.found


# A model class: the loss adds an L2 term for every variable but the
# biases, then the step applies the gradients of every variable.
_DECAYED = """\
    import tensorflow as tf

    class Model(object):
      def build(self, output, labels):
        self.loss = self.add_loss_op(output, labels)
        self.train_op = self.add_training_op(self.loss)

      def add_loss_op(self, output, labels):
        loss = tf.reduce_sum(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                logits=output, labels=labels))
        {decay}
        return loss

      def add_training_op(self, loss):
        opt = tf.train.AdamOptimizer(learning_rate=0.001)
        gvs = opt.compute_gradients(loss{var_list})
        gvs = [(tf.clip_by_norm(g, 5.0), v) for g, v in gvs]
        return opt.apply_gradients(gvs)
    """

_TERM = """for v in tf.trainable_variables():
          if not 'bias' in v.name.lower():
            loss += {term}"""

_CHOSEN = """self.chosen = []
        for v in tf.trainable_variables():
          if not 'bias' in v.name.lower():
            self.chosen += [v]"""


@pytest.mark.parametrize("source, expected", [
    (_DECAYED.format(decay=_TERM.format(
        term="0.0001 * tf.nn.l2_loss(v)"), var_list=""), []),
    (_DECAYED.format(decay=_TERM.format(
        term="tf.nn.l2_loss(v)"), var_list=""), []),
    (_DECAYED.format(decay=_TERM.format(
        term="tf.reduce_sum(tf.square(v)) * 0.5 / 64.0"), var_list=""), []),
    # The variables themselves added under the test, and trained: found.
    (_DECAYED.format(decay=_CHOSEN, var_list=", var_list=self.chosen"),
     [("var-list-filter", 15)]),
], ids=["scaled_l2_term", "l2_term", "square_sum_term", "variables_chosen"])
def test_weight_decay_summed_by_name_is_not_a_list(source, expected):
  assert _found(source) == expected
