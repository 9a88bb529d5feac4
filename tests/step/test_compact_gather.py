"""Which op gathers a compact element step's trainable elements (of the
variable and of its gradient): the compiled gather where the library is
loaded, TensorFlow's `GatherV2` without it, under XLA, for TF1 ref
variables and where a GPU is visible; the same bits either way."""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

GATHERS = {"TfpartialGatherOffsets", "GatherV2"}
RNG = np.random.default_rng(5)
W0 = RNG.normal(size=(30, 20)).astype(np.float32)
TRAIN = RNG.random(W0.shape) < 0.1
GRAD = RNG.normal(size=W0.shape).astype(np.float32)


def _steps_in_a_function(jit_compile=False):
  """Gather op types of a compact Adam step in a `tf.function`, after
  checking two steps against the split-variable reference."""
  w, small = tf.Variable(W0), tf.Variable(W0[TRAIN])
  spec = tfpartial.train_only(w, TRAIN, compact=True)
  optimizer, reference = (tf.compat.v1.train.AdamOptimizer(0.1),
                          tf.compat.v1.train.AdamOptimizer(0.1))

  @tf.function(jit_compile=jit_compile)
  def step():
    spec.apply_gradients(optimizer, [(tf.constant(GRAD), w)])

  graph = step.get_concrete_function().graph
  for _ in range(2):
    step()
    reference.apply_gradients([(tf.constant(GRAD[TRAIN]), small)])
  helpers.assert_same_bits(w.numpy()[~TRAIN], W0[~TRAIN], "frozen")
  if jit_compile:  # XLA fuses the update: round-off, not bits.
    np.testing.assert_allclose(w.numpy()[TRAIN], small.numpy(), rtol=2e-5)
  else:
    helpers.assert_same_bits(w.numpy()[TRAIN], small.numpy(), "trainable")
  return sorted(op.type for op in graph.get_operations()
                if op.type in GATHERS)


def _steps_in_a_graph(use_resource):
  """Gather ops (the variable's, the gradient's) of a compact v1 Adam step
  in a TF1 graph, after checking two steps against the split reference."""
  graph = tf.Graph()
  with graph.as_default():
    w = tf.compat.v1.Variable(W0, use_resource=use_resource)
    small = tf.compat.v1.Variable(W0[TRAIN], use_resource=use_resource)
    spec = tfpartial.train_only(w, TRAIN, compact=True)
    first = len(graph.get_operations())
    train_op = spec.apply_gradients(tf.compat.v1.train.AdamOptimizer(0.1),
                                    [(tf.constant(GRAD), w)])
    ops = {op.name: op.type for op in graph.get_operations()[first:]
           if op.type in GATHERS}
    reference_op = tf.compat.v1.train.AdamOptimizer(0.1).apply_gradients(
        [(tf.constant(GRAD[TRAIN]), small)])
    with tf.compat.v1.Session(graph=graph) as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(2):
        session.run([train_op, reference_op])
      after, expected = session.run([w, small])
  helpers.assert_same_bits(after[~TRAIN], W0[~TRAIN], "frozen")
  helpers.assert_same_bits(after[TRAIN], expected, "trainable")
  snapshot = sorted(t for name, t in ops.items() if "tfpartial_snapshot" in name)
  gradient = sorted(t for name, t in ops.items()
                    if "tfpartial_snapshot" not in name)
  return snapshot, gradient


def test_the_compiled_gather_serves_where_it_is_loaded(compiled_kernel):
  assert _steps_in_a_function() == ["TfpartialGatherOffsets"] * 2
  assert _steps_in_a_graph(use_resource=True) == (
      ["TfpartialGatherOffsets"], ["TfpartialGatherOffsets"])


def test_without_the_kernel_tensorflow_gathers_as_exactly(monkeypatch):
  helpers.unfused(monkeypatch)
  assert _steps_in_a_function() == ["GatherV2"] * 2
  assert _steps_in_a_graph(use_resource=True) == (["GatherV2"], ["GatherV2"])


def test_under_xla_tensorflow_gathers(compiled_kernel):
  assert _steps_in_a_function(jit_compile=True) == ["GatherV2"] * 2


def test_a_ref_variable_is_read_by_tensorflow_s_gather(compiled_kernel):
  """Its value, as its write-back: the gradient is a tensor like any."""
  assert _steps_in_a_graph(use_resource=False) == (
      ["GatherV2"], ["TfpartialGatherOffsets"])


def test_where_a_gpu_is_visible_tensorflow_gathers(compiled_kernel,
                                                   monkeypatch):
  from tfpartial._step import _offsets  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(_offsets, "_has_gpu", lambda: True)
  assert _steps_in_a_function() == ["GatherV2"] * 2


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_other_dtypes_take_tensorflow_s_gather(compiled_kernel, dtype):
  from tfpartial._step import _offsets  # pylint: disable=g-import-not-at-top
  values = np.arange(6).astype(dtype)

  @tf.function
  def gather():
    return _offsets.gather(tf.constant(values), tf.constant([1, 4]))

  graph = gather.get_concrete_function().graph
  assert [op.type for op in graph.get_operations()
          if op.type in GATHERS] == ["GatherV2"]
  helpers.assert_same_bits(gather().numpy(), values[[1, 4]], "gathered")


def test_a_parameter_server_s_shard_is_gathered_by_tensorflow(
    compiled_kernel):
  """A variable of another task (a parameter server's shard), its value and
  its gradient: that task, and the worker a step runs on, may not have
  loaded the library (as the write-back, `_compact._scatters`). Built
  only: no cluster runs it."""
  graph = tf.Graph()
  with graph.as_default():
    with tf.device("/job:ps/task:0"):
      w = tf.compat.v1.Variable(W0, use_resource=True)
    spec = tfpartial.train_only(w, TRAIN, compact=True)
    first = len(graph.get_operations())
    spec.apply_gradients(tf.compat.v1.train.AdamOptimizer(0.1),
                         [(tf.constant(GRAD), w)])
    types = sorted(op.type for op in graph.get_operations()[first:]
                   if op.type in GATHERS | {"TfpartialResourceScatterOffsets",
                                            "ResourceScatterNdUpdate"})
  assert types == ["GatherV2", "GatherV2", "ResourceScatterNdUpdate"]
