"""Test helpers: execution modes, a runner per mode, exact comparison.

`runner.step(fn)` turns a function that builds one training step into
something that runs it: built once and run in a `Session` in a TF1 graph,
called as it is eagerly, wrapped in `tf.function` otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfpartial

# TensorFlow 2.16+ ships Keras 3 as `keras`; 2.15 and older ship Keras 2.
KERAS_3 = int(keras.__version__.split(".")[0]) >= 3
needs_keras_3 = pytest.mark.skipif(
    not KERAS_3, reason=f"Keras 3 API; this TensorFlow ships Keras "
    f"{keras.__version__} (its optimizers are tested in test_tf_keras.py)")


# A multi-process test whose result is the same on every TensorFlow
# release runs on the newest only (`tox -e py311-tf221`): CI time.
NEWEST_TENSORFLOW = (2, 21)
MULTIPROCESS_ONCE = tuple(
    int(part) for part in tf.__version__.split(".")[:2]) >= NEWEST_TENSORFLOW
multiprocess_once = pytest.mark.skipif(
    not MULTIPROCESS_ONCE,
    reason=f"a multi-process test whose result is the same on every "
    f"TensorFlow release: it runs on the newest (2.21) only, for CI time; "
    f"this is {tf.__version__}")


class Runner:
  """Builds and runs steps in one mode; see the module docstring."""

  def __init__(self, mode: "Mode", session=None):
    self.mode = mode
    self.session = session
    self._initialized = set()

  @property
  def graph(self) -> bool:
    """Whether this is a TF1 graph, where a loss is a tensor, not a callable."""
    return self.session is not None

  def variable(self, value, name, dtype=tf.float32, trainable=True):
    value = np.asarray(value, dtype=dtype.as_numpy_dtype)
    if self.graph:
      return tf.compat.v1.Variable(value, name=name, trainable=trainable,
                                   use_resource=self.mode.use_resource)
    return tf.Variable(value, name=name, trainable=trainable)

  def loss(self, loss_fn):
    """What `minimize` takes: a tensor in a TF1 graph, else the callable."""
    return loss_fn() if self.graph else loss_fn

  def gradients(self, loss_fn, variables):
    """d loss / d variables: `tf.gradients` in a TF1 graph, else a tape."""
    if self.graph:  # GradientTape cannot watch TF1 ref variables.
      return tf.compat.v1.gradients(loss_fn(), variables)
    with tf.GradientTape() as tape:
      value = loss_fn()
    return tape.gradient(value, variables)

  def step(self, fn):
    """A zero-argument callable running the step `fn` builds."""
    if self.graph:
      op = fn()
      return lambda: self.run(op)
    if self.mode.function is None:
      return fn

    def body():
      fn()  # Ops are run by automatic control dependencies; return nothing.

    return self.mode.function(body)

  def value(self, variable) -> np.ndarray:
    if self.graph:
      return self.run(variable)
    return variable.numpy()

  def assign(self, variable, value) -> None:
    value = np.asarray(value, dtype=variable.dtype.base_dtype.as_numpy_dtype)
    if self.graph:
      self.run(variable.assign(value))
    else:
      variable.assign(value)

  def checkpoint(self, variables, directory):
    """Saves and restores `variables`: a TF1 `Saver`, else tf.train.Checkpoint."""
    prefix = str(directory / "ckpt")
    if self.graph:
      saver = tf.compat.v1.train.Saver(variables)
      return _Checkpoint(lambda: saver.save(self.session, prefix),
                         lambda path: saver.restore(self.session, path))
    checkpoint = tf.train.Checkpoint(**variables)
    return _Checkpoint(lambda: checkpoint.save(prefix),
                       lambda path: checkpoint.restore(path).assert_consumed())

  def run(self, fetch):
    """Runs `fetch` in the session, first initializing any new variables."""
    graph = self.session.graph
    new = [v for v in graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)
           + graph.get_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES)
           if v.name not in self._initialized]
    if new:
      self.session.run([v.initializer for v in new])
      self._initialized.update(v.name for v in new)
    return self.session.run(fetch)


class _Checkpoint:

  def __init__(self, save, restore):
    self.save, self.restore = save, restore


class Mode:
  """One execution mode; `with mode.runner() as runner:` is a fresh world."""

  def __init__(self, name, graph=False, use_resource=True, function=None):
    self.name = name
    self.is_graph = graph
    self.use_resource = use_resource
    self.function = function

  @contextlib.contextmanager
  def runner(self):
    if not self.is_graph:
      yield Runner(self)
      return
    with tf.Graph().as_default() as graph:
      with tf.compat.v1.Session(graph=graph) as session:
        yield Runner(self, session)

  def __repr__(self):
    return self.name


TF1_GRAPH = Mode("tf1_graph", graph=True)
TF1_GRAPH_REF = Mode("tf1_graph_ref", graph=True, use_resource=False)
EAGER = Mode("eager")
TF_FUNCTION = Mode("tf_function", function=tf.function)
XLA = Mode("tf_function_xla",
           function=lambda fn: tf.function(fn, jit_compile=True))

# The modes guarantee 3 says give bit-identical values.
EXACT_MODES = (TF1_GRAPH, TF1_GRAPH_REF, EAGER, TF_FUNCTION)
ALL_MODES = EXACT_MODES + (XLA,)
# A TF1 graph with resource and with ref variables; TF2 code.
GRAPH_MODES = (TF1_GRAPH, TF1_GRAPH_REF)
TF2_MODES = (EAGER, TF_FUNCTION)


@dataclasses.dataclass(frozen=True)
class KerasMode:
  """One way of training a Keras model: a custom loop, eager or in a
  `tf.function` (XLA or not), stepping with `spec.apply_gradients` or with
  a wrapped optimizer; or `model.fit` with a wrapped optimizer."""

  name: str
  function: bool = False
  jit_compile: bool = False
  wrap: bool = False
  fit: bool = False

  @property
  def fuses(self) -> bool:
    """Whether XLA compiles the step (fit's `jit_compile="auto"` does),
    which fuses operations: float32 round-off, not bits, against a
    reference."""
    return self.jit_compile or self.fit

  def compiled(self, step):
    """`step` as this mode runs a custom loop's step."""
    if not self.function:
      return step
    return tf.function(step, jit_compile=True) if self.jit_compile else (
        tf.function(step))

  def __repr__(self):
    return self.name


KERAS_EAGER = KerasMode("eager")
KERAS_TF_FUNCTION = KerasMode("tf_function", function=True)
KERAS_WRAP_TF_FUNCTION = KerasMode("wrap_tf_function", function=True,
                                   wrap=True)
KERAS_XLA = KerasMode("xla", function=True, jit_compile=True)
KERAS_MODEL_FIT = KerasMode("model_fit", wrap=True, fit=True)
# Every way, and every way but XLA in a custom loop.
KERAS_MODES = (KERAS_EAGER, KERAS_TF_FUNCTION, KERAS_WRAP_TF_FUNCTION,
               KERAS_XLA, KERAS_MODEL_FIT)
KERAS_LOOP_AND_FIT = (KERAS_EAGER, KERAS_TF_FUNCTION, KERAS_WRAP_TF_FUNCTION,
                      KERAS_MODEL_FIT)
KERAS_LOOPS = (KERAS_EAGER, KERAS_TF_FUNCTION)



def unfused(monkeypatch) -> None:
  """Every step the unfused one (mask -> apply -> restore): the compiled
  kernels off (`TFPARTIAL_KERNELS=off`) and Keras' select updates, which
  serve eager steps without them, left out."""
  from tfpartial._families import _fused_keras  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv("TFPARTIAL_KERNELS", "off")
  monkeypatch.setattr(_fused_keras, "KINDS",
                      tuple(k for k in _fused_keras.KINDS if k.library))


def bits(array) -> np.ndarray:
  """The raw bits of a float array, for exact comparison (NaN == NaN)."""
  array = np.ascontiguousarray(array)
  return array.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[
      array.dtype.itemsize])


def assert_same_bits(actual, expected, what: str = "") -> None:
  """Asserts `actual` and `expected` hold the same bits, element by element."""
  actual, expected = np.asarray(actual), np.asarray(expected)
  assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
  assert actual.dtype == expected.dtype, (what, actual.dtype, expected.dtype)
  same = bits(actual) == bits(expected)
  assert same.all(), (
      f"{what}: {np.count_nonzero(~same)} element(s) differ in their bits; "
      f"got {actual[~same][:5]}, expected {expected[~same][:5]}")


def diagonal_step_types(x, optimizer, jit_compile=False, gradient=None):
  """One `tf.function` step of `optimizer` on `x` (4x3, all ones) with its
  diagonal frozen, by `spec.apply_gradients`: checks the diagonal's bits
  and that the rest of row 0 moved; returns the step's op types.
  `gradient(x)`, if given, is the gradient in place of d(sum(x * x))."""
  spec = tfpartial.freeze(x, np.eye(4, 3, dtype=bool))

  @tf.function(jit_compile=jit_compile)
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(x * x)
    grad = tape.gradient(loss, x) if gradient is None else gradient(x)
    spec.apply_gradients(optimizer, [(grad, x)])

  step()
  assert_same_bits(x.numpy()[:3, :3].diagonal(), np.ones(3, np.float32),
                   "frozen diagonal")
  assert (x.numpy()[0, 1:] != 1.0).all()
  return {op.type
          for op in step.get_concrete_function().graph.get_operations()}


def reads(shape, index) -> np.ndarray:
  """The elements `array[index]` reads, found by reading, as a bool mask:
  the element-id oracle of what an index selects."""
  ids = np.arange(int(np.prod(shape))).reshape(shape)
  return np.isin(ids, ids[index])


def selection_of(spec, variable):
  """The spec's selection for `variable` (a private lookup: `_selection`,
  or `_value.selection` where the spec value has a module of its own)."""
  value = getattr(spec, "_value", None)
  if value is not None:
    return value.selection(variable)
  return spec._selection(variable)  # pylint: disable=protected-access


def copy_of(path) -> pathlib.Path:
  """A copy of the checkpoint file `path` beside it (`copy_NAME`): verify
  refuses one file given as both BEFORE and AFTER."""
  path = pathlib.Path(path)
  copy = path.with_name(f"copy_{path.name}")
  shutil.copyfile(path, copy)
  return copy
