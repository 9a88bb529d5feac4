"""`tfpartial scan` reads a warm-up followed by alternation (`if epoch >=
100 and step % 2 == 0: train_op = train_all else: train_op = train_sr`)
as two phases in time: during the warm-up only the `else` arm's op runs,
so a filtered step there trains its list alone for a part of the run and
is found; the arm that only alternates after the warm-up never runs
alone, so a filtered step there is silent, and so is alternation alone
(`step % 2 == 0`: a GAN's halves) or after a warm-up of one pass at most
(`epoch > 0`). Synthetic sources in the shape of
real code."""

import pytest
import scanned

_found = scanned.found

_LOOP = '''
import tensorflow as tf

def train(loss_sr, loss_all, epochs, steps):
  vars_all = tf.trainable_variables()
  vars_sr = [v for v in vars_all if 'srmodel' in v.name]
  train_all = tf.train.AdamOptimizer(1e-3).minimize(loss_all, var_list=vars_all)
  train_sr = tf.train.AdamOptimizer(1e-3).minimize(loss_sr, var_list=vars_sr)
  sess = tf.Session()
  for epoch in range(epochs):
    for step in range(steps):
      if {test}:
        train_op = {body}
      else:
        train_op = {orelse}
      sess.run(train_op)
'''


@pytest.mark.parametrize("test, body, orelse, expected", [
    # The filtered step runs alone through the warm-up: found.
    ("epoch >= 100 and step % 2 == 0", "train_all", "train_sr",
     [("var-list-filter", 6)]),
    ("step % 2 == 0 and epoch >= 100", "train_all", "train_sr",
     [("var-list-filter", 6)]),
    # The filtered step alternates during the warm-up, then the whole
    # model trains alone: the filtered step never runs alone.
    ("epoch < 100 and step % 2 == 0", "train_sr", "train_all", []),
    # The filtered step only alternates after the warm-up: silent.
    ("epoch >= 100 and step % 2 == 0", "train_sr", "train_all", []),
    # Alternation alone (a GAN's halves): silent, as before.
    ("step % 2 == 0", "train_sr", "train_all", []),
    ("step % 2 == 0", "train_all", "train_sr", []),
    # A warm-up of one pass at most (mend40's par2, par3): alternation
    # from the start, silent.
    ("epoch > 0 and step % 2 == 0", "train_all", "train_sr", []),
    ("step >= 0 and step % 2 == 0", "train_all", "train_sr", []),
    ("epoch >= warmup and step % 2 == 0", "train_all", "train_sr",
     [("var-list-filter", 6)]),
    # A plain warm-up: found, as before.
    ("epoch < 100", "train_sr", "train_all", [("var-list-filter", 6)]),
])
def test_a_warm_up_then_alternation_is_two_phases(test, body, orelse,
                                                  expected):
  assert _found(_LOOP.format(test=test, body=body, orelse=orelse)) == (
      expected)
