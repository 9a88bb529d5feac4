"""`tfpartial scan`'s `var-list-filter` where an ordered test of a loop's
counter sets flags, and the flags choose which step runs (issue 30, part
thirty-five's AttSets): `if epoch <= 30: single = True; multi = False
else: single = False; multi = True`, then `if single: run(base_op)` and
`if multi: run(att_op)`. Each step trains its list alone for its part of
the run, as when the counter test chooses the ops itself; flags set by
a parity test (`step % 2 == 0`) or by a configuration alternate or stay
fixed, and choose no part of the run."""

import scanned

# A multi-view reconstructor: a base network `r2n/l*` and an attention
# module `r2n/att` over its features, one loss; `TEST` chooses the flags.
_STAGED = """
import tensorflow as tf


def fc(x, out_d, name):
    w = tf.compat.v1.get_variable(name + '_w', [int(x.shape[1]), out_d])
    b = tf.compat.v1.get_variable(name + '_b', [out_d])
    return tf.matmul(x, w) + b


def attend(x, name):
    weights = tf.nn.softmax(fc(x, 8, name=name + '_1st'), 0)
    return tf.reduce_sum(x * weights, 0, keepdims=True)


class Net(object):
    def base(self, x):
        h = fc(x, 8, name='l1')
        a = attend(h, name='att')
        return fc(a, 1, name='lfc2')

    def build(self, x, y):
        with tf.compat.v1.variable_scope('r2n'):
            out = self.base(x)
        self.loss = tf.reduce_mean(tf.square(out - y))
        base_var = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('r2n/l')]
        att_var = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('r2n/att')]
        self.base_optim = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(self.loss, var_list=base_var)
        self.att_optim = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(self.loss, var_list=att_var)

    def train(self, batches):
        for epoch in range(50):
            for i in range(100):
                if TEST:
                    single = True
                    multi = False
                else:
                    single = False
                    multi = True
                if single:
                    self.sess.run(self.base_optim)
                if multi:
                    self.sess.run([self.loss, self.att_optim])
"""


def _line(code, start):
  return next(number for number, line in enumerate(code.splitlines(), 1)
              if line.lstrip().startswith(start))


def _stages(code):
  """Both lists: each trains alone for its part of the run, the other's
  layers fixed meanwhile (as a counter test choosing the ops finds)."""
  return [("var-list-filter", _line(code, start))
          for start in ("base_var = ", "att_var = ")]


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def test_flags_set_by_a_counter_test_choose_each_stage():
  code = _STAGED.replace("TEST", "epoch <= 30")
  assert _found(code) == _stages(code)


def test_flags_set_the_other_way_round_choose_each_stage():
  code = _STAGED.replace("TEST", "epoch > 30").replace(
      "single = True", "single = X").replace(
          "single = False", "single = True").replace(
              "single = X", "single = False").replace(
                  "multi = False", "multi = X").replace(
                      "multi = True", "multi = False").replace(
                          "multi = X", "multi = True")
  assert _found(code) == _stages(code)


def test_flags_alternating_by_parity_are_halves_trained_side_by_side():
  # Both halves train the model, a step each.
  code = _STAGED.replace("TEST", "i % 2 == 0")
  assert _found(code) == []


def test_flags_set_by_a_configuration_choose_no_stage():
  code = _STAGED.replace("TEST", "self.single_view")
  assert _found(code) == []


def test_flags_both_on_in_one_arm_choose_no_stage():
  # Joint training from epoch 31: both lists train together then.
  code = _STAGED.replace("TEST", "epoch <= 30").replace(
      "single = False\n", "single = True\n")
  assert _found(code) == []


def test_a_gan_with_flags_from_a_counter_trains_both_halves():
  # Generator and discriminator, each with its own loss, the flags
  # chosen by a warm-up of the discriminator: a GAN's halves.
  code = _STAGED.replace("TEST", "epoch <= 30").replace(
      "minimize(self.loss, var_list=att_var)",
      "minimize(-self.loss, var_list=att_var)")
  assert _found(code) == []


def test_a_counter_test_choosing_the_ops_itself_is_the_same():
  start = _STAGED.index("                if TEST:")
  code = _STAGED[:start] + (
      "                if epoch <= 30:\n"
      "                    self.sess.run(self.base_optim)\n"
      "                else:\n"
      "                    self.sess.run([self.loss, self.att_optim])\n")
  assert _found(code) == _stages(code)
