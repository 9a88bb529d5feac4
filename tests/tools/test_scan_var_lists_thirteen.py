"""`tfpartial scan`'s `var-list-filter` on lists that leave variables out
in ways part thirteen's real code showed: every variable but one the
model holds, by identity (`v is not self.scales`); `filter` with a
helper, passed by name, that tests names; the items of a list at
indices held in another; one filter in both arms of an `if` is shown
at the first. The look-alikes stay silent:
the test is a guard (`v is not None`) or compares with what is not a
variable. Synthetic sources in the shape of real code."""

import pytest
import scanned


_found = scanned.found


_ONE_LEFT_OUT = """\
    class Model:
      def __init__(self, x):
        self.w = tf.get_variable('w', [8, 4])
        self.scales = {scales}
        self.loss = tf.reduce_sum(tf.matmul(x, self.w) * self.scales)

      def build(self):
        adam = tf.train.AdamOptimizer(1e-3)
        self.train_op = adam.minimize(self.loss)
        rest = [v for v in tf.trainable_variables() if v is not self.scales]
        self.train_rest = adam.minimize(self.loss, var_list=rest)
    """

_KEPT_BY_A_HELPER = """\
    class Model(object):
      def remove_variables(self, variables, depth=50):
        remove_list = ['resnet%d/conv2d/' % depth]
        def _is_kept(variable):
          return {test}
        return list(filter(_is_kept, variables))

      def train_op(self, features, labels):
        loss = self.get_loss(features, labels)
        var_list = self.remove_variables(tf.trainable_variables())
        optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
        grads_and_vars = optimizer.compute_gradients(loss, var_list)
        return optimizer.apply_gradients(grads_and_vars)
    """

_AT_INDICES = """\
    class Tuner:
      def tune(self, model, data):
        head_vars = [model.trainable_variables[j] for j in {indices}]
        opt = tf.keras.optimizers.SGD(0.01)
        for x, y in data:
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
          grads = tape.gradient(loss, head_vars)
          opt.apply_gradients(zip(grads, head_vars))
    """

_EACH_ARM = """\
    def train(loss, opt, step):
      with_clip = True
      if with_clip:
        tvars = [v for v in tf.trainable_variables() if 'res4' in v.name]
        grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), 10.0)
        train_op = opt.apply_gradients(zip(grads, tvars), global_step=step)
      {other}
        tvars = [v for v in tf.trainable_variables() if 'res4' in v.name]
        train_op = opt.minimize(loss, global_step=step, var_list=tvars)
      return train_op
    """

POSITIVE = {
    # A training phase that holds a prior's trainable scales fixed.
    "every variable but one, by identity": (
        _ONE_LEFT_OUT.format(scales="tf.Variable(tf.fill([4], -2.))"),
        [("var-list-filter", 10)]),
    # Mask R-CNN's stem left out by a predicate defined beside `filter`.
    "a filter by a named helper testing names": (
        _KEPT_BY_A_HELPER.format(
            test="all(s not in variable.name for s in remove_list)"),
        [("var-list-filter", 10)]),
    # A backdoor defense tunes only the head, picked by stored indices.
    "the items at indices held in another list": (
        _AT_INDICES.format(indices="self.head_indices"),
        [("var-list-filter", 3)]),
    # One filter written in both arms of an `if`: shown at the first
    # (the arm the hard-coded flag takes), not at the dead `else`.
    "the same filter in both arms of an if": (
        _EACH_ARM.format(other="else:"), [("var-list-filter", 4)]),
    # Written again after the first step (a list rebuilt for a second
    # phase): shown at the rebuilt one.
    "the same filter rebuilt after the step": (
        _EACH_ARM.format(other="if True:"), [("var-list-filter", 8)]),
}

NEGATIVE = {
    # `scales` is a number: the test leaves no variable out.
    "compared with what is not a variable": _ONE_LEFT_OUT.format(
        scales="2.0"),
    "a guard against None": _ONE_LEFT_OUT.format(
        scales="tf.Variable(tf.fill([4], -2.))").replace(
            "v is not self.scales", "v is not None"),
    "a filter by a named helper that is a guard": _KEPT_BY_A_HELPER.format(
        test="variable is not None"),
    "every index of the list": _AT_INDICES.format(
        indices="range(len(model.trainable_variables))"),
    # MAML's fast weights: a dict of parameters read at each of its keys.
    "a dict read at each of its keys": """\
        class Policy:
          def __init__(self):
            self.all_params = {'W0': tf.Variable(tf.zeros([4, 4])),
                               'b0': tf.Variable(tf.zeros([4]))}

          def updated(self, surr_obj, params_dict=None):
            old = params_dict
            if old == None:
              old = self.all_params
            keys = self.all_params.keys()
            grads = dict(zip(keys, tf.gradients(surr_obj,
                                                [old[key] for key in keys])))
            return dict(zip(keys, [old[k] - 0.1 * grads[k] for k in keys]))
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_list_leaving_out_what_the_loss_reaches(name):
  source, expected = POSITIVE[name]
  assert _found(source) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_guard_or_a_whole_list_stays_silent(name):
  assert _found(NEGATIVE[name]) == []
