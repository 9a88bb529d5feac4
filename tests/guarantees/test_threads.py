"""Guarantee 8: a spec and an optimizer stepped from several threads.

Plain TensorFlow loses no update when threads step one optimizer, and
tfpartial must not either; nor may one thread's step undo the freeze for
another. With a constant gradient, steps commute, so however the threads
interleave, the result must be the bits of the same number of steps run
one after another (for the optimizers whose state is all per variable).
"""

import threading

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

THREADS, STEPS, SIZE = 4, 15, 1 << 18
FROZEN = np.arange(SIZE) % 3 == 0


def _optimizers():
  v1 = tf.compat.v1.train
  return {
      "v1_sgd": lambda: v1.GradientDescentOptimizer(0.01),
      "v1_momentum": lambda: v1.MomentumOptimizer(0.01, 0.9),
      "v1_adam": lambda: v1.AdamOptimizer(0.01),
  }


def _in_threads(run, threads=THREADS, steps=STEPS):
  errors = []

  def worker():
    try:
      for _ in range(steps):
        run()
    except Exception as error:  # pylint: disable=broad-except
      errors.append(error)

  workers = [threading.Thread(target=worker) for _ in range(threads)]
  for thread in workers:
    thread.start()
  for thread in workers:
    thread.join(timeout=300)
  assert not any(thread.is_alive() for thread in workers), "a step hung"
  assert not errors, errors


def _train(mode, make_optimizer, entry, threaded):
  """x after one warm-up step, then THREADS * STEPS steps."""
  rng = np.random.default_rng(0)
  start = rng.normal(size=SIZE)
  slope = rng.normal(size=SIZE)
  with mode.runner() as runner:
    x = runner.variable(start, "x")
    spec = tfpartial.freeze(x, FROZEN)
    optimizer = make_optimizer()

    def loss():
      return tf.reduce_sum(x * tf.constant(slope, tf.float32))

    if entry == "wrap":
      wrapped = spec.wrap(optimizer)
      build = lambda: wrapped.minimize(runner.loss(loss), var_list=[x])
    else:
      build = lambda: spec.apply_gradients(
          optimizer, zip(runner.gradients(loss, [x]), [x]))
    run = runner.step(build)
    run()  # Slots are made by the first step, in one thread.
    if threaded:
      _in_threads(run)
    else:
      for _ in range(THREADS * STEPS):
        run()
    return start, runner.value(x)


@pytest.mark.parametrize("entry", ["apply_gradients", "wrap"])
@pytest.mark.parametrize("name", sorted(_optimizers()))
def test_threads_lose_no_update_and_keep_the_freeze(exact_mode, name, entry,
                                                    monkeypatch):
  # Without the kernel every step restores: the case threads can break.
  helpers.unfused(monkeypatch)
  make = _optimizers()[name]
  start, threaded = _train(exact_mode, make, entry, threaded=True)
  _, serial = _train(exact_mode, make, entry, threaded=False)
  helpers.assert_same_bits(threaded[FROZEN], start[FROZEN].astype(np.float32),
                           "frozen x")
  if name == "v1_adam" and exact_mode is not helpers.EAGER:
    # Plain TF's own Adam races there: concurrent steps read its beta powers
    # (optimizer state, not the variable's) before either advances them.
    # Eager steps run one at a time under tfpartial's lock, whole.
    assert np.isfinite(threaded).all()
    assert (threaded[~FROZEN] != start[~FROZEN]).all()
    return
  helpers.assert_same_bits(threaded, serial, "x, threaded against serial")


@helpers.needs_keras_3
@pytest.mark.usefixtures("compiled_kernel")
@pytest.mark.parametrize("use_wrap", [False, True], ids=["apply_gradients",
                                                         "wrap"])
def test_threads_sharing_a_keras_adam_with_the_kernel_keep_the_freeze(
    use_wrap):
  import keras  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(1)
  start = rng.normal(size=SIZE).astype(np.float32)
  x = tf.Variable(start, name="x")
  spec = tfpartial.freeze(x, FROZEN)
  optimizer = keras.optimizers.Adam(0.01)
  gradient = tf.constant(rng.normal(size=SIZE), tf.float32)
  if use_wrap:
    wrapped = spec.wrap(optimizer)
    run = lambda: wrapped.apply_gradients([(gradient, x)])
  else:
    run = lambda: spec.apply_gradients(optimizer, [(gradient, x)])
  run()
  _in_threads(run, threads=4, steps=150)
  value = x.numpy()
  helpers.assert_same_bits(value[FROZEN], start[FROZEN], "frozen x")
  assert np.isfinite(value).all()
  assert (value[~FROZEN] != start[~FROZEN]).all()
  assert not vars(optimizer).keys() & {"update_step", "_apply_weight_decay"}


@helpers.needs_keras_3
@pytest.mark.usefixtures("compiled_kernel")
@pytest.mark.parametrize("use_wrap", [False, True], ids=["apply_gradients",
                                                         "wrap"])
def test_threads_sharing_a_keras_adam_with_the_kernel_count_every_step(
    use_wrap):
  """Keras 3 counts a step as a read and then a write of `iterations`
  (its `assign_add` is `assign(self + 1)`); the kernel's steps, with no
  restore to wait for, raced there more often than plain Keras' and lost
  more steps. Now they count each one."""
  import keras  # pylint: disable=g-import-not-at-top
  from tfpartial._kernels import _native  # pylint: disable=g-import-not-at-top
  x = tf.Variable(np.ones(SIZE, np.float32), name="x")
  spec = tfpartial.freeze(x, FROZEN)
  optimizer = keras.optimizers.Adam(0.01)
  gradient = tf.ones(SIZE)
  if use_wrap:
    wrapped = spec.wrap(optimizer)
    run = lambda: wrapped.apply_gradients([(gradient, x)])
  else:
    run = lambda: spec.apply_gradients(optimizer, [(gradient, x)])
  run()
  assert _native.library() is not None  # The kernel's steps are counted.
  for _ in range(3):
    before = int(optimizer.iterations.numpy())
    _in_threads(run, threads=4, steps=40)
    assert int(optimizer.iterations.numpy()) - before == 160


def test_a_keras_step_never_changes_the_optimizer_instance(compiled_kernel):
  """What threads share must not change during a step: the learning-rate
  schedule, called in the middle of Keras' apply, sees the optimizer's
  attributes as they were before the step."""
  del compiled_kernel
  if not helpers.KERAS_3:
    pytest.skip(helpers.needs_keras_3.kwargs["reason"])
  import keras  # pylint: disable=g-import-not-at-top
  seen = []

  class Spy(keras.optimizers.schedules.LearningRateSchedule):

    def __call__(self, step):
      seen.append(dict(vars(optimizer)))
      return 0.01

    def get_config(self):
      return {}

  x = tf.Variable(np.ones(SIZE, np.float32), name="x")
  spec = tfpartial.freeze(x, FROZEN)
  optimizer = keras.optimizers.AdamW(Spy())
  gradient = tf.ones(SIZE)
  spec.apply_gradients(optimizer, [(gradient, x)])  # Builds it.
  before = dict(vars(optimizer))
  seen.clear()
  spec.apply_gradients(optimizer, [(gradient, x)])
  spec.wrap(optimizer).apply_gradients([(gradient, x)])
  assert seen, "the schedule was not called during the step"
  for during in seen:
    assert during.keys() == before.keys(), during.keys() ^ before.keys()
    assert all(during[k] is before[k] for k in before
               if k not in ("_tfpartial_spec",))


@pytest.mark.parametrize("mode", [helpers.TF1_GRAPH, helpers.TF1_GRAPH_REF],
                         ids=lambda mode: mode.name)
def test_a_v1_step_never_changes_the_optimizer_instance(mode, compiled_kernel):
  """As above, for v1 Adam, whose learning rate, a callable, is called
  while the step is built: the optimizer's attributes then are those a
  plain step's leave (TensorFlow sets some of its own)."""
  del compiled_kernel

  def attributes_during(use_tfpartial):
    seen = []
    with mode.runner() as runner:
      x = runner.variable(np.ones(SIZE), "x")

      def learning_rate():
        seen.append(set(vars(optimizer)))
        return 0.01

      optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
      if use_tfpartial:
        tfpartial.freeze(x, FROZEN).minimize(optimizer, tf.reduce_sum(x))
      else:
        optimizer.minimize(tf.reduce_sum(x))
    assert seen, "the learning rate was not read during the step"
    return seen

  assert attributes_during(True) == attributes_during(False)
