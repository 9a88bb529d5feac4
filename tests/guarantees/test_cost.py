"""What a spec costs to build and to hold, measured without a clock.

A TF1 graph holds an element mask as one constant: it must be copied in as
bytes (`tensor_content`), not one Python call per element as
`make_tensor_proto` does for bool arrays, so building a train op costs the
same for 10 or 10M elements. Eagerly, the mask tensor shares the spec's
NumPy memory, so a spec holds one byte per element, not two.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._frozen import _tensors

SHAPE = (1000, 1000)  # Large enough that one Python call per element shows.


def _mask_constants(graph):
  return [op for op in graph.get_operations()
          if op.type == "Const" and "tfpartial_frozen_mask" in op.name]


def _random_mask(shape, seed=0):
  return np.random.default_rng(seed).random(shape) < 0.5


@pytest.mark.parametrize("use_resource", [True, False], ids=["resource", "ref"])
def test_a_large_element_mask_enters_a_tf1_graph_as_bytes(use_resource):
  frozen = _random_mask(SHAPE)
  graph = tf.Graph()
  with graph.as_default():
    x = tf.compat.v1.Variable(np.zeros(SHAPE, np.float32), name="x",
                              use_resource=use_resource)
    loss = tf.reduce_sum(tf.square(x - 1.0))
    train_op = tfpartial.freeze(x, frozen).minimize(
        tf.compat.v1.train.MomentumOptimizer(0.1, momentum=0.9), loss)
    (constant,) = _mask_constants(graph)  # One per graph, shared.
    proto = constant.get_attr("value")
    assert proto.dtype == tf.bool.as_datatype_enum
    assert len(proto.tensor_content) == frozen.size and not proto.bool_val
    np.testing.assert_array_equal(tf.make_ndarray(proto), frozen)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      session.run(train_op)
      value = session.run(x)
  helpers.assert_same_bits(value[frozen], np.zeros(SHAPE, np.float32)[frozen],
                           "frozen")
  assert (value[~frozen] != 0).all()


def test_the_static_part_of_a_mask_variable_enters_a_tf1_graph_as_bytes():
  frozen = _random_mask(SHAPE, seed=1)
  graph = tf.Graph()
  with graph.as_default():
    x = tf.compat.v1.Variable(np.zeros(SHAPE, np.float32), name="x")
    mask = tf.compat.v1.Variable(tf.zeros(SHAPE, tf.bool), name="mask",
                                 trainable=False)
    spec = tfpartial.freeze(x, mask) | tfpartial.freeze(x, frozen)
    spec.minimize(tf.compat.v1.train.GradientDescentOptimizer(0.1),
                  tf.reduce_sum(x))
    contents = [op.get_attr("value").tensor_content
                for op in graph.get_operations()
                if op.type == "Const" and op.get_attr("dtype") == tf.bool
                and op.outputs[0].shape == SHAPE]
    # One, though the mask and the restore both read it.
    assert [len(c) for c in contents] == [frozen.size]


needs_shared_masks = pytest.mark.skipif(
    not _tensors.shares_masks(),
    reason=f"TensorFlow {tf.__version__}'s DLPack takes no bool arrays: "
    "each eager mask tensor is a copy, two bytes an element")


@needs_shared_masks
def test_the_eager_mask_tensor_shares_the_spec_s_memory():
  x = tf.Variable(tf.zeros(SHAPE))
  spec = tfpartial.freeze(x, _random_mask(SHAPE))
  selection = helpers.selection_of(spec, x)
  tensor = _tensors.frozen_mask_tensor(selection)
  assert np.shares_memory(np.asarray(tensor), selection.mask)
  np.testing.assert_array_equal(tensor.numpy(), spec.frozen_mask(x))
  for mask in (selection.mask, spec.frozen_mask(x)):  # Still read-only,
    assert mask.flags.writeable == (mask is not selection.mask)  # copies not.


@needs_shared_masks
def test_the_union_of_two_masks_shares_its_memory_too():
  x = tf.Variable(tf.zeros(SHAPE))
  spec = (tfpartial.freeze(x, _random_mask(SHAPE, 2))
          | tfpartial.train_only(x, _random_mask(SHAPE, 3)))
  selection = helpers.selection_of(spec, x)
  tensor = _tensors.frozen_mask_tensor(selection)
  assert np.shares_memory(np.asarray(tensor), selection.mask)
  np.testing.assert_array_equal(
      tensor.numpy(), _random_mask(SHAPE, 2) | ~_random_mask(SHAPE, 3))


def test_an_element_mask_is_scanned_once_not_at_every_step():
  x = tf.Variable(tf.zeros(SHAPE))
  selection = helpers.selection_of(tfpartial.freeze(x, _random_mask(SHAPE)), x)
  assert not selection.is_empty and selection.frozen_count > 0
  # Cached on the immutable selection: later steps read no mask.
  assert {"is_empty", "frozen_count"} <= set(vars(selection))


_MEMORY_CHILD = textwrap.dedent("""
    import re, resource, sys
    import numpy as np, tensorflow as tf, tfpartial
    from tfpartial._frozen import _tensors

    def resident():
      with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()

    def peak():
      with open("/proc/self/status") as status:
        return 1024 * int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read())[1])

    size = int(sys.argv[1])
    x = tf.Variable(tf.zeros([size // 1000, 1000], tf.bool))
    mask = np.zeros(x.shape, bool)
    mask[:, ::2] = True
    # Warm up the code on a small spec first.
    small = tf.Variable(tf.zeros([10, 1000]))
    def selection_of(spec, variable):
      value = getattr(spec, "_value", None)
      return (value.selection(variable) if value is not None
              else spec._selection(variable))

    _tensors.frozen_mask_tensor(
        selection_of(tfpartial.freeze(small, mask[:10]), small))
    with open("/proc/self/clear_refs", "w") as clear:
      clear.write("5")  # The peak is now the resident size.
    before = resident()
    spec = tfpartial.freeze(x, mask)
    tensor = _tensors.frozen_mask_tensor(selection_of(spec, x))
    held, highest = resident() - before, peak() - before
    assert tensor.numpy()[0, 0] and not tensor.numpy()[0, 1]
    print(held / size, highest / size)
""")


@needs_shared_masks
@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"),
                    reason="reads the resident and peak size from /proc (Linux)")
def test_an_element_spec_holds_at_most_one_byte_an_element():
  size = 50_000_000
  result = subprocess.run(
      [sys.executable, "-c", _MEMORY_CHILD, str(size)], capture_output=True,
      text=True, timeout=300, check=False,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  held, highest = map(float, result.stdout.split()[-2:])
  # One byte an element, and a margin well below a second copy.
  assert held <= 1.2, f"{held:.2f} bytes an element held"
  assert highest <= 1.2, f"{highest:.2f} bytes an element at the peak"
