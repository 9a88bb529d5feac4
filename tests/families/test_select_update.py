"""The select update: Keras 3's Adam, AdamW and SGD eagerly, without the kernel.

Where the compiled kernel cannot serve an eager step (no compiler,
`TFPARTIAL_KERNELS=off`, a GPU), Keras' Adam, AdamW and SGD run their own
ops on the masked gradient and write the variable once, as a select of its
value before and after (`_select_keras`): the variable is never copied on
write and the masked gradient is let go before the variable's update, so
a step needs no more memory than plain Keras' (bench row (m)). Its bits
are the unfused step's (mask -> Keras' update -> restore) in the variable
and in every slot, Inf and NaN gradients and subnormal values where
frozen included.
"""

import threading

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import keras_problems as kp
import tfpartial
from tfpartial._families import _fused_keras
from tfpartial._kernels import _native
from tfpartial._step import _lock

pytestmark = helpers.needs_keras_3

OPTIMIZERS = {
    **kp.ADAM_FAMILY,
    "SGD": lambda: keras.optimizers.SGD(0.05),
    "SGD_momentum": lambda: keras.optimizers.SGD(0.05, momentum=0.9),
    "SGD_nesterov_decay": lambda: keras.optimizers.SGD(
        0.05, momentum=0.9, nesterov=True, weight_decay=0.1),
    "SGD_decay": lambda: keras.optimizers.SGD(0.05, weight_decay=0.1),
}
UPDATES = (_fused_keras.FusedKerasAdamUpdate, _fused_keras.FusedKerasSgdUpdate)


@pytest.fixture
def calls(monkeypatch):
  """The kernel off; counts the select update's calls, and checks that
  each runs under the step lock."""
  monkeypatch.setenv(_native.SWITCH, "off")
  counted = []

  def spy(update):
    def counting(optimizer, gradient, taken, learning_rate):
      counted.append(_lock._HELD.get())
      return update(optimizer, gradient, taken, learning_rate)
    return staticmethod(counting)

  for cls in UPDATES:
    monkeypatch.setattr(cls, "_select_update", spy(cls._select_update))
  return counted




def _train(optimizer, model, spec, how, steps=4):
  """Eager steps; the values after each."""
  variables = model.trainable_variables
  if how == "model_fit":
    trajectory = []
    model.compile(optimizer=spec.wrap(optimizer), loss=kp.squared_sum,
                  run_eagerly=True)
    model.fit(np.repeat(kp.INPUTS, steps, 0), np.repeat(kp.TARGETS, steps, 0),
              batch_size=1, epochs=1, shuffle=False, verbose=0,
              callbacks=[keras.callbacks.LambdaCallback(
                  on_train_batch_end=lambda batch, logs: trajectory.append(
                      model.values()))])
    return trajectory
  apply = (spec.wrap(optimizer).apply_gradients if how == "wrap"
           else lambda pairs: spec.apply_gradients(optimizer, pairs))
  trajectory = []
  for _ in range(steps):
    with tf.GradientTape() as tape:
      loss = kp.loss_of(model)
    apply(list(zip(tape.gradient(loss, variables), variables)))
    trajectory.append(model.values())
  return trajectory


def _slots(optimizer):
  return [(v.path.rsplit("_", 1)[-1], np.array(v.numpy()))
          for v in optimizer.variables if len(v.shape) > 0]


def _assert_same_run(got, expected):
  (trajectory, slots), (reference, reference_slots) = got, expected
  assert len(trajectory) == len(reference) == 4
  for step, (values, want) in enumerate(zip(trajectory, reference), 1):
    for name in want:
      helpers.assert_same_bits(values[name], want[name], f"{name}, step {step}")
  assert [kind for kind, _ in slots] == [kind for kind, _ in reference_slots]
  for (kind, value), (_, want) in zip(slots, reference_slots):
    helpers.assert_same_bits(value, want, kind)


@pytest.mark.parametrize("how", ["apply_gradients", "wrap", "model_fit"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_the_select_update_leaves_the_unfused_steps_bits(
    name, how, calls, monkeypatch):
  def run():
    model = kp.PartialModel()  # x's frozen gradients are Inf and NaN.
    optimizer = OPTIMIZERS[name]()
    return _train(optimizer, model, model.spec(), how), _slots(optimizer)

  selected = run()
  # x each step (c has nothing frozen: Keras' own update); b too when
  # wrapped (fully frozen, its slots kept).
  per_step = 1 if how == "apply_gradients" else 2
  assert len(calls) == 4 * per_step and all(calls)
  trajectory = selected[0]
  for step, values in enumerate(trajectory, 1):
    helpers.assert_same_bits(values["x"][kp.X_FROZEN], kp.X0[kp.X_FROZEN],
                             f"frozen x, step {step}")
    helpers.assert_same_bits(values["b"], kp.B0, f"b, step {step}")
  assert not np.array_equal(trajectory[-1]["c"], kp.C0)
  calls.clear()
  helpers.unfused(monkeypatch)
  _assert_same_run(selected, run())
  assert not calls


def _rows_problem(dtype):
  """A table whose rows 1 and 4 train; NaN and -Inf gradients and
  subnormal values in the frozen rows."""
  tiny = np.finfo(dtype).tiny / 4  # Subnormal.
  table = np.arange(18, dtype=dtype).reshape(6, 3) / 7
  table[0] = [tiny, -tiny, -0.0]
  gradient = np.linspace(-1, 1, 18).astype(dtype).reshape(6, 3)
  gradient[2] = [np.nan, -np.inf, np.inf]
  return table, gradient


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD_nesterov_decay"])
def test_a_row_spec_of_any_float_width_keeps_subnormals_and_nan_rows(
    name, dtype, calls, monkeypatch):
  table0, gradient = _rows_problem(dtype)

  def run():
    table = keras.Variable(table0, name="table")
    optimizer = OPTIMIZERS[name]()
    optimizer.build([table])
    # Subnormal state in the frozen rows: it evolves as a zero gradient's.
    first_slot = [v for v in optimizer.variables if len(v.shape) > 0][0]
    first_slot.assign(np.where(
        np.arange(6)[:, None] == 0, table0[0:1], 0).astype(dtype))
    spec = tfpartial.train_only(table, [1, 4])
    values = []
    for _ in range(3):
      spec.apply_gradients(optimizer, [(tf.constant(gradient), table)])
      values.append(table.numpy())
    return values, _slots(optimizer)

  selected = run()
  assert len(calls) == 3
  for values in selected[0]:
    frozen = np.ones(6, bool)
    frozen[[1, 4]] = False
    helpers.assert_same_bits(values[frozen], table0[frozen], "frozen rows")
    assert (values[[1, 4]] != table0[[1, 4]]).all()
  calls.clear()
  helpers.unfused(monkeypatch)
  _assert_same_run_rows(selected, run())
  assert not calls


def _assert_same_run_rows(got, expected):
  for step, (values, want) in enumerate(zip(got[0], expected[0]), 1):
    helpers.assert_same_bits(values, want, f"table, step {step}")
  for (kind, value), (_, want) in zip(got[1], expected[1]):
    helpers.assert_same_bits(value, want, kind)


def _one_step(optimizer, function=False, sparse=False):
  x = keras.Variable(np.ones((4, 3), np.float32), name="x")
  spec = tfpartial.freeze(x, np.eye(4, 3, dtype=bool))

  def step():
    with tf.GradientTape() as tape:
      rows = tf.gather(x, [0, 2]) if sparse else x
      loss = tf.reduce_sum(rows * rows)
    spec.apply_gradients(optimizer, zip(tape.gradient(loss, [x]), [x]))

  step = tf.function(step) if function else step
  for _ in range(2):  # Gradient accumulation applies every second step.
    step()
  helpers.assert_same_bits(x.numpy()[:3, :3].diagonal(),
                           np.ones(3, np.float32), "frozen diagonal")
  assert x.numpy()[0, 1] != 1.0


@pytest.mark.parametrize("case", [
    "tf_function", "sparse", "clipnorm", "amsgrad", "ema", "subclass",
    "accumulation"])
def test_where_the_select_update_cannot_serve_the_step_stays_unfused(
    case, calls):
  _one_step(kp.adam_for(case), function=case == "tf_function",
            sparse=case == "sparse")
  assert not calls


def test_the_select_update_serves_without_the_kernel_only(monkeypatch):
  """With the kernel loaded, an eager step is the kernel's."""
  if _native.compiler() is None:
    pytest.skip("no C++ compiler: the kernel cannot load here")
  counted = []
  update = _fused_keras.FusedKerasAdamUpdate._select_update
  monkeypatch.setattr(
      _fused_keras.FusedKerasAdamUpdate, "_select_update",
      staticmethod(lambda *args: counted.append(1) or update(*args)))
  monkeypatch.setenv(_native.SWITCH, "on")
  _one_step(keras.optimizers.Adam(0.1))
  assert not counted
  monkeypatch.setenv(_native.SWITCH, "off")
  _one_step(keras.optimizers.Adam(0.1))
  assert counted == [1, 1]


def test_threads_sharing_a_wrapped_adam_keep_the_freeze(calls):
  """Eight threads, one wrapped optimizer, one variable: each step holds
  the step lock (the spy checks), and the frozen elements never move."""
  x = keras.Variable(np.ones((64, 32), np.float32), name="x")
  frozen = np.zeros((64, 32), bool)
  frozen[::3, ::2] = True
  optimizer = tfpartial.freeze(x, frozen).wrap(keras.optimizers.Adam(0.01))
  optimizer.build([x])
  errors = []

  def work():
    try:
      for _ in range(5):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.square(x - 3.0))
        optimizer.apply_gradients(zip(tape.gradient(loss, [x]), [x]))
    except Exception as error:  # pylint: disable=broad-except
      errors.append(error)

  threads = [threading.Thread(target=work) for _ in range(8)]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(timeout=300)
  assert not errors and not any(t.is_alive() for t in threads)
  assert len(calls) == 40 and all(calls)
  value = x.numpy()
  helpers.assert_same_bits(value[frozen], np.ones(int(frozen.sum()),
                                                  np.float32), "frozen")
  assert (value[~frozen] != 1.0).all()
  assert int(optimizer.iterations.numpy()) == 40
