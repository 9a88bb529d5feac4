"""Part thirty-seven's false positives, each silenced by what the code
does, with the twin that stays found.

- A Keras callback's helper that masks weights and writes them back, run
  only from `on_train_end`: the model has finished training, the weights
  are done (a pruning by evaluation after training). The same helper run
  from `on_batch_end` or `on_epoch_end` re-masks while the model trains.
- A helper that trains the scope it is given for the loss it is given,
  called once per scope with a loss of its own from a script that names
  no sink (read now: it was skipped), through its module's alias even
  where the shipped file lost it (`cifar10.train(...)` with `cifar10`
  bound nowhere): the calls train every scope between them, as the GAN
  halves' helper does. Called for one scope, or for two with one loss,
  it stays found; a call of another object's `train` does not count.
- A step's filter returned by a helper given `self.scope`, where the
  step's function opens that scope around bare variables only (a
  trajectory optimised through a model it is handed, trained by its own
  step): as the same filter written inline. A layer inside the scope or
  beside it, or a scope the function does not open, stays found.
- A tape's gradient of some variables passed straight to `tf.print` (a
  notebook's look at it): shown and dropped, it trains nothing; bound to
  a name and applied, it stays found.
"""

import pytest

import scanned

# A callback that zeroes the weights of a fixed mask and writes them back,
# through a helper of its own, from the hook HOOK.
_CALLBACK = '''
import numpy as np
import tensorflow as tf

class Masker(tf.keras.callbacks.Callback):
    def __init__(self, keep):
        super().__init__()
        self.keep = keep

    def mask_out(self, weight):
        current = weight.read_value()
        weight.assign(current * self.keep)

    def HOOK(self, *args, **kwargs):
        for layer in self.model.layers:
            self.mask_out(layer.kernel)

model = tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
x = np.zeros((8, 3), np.float32)
y = np.zeros((8, 1), np.float32)
keep = np.ones((3, 3), np.float32)
keep[0] = 0.0
model.fit(x, y, epochs=3, callbacks=[Masker(keep)])
'''

# A callback that prunes one element at a time, keeping each zero the
# validation loss allows (the mask chosen by evaluation), from HOOK.
_PRUNER = '''
import numpy as np
import tensorflow as tf

class Pruner(tf.keras.callbacks.Callback):
    def __init__(self, data):
        super().__init__()
        self.data = data

    def prune(self, weight):
        current = weight.read_value()
        base = self.model.evaluate(self.data, verbose=0)
        for i in range(int(tf.size(weight))):
            mask = np.ones(int(tf.size(weight)), dtype=np.float32)
            mask[i] = 0.0
            mask = mask.reshape(current.shape)
            weight.assign(current * mask)
            if self.model.evaluate(self.data, verbose=0) <= base:
                current *= mask
        weight.assign(current)

    def report(self, weight):
        return self.prune(weight)

    def HOOK(self, *args, **kwargs):
        for layer in self.model.layers:
            self.report(layer.kernel)

model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
x = np.zeros((8, 3), np.float32)
y = np.zeros((8, 1), np.float32)
model.fit(x, y, epochs=3, callbacks=[Pruner((x, y))])
'''


def _remasks(code):
  return [line for idiom, line in scanned.found(code)
          if idiom == "weight-remask"]


@pytest.mark.parametrize("code", [_CALLBACK, _PRUNER])
def test_a_callbacks_helper_run_only_when_training_ends_is_silent(code):
  assert _remasks(code.replace("HOOK", "on_train_end")) == []


@pytest.mark.parametrize("hook", ["on_batch_end", "on_epoch_end"])
def test_the_same_helper_run_while_the_model_trains_stays_found(hook):
  assert _remasks(_CALLBACK.replace("HOOK", hook)) == [12]


def test_a_helper_also_run_while_training_stays_found():
  code = _CALLBACK.replace("HOOK", "on_train_end") + '''
class Both(Masker):
    def on_epoch_end(self, epoch, logs=None):
        self.mask_out(self.model.layers[0].kernel)
'''
  assert _remasks(code) == [12]


# A module of helpers: a network in three scopes and a step that trains
# the variables of the scope it is given, for the loss it is given.
_HELPERS = '''
import tensorflow as tf
layers = tf.contrib.layers

def inference(x):
  a = layers.conv2d(x, 8, 3, scope="One/conv0")
  b = layers.conv2d(a, 8, 3, scope="Two/conv0")
  return layers.conv2d(b, 1, 3, scope="Three/conv0")

def train(total_loss, global_step, name):
  opt = tf.train.AdamOptimizer(0.001)
  chosen = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, name)
  grads = opt.compute_gradients(total_loss, chosen)
  return opt.apply_gradients(grads, global_step=global_step)
'''

# A script naming no sink of its own: it calls the helper once per scope,
# each with its own loss, and runs the three ops in turn.
_SCRIPT = '''
import tensorflow as tf
IMPORT

def main():
  x = tf.placeholder(tf.float32, [None, 8, 8, 1])
  step = tf.train.get_or_create_global_step()
  out = arch.inference(x)
  op1 = arch.train(tf.reduce_mean(out), step, "One")
  op2 = arch.train(tf.reduce_mean(out ** 2), step, "Two")
  op3 = arch.train(tf.reduce_mean(tf.abs(out)), step, "Three")
  with tf.train.MonitoredTrainingSession() as sess:
    while not sess.should_stop():
      sess.run(op1)
      sess.run(op2)
      sess.run(op3)

main()
'''


def _filters(script, imported="import arch_helpers as arch"):
  return [(path, line) for idiom, path, line in scanned.in_project({
      "arch_helpers.py": _HELPERS,
      "run.py": script.replace("IMPORT", imported)})
          if idiom == "var-list-filter"]


@pytest.mark.parametrize("imported", [
    "import arch_helpers as arch",
    # The alias lost in the file as shipped: `arch` is bound nowhere.
    "import arch_helpers"])
def test_a_helper_called_per_scope_from_a_script_without_a_sink_is_silent(
    imported):
  assert _filters(_SCRIPT, imported) == []


def test_the_same_helper_called_for_one_scope_stays_found():
  one = _SCRIPT.replace('op2 = arch.train(tf.reduce_mean(out ** 2), step, '
                        '"Two")', "op2 = op1").replace(
                            'op3 = arch.train(tf.reduce_mean(tf.abs(out)), '
                            'step, "Three")', "op3 = op1")
  assert _filters(one) != []


def test_the_same_helper_called_for_two_scopes_of_one_loss_stays_found():
  staged = _SCRIPT.replace("tf.reduce_mean(out ** 2)", "tf.reduce_mean(out)")
  staged = staged.replace("tf.reduce_mean(tf.abs(out))", "tf.reduce_mean(out)")
  assert _filters(staged) != []


def test_a_bound_receiver_of_another_object_does_not_count():
  # `trainer` is an object of its own (a parameter): its `train` is not
  # the helper, so the helper's only call trains one scope.
  other = _SCRIPT.replace("def main():", "def main(trainer):").replace(
      'op2 = arch.train(', 'op2 = trainer.train(').replace(
          'op3 = arch.train(', 'op3 = trainer.train(').replace(
              "main()", "main(None)")
  assert _filters(other) != []


# A helper of its own module returning the variables under a scope.
_SCOPE_HELPER = '''
import tensorflow as tf

def vars_in(scope):
  return tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope=scope)
'''

# A dynamics model, trained by its own step.
_DYNAMICS = '''
import tensorflow as tf

class Dynamics(object):
  def __init__(self, sess):
    self.sess = sess
    self.x = tf.placeholder(tf.float32, [None, 4])
    self.y = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope("dyn"):
      self.w = tf.get_variable("w", [4, 4])
    self.loss = tf.reduce_mean((self.predict(self.x) - self.y) ** 2)
    self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.loss)

  def predict(self, x):
    return tf.matmul(x, self.w)

  def fit(self, xs, ys):
    for _ in range(100):
      self.sess.run(self.train_op, {self.x: xs, self.y: ys})
'''

# A trajectory optimiser handed the model: it opens its own scope around a
# bare variable (the trajectory) and optimises what the helper returns
# for that scope, through the model it is given.
_TRAJ_OPT = '''
import uuid
import tensorflow as tf
import scope_helper

class TrajOpt(object):
  def __init__(self, sess, dynamics, scope=None):
    self.sess = sess
    self.dynamics = dynamics
    self.scope = scope or str(uuid.uuid4())
    with tf.variable_scope(self.scope):
      traj = tf.get_variable("traj", [8, 4],
                             initializer=tf.random_normal_initializer())
    self.loss = -tf.reduce_mean(dynamics.predict(traj))
    with tf.variable_scope("opt"):
      var_list = scope_helper.vars_in(self.scope)
      self.update_op = tf.train.AdamOptimizer(0.1).minimize(
          self.loss, var_list=var_list)

  def run(self, steps):
    for _ in range(steps):
      self.sess.run(self.update_op)
'''

_RUN = '''
import tensorflow as tf
import dynamics, traj_opt
sess = tf.Session()
model = dynamics.Dynamics(sess)
model.fit(None, None)
opt = traj_opt.TrajOpt(sess, model)
opt.run(10)
'''


def _trajectory(optimiser):
  return [(path, line) for idiom, path, line in scanned.in_project({
      "scope_helper.py": _SCOPE_HELPER, "dynamics.py": _DYNAMICS,
      "traj_opt.py": optimiser, "run.py": _RUN})
          if idiom == "var-list-filter"]


def test_a_helpers_scope_filter_of_bare_variables_it_opens_is_silent():
  assert _trajectory(_TRAJ_OPT) == []


def test_a_layer_inside_that_scope_stays_found():
  # The scope holds a head on an encoder built beside it: a network's part.
  code = _TRAJ_OPT.replace('''    with tf.variable_scope(self.scope):
      traj = tf.get_variable("traj", [8, 4],
                             initializer=tf.random_normal_initializer())''',
                           '''    self.obs = tf.placeholder(tf.float32, [8, 4])
    enc = tf.layers.dense(self.obs, 4, name="enc")
    with tf.variable_scope(self.scope):
      traj = tf.layers.dense(enc, 4, name="head")''')
  assert _trajectory(code) == [("scope_helper.py", 5)]


def test_a_layer_built_beside_bare_variables_stays_found():
  code = _TRAJ_OPT.replace(
      "    self.loss = -tf.reduce_mean(dynamics.predict(traj))",
      "    traj = tf.layers.dense(traj, 4, name='enc')\n"
      "    self.loss = -tf.reduce_mean(dynamics.predict(traj))")
  assert _trajectory(code) == [("scope_helper.py", 5)]


def test_a_scope_the_function_does_not_open_stays_found():
  code = _TRAJ_OPT.replace("with tf.variable_scope(self.scope):",
                           "with tf.variable_scope('elsewhere'):")
  assert _trajectory(code) == [("scope_helper.py", 5)]


# Three variables trained together by a tape's step, after a first look
# at the gradient of two of them: LOOK.
_LOOKED_AT = '''
import tensorflow as tf

a = tf.Variable([1.0, 0.0])
b = tf.Variable([1.0, 1.0])
op = tf.Variable([0.0, 1.0])
target = tf.constant(1.0)

with tf.GradientTape(persistent=True) as tape:
    loss = tf.nn.l2_loss(tf.reduce_sum(a * b * op) - target)
LOOK
opt = tf.keras.optimizers.SGD(1e-2)
for i in range(100):
    with tf.GradientTape() as tape:
        loss = tf.nn.l2_loss(tf.reduce_sum(a * b * op) - target)
    variables = [a, b, op]
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
'''


@pytest.mark.parametrize("look", [
    "tf.print(tape.gradient(loss, [a, b]))",
    "print(tape.gradient(loss, [a, b]), tape.gradient(loss, op))"])
def test_a_gradient_of_some_variables_only_printed_is_silent(look):
  assert [f for f in scanned.found(_LOOKED_AT.replace("LOOK", look))
          if f[0] == "var-list-filter"] == []


def test_the_same_gradient_applied_stays_found():
  applied = ("opt0 = tf.keras.optimizers.SGD(1e-2)\n"
             "grads = tape.gradient(loss, [a, b])\n"
             "tf.print(grads)\n"
             "opt0.apply_gradients(zip(grads, [a, b]))")
  assert [f for f in scanned.found(_LOOKED_AT.replace("LOOK", applied))
          if f[0] == "var-list-filter"] != []


def _scoped_optimisers(n):
  """One constructor opening `n` scopes of the object, each around a bare
  variable, and stepping each through a helper given that scope."""
  return ("import tensorflow as tf\n\n\ndef vars_in(scope):\n"
          "  return tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "
          "scope=scope)\n\n\nclass Opt(object):\n"
          "  def __init__(self, model):\n" + "".join(f"""
    self.scope{i} = "s{i}"
    with tf.variable_scope(self.scope{i}):
      x{i} = tf.get_variable("x{i}", [4])
    self.op{i} = tf.train.AdamOptimizer(0.1).minimize(
        -tf.reduce_mean(model.predict(x{i})), var_list=vars_in(self.scope{i}))
""" for i in range(n)))


def test_the_bare_variables_read_grows_linearly():
  # Each step asks of its function once; the answer is kept per function
  # and scope.
  small, large = (scanned.scan_work(_scoped_optimisers(n),
                                    "_passed_scope.py") for n in (10, 40))
  assert large <= 5 * small, (small, large)
