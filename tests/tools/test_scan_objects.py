"""`tfpartial scan` on freezes whose list or mask an object keeps: a
wrapper whose constructor stores the `var_list` its `minimize` (or an
optimizer wrapper's `compute_gradients`, when its caller passes none)
trains; a hook object the step holds that masks the gradients it is
given, or puts saved values back after the step. The look-alikes stay
silent: the same wrapper built with every variable, a hook that scales
or logs, another network blended in. Synthetic sources in the shape of
real code."""

import pytest
import scanned


_TRAINER = """\
    class PartialTrainer(object):
      def __init__(self, optimizer, var_list):
        self.optimizer = optimizer
        self.var_list = var_list

      def minimize(self, loss):
        return self.optimizer.minimize(loss, var_list=self.var_list)

    def build(loss):
      chosen = {chosen}
      trainer = PartialTrainer(tf.train.AdamOptimizer(1e-3), chosen)
      return trainer.minimize(loss)
    """

_WRAPPER = """\
    class FilteredOptimizer(tf.train.Optimizer):
      def __init__(self, opt, var_list=None):
        super(FilteredOptimizer, self).__init__(False, "Filtered")
        self._opt = opt
        self._var_list = var_list

      def compute_gradients(self, loss, var_list=None, **kwargs):
        if not var_list:
          var_list = self._var_list
        return self._opt.compute_gradients(loss, var_list=var_list, **kwargs)

      def apply_gradients(self, grads_and_vars, global_step=None):
        return self._opt.apply_gradients(grads_and_vars, global_step)

    def train(loss, filters):
      var_list = {chosen}
      opt = FilteredOptimizer(tf.train.MomentumOptimizer(0.1, 0.9),
                              var_list=var_list)
      return opt.apply_gradients(opt.compute_gradients(loss))
    """

_SUBSET = """\
    class SubsetOptimizer(object):
      def __init__(self, optimizer, trainable_names):
        self.optimizer = optimizer
        self.trainable_names = set(trainable_names)

      def apply_gradients(self, grads_and_vars):
        kept = [(g, v) for g, v in grads_and_vars if {chosen}]
        return self.optimizer.apply_gradients(kept)

    def train(model, x, y):
      opt = SubsetOptimizer(tf.keras.optimizers.Adam(), ["head/kernel:0"])
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply_gradients(zip(grads, model.trainable_variables))
    """

_FILTERED = ("[v for v in tf.trainable_variables() "
             "if any(s in v.name for s in filters)]")


_found = scanned.found


@pytest.mark.parametrize("source, chosen, expected", [
    (_TRAINER, _FILTERED, [("var-list-filter", 10)]),
    (_WRAPPER, _FILTERED, [("var-list-filter", 16)]),
    (_SUBSET, "v.name in self.trainable_names", [("var-list-filter", 7)]),
    # The look-alikes: the same objects kept every variable.
    (_TRAINER, "tf.trainable_variables()", []),
    (_WRAPPER, "tf.trainable_variables()", []),
    # Only the pairs with no gradient dropped.
    (_SUBSET, "g is not None", []),
], ids=["trainer", "wrapper", "subset", "trainer-all", "wrapper-all",
        "subset-none"])
def test_a_list_kept_by_the_object_that_trains_it(source, chosen, expected):
  assert _found(source.format(chosen=chosen)) == expected


_HOOK = """\
    class PackNetHook(object):
      def __init__(self, model):
        self.masks = [tf.Variable(tf.ones_like(v), trainable=False)
                      for v in model.trainable_variables]
        self.scale = 0.5

      def adjust_gradients(self, grads_by_layer):
        return [{adjusted} for g, m in zip(grads_by_layer, self.masks)]

    class Agent(object):
      def __init__(self, model, hook):
        self.model = model
        self.hook = hook
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

      def step(self, x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        grads = self.hook.adjust_gradients(grads)
        self.optimizer.apply_gradients(
            zip(grads, self.model.trainable_variables))
    """


@pytest.mark.parametrize("adjusted, expected", [
    ("g * m", [("grads-mask", 8)]),
    ("tf.multiply(g, m)", [("grads-mask", 8)]),
    # The look-alikes: a hook that scales the gradients, or logs them.
    ("g * self.scale", []),
    ("tf.identity(g)", []),
])
def test_gradients_masked_by_a_hook_the_step_holds(adjusted, expected):
  assert _found(_HOOK.format(adjusted=adjusted)) == expected


_RESTORE = """\
    class PackNetHook(object):
      def __init__(self, model):
        self.masks = [tf.Variable(tf.ones_like(v), trainable=False)
                      for v in model.trainable_variables]
        self.frozen = [tf.Variable(tf.zeros_like(v), trainable={trainable})
                       for v in model.trainable_variables]

      def after_step(self, model):
        for v, m, f in zip(model.trainable_variables, self.masks,
                           self.frozen):
          {write}

    class Agent(object):
      def __init__(self, model, hook):
        self.model = model
        self.hook = hook
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

      def step(self, x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(self.model(x) - y))
        variables = self.model.trainable_variables
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        self.hook.after_step(self.model)
    """


@pytest.mark.parametrize("trainable, write, expected", [
    ("False", "v.assign(v * m + f)", [("shadow-variable", 11)]),
    ("False", "v.assign(f + m * v)", [("shadow-variable", 11)]),
    # The look-alikes: another network's values blended in (a soft
    # update), a hook that only logs.
    ("True", "v.assign(v * m + f)", []),
    ("False", "tf.print(tf.norm(v * m + f))", []),
])
def test_saved_values_put_back_by_a_hook_after_the_step(trainable, write,
                                                        expected):
  assert _found(_RESTORE.format(trainable=trainable, write=write)) == (
      expected)
