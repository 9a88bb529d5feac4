"""What a step builds: every select goes to the v1 `Select` kernel, but a
large gradient's mask, against a scalar zero.

`tf.where` builds `SelectV2`, which broadcasts: measured in `tf.function`
on CPU, 0.3 ms against `Select`'s 0.11 ms per 1M float32 elements. The
masks and restores are most of what tfpartial adds to a dense step. These
tests look at the ops, not at the clock. They are of the unfused step (what
a GPU runs): the compiled kernels, which need no select, are off.
"""

import weakref

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._step import _mask

SHAPE = (6, 4, 3)
RNG = np.random.default_rng(3)
VALUE = RNG.normal(size=SHAPE).astype(np.float32)
IDS = np.array([0, 2, 2, 5])


def _element_spec(table):
  return tfpartial.freeze(table, RNG.random(SHAPE) < 0.3)


def _row_spec(table):
  return tfpartial.freeze(table, [1, 2])


def _dynamic_spec(table):
  mask = tf.Variable(RNG.random(SHAPE) < 0.3, name="mask")
  return tfpartial.freeze(table, mask)


SPECS = {"elements": _element_spec, "rows": _row_spec,
         "dynamic": _dynamic_spec}
# Dense gradients (matmul-like use), and sparse ones with an optimizer
# whose sparse update is lazy, so only the batch's rows are restored.
LOOKUPS = {"dense": lambda table: table * 2.0,
           "sparse": lambda table: tf.gather(table, IDS)}


@pytest.fixture(autouse=True)
def _unfused(monkeypatch):
  helpers.unfused(monkeypatch)


def _build_step(make_spec, lookup):
  table = tf.Variable(VALUE, name="table")
  spec = make_spec(table)
  optimizer = tf.compat.v1.train.MomentumOptimizer(0.1, momentum=0.9)

  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(lookup(table)))
    grads = tape.gradient(loss, [table])
    spec.apply_gradients(optimizer, zip(grads, [table]))

  return step


def _select_ops(graph):
  return [op.type for op in graph.get_operations()
          if op.type in ("Select", "SelectV2") and "tfpartial" in op.name]


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
@pytest.mark.parametrize("kind", sorted(SPECS))
def test_masks_and_restores_use_the_v1_select_kernel(kind, lookup):
  graph = tf.Graph()
  with graph.as_default():
    _build_step(SPECS[kind], LOOKUPS[lookup])()
  traced = tf.function(_build_step(SPECS[kind], LOOKUPS[lookup]))
  function_graph = traced.get_concrete_function().graph
  for ops in (_select_ops(graph), _select_ops(function_graph)):
    # One select masks the gradient, one restores the frozen values.
    assert ops == ["Select", "Select"], ops


def _ancestors(op):
  """Every op `op` waits for, through inputs and control inputs."""
  seen, stack = set(), [op]
  while stack:
    current = stack.pop()
    for parent in [t.op for t in current.inputs] + list(
        current.control_inputs):
      if parent not in seen:
        seen.add(parent)
        stack.append(parent)
  return seen


@pytest.mark.parametrize("name", ["GradientDescent", "Adam"])
def test_with_ref_variables_no_write_comes_before_every_gradient(name):
  """docs: with TF1 ref variables, which update in place, a step waits
  for every gradient before it writes any variable, so no gradient reads
  a half-updated variable; plain TF1 races there. Here x's gradient
  reads y and y's reads x."""
  make = getattr(tf.compat.v1.train, f"{name}Optimizer")
  with tf.Graph().as_default():
    x = tf.compat.v1.Variable([1.0, 2.0], name="x", use_resource=False)
    y = tf.compat.v1.Variable([3.0, 4.0], name="y", use_resource=False)
    grads = tf.compat.v1.gradients(tf.reduce_sum(x * y), [x, y])
    plain = make(0.1).apply_gradients(zip(grads, [x, y]))
    partial = tfpartial.freeze(x, 0).apply_gradients(make(0.1),
                                                     zip(grads, [x, y]))

  def waits(train_op):
    """For each op of the step that writes x or y: whether it waits for
    both gradients."""
    step = _ancestors(train_op) | {train_op}
    writes = [op for op in step if op.type != "Identity" and any(
        t.op in (x.op, y.op) for t in op.inputs)]
    assert len(writes) >= 2, [op.name for op in writes]
    return [all(g.op in _ancestors(op) for g in grads) for op in writes]

  assert all(waits(partial))
  assert not all(waits(plain))  # Plain TF1's update of y may come first.


# A variable this large masks its gradient against a scalar zero (see
# `_mask.py`); smaller ones use `Select` against a zeros tensor.
LARGE = (1 << 15, 64)


def _large_step(make_spec, lookup):
  table = tf.Variable(tf.ones(LARGE), name="large")
  spec = make_spec(table)
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)

  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(lookup(table) * np.float32(np.nan))
    grads = tape.gradient(loss, [table])
    spec.apply_gradients(optimizer, zip(grads, [table]))

  return table, spec, step


LARGE_SPECS = {
    "elements": lambda t: tfpartial.freeze(t, np.random.default_rng(
        4).random(LARGE) < 0.5),
    "rows": lambda t: tfpartial.freeze(t, np.s_[::2]),
    "dynamic": lambda t: tfpartial.freeze(t, tf.Variable(
        np.random.default_rng(5).random(LARGE) < 0.5)),
}


def _mask_ops(graph):
  return [op for op in graph.get_operations()
          if op.name.split("/")[-2:-1] == ["tfpartial_mask"]
          or "tfpartial_mask/" in op.name]


def test_the_scalar_mask_starts_at_large():
  assert int(np.prod(LARGE)) == _mask.SCALAR_FROM


@pytest.mark.parametrize("kind", sorted(LARGE_SPECS))
def test_a_large_gradient_is_masked_against_a_scalar_zero(kind):
  """No zeros tensor the size of the gradient: `SelectV2` against a scalar
  0, whose output can take the gradient's buffer in a function. The frozen
  elements still keep their bits though every gradient is NaN. (A sparse
  gradient's values go by their own size, usually small.)"""
  graph = tf.Graph()
  with graph.as_default():
    _large_step(LARGE_SPECS[kind], LOOKUPS["dense"])[2]()
  table, spec, step = _large_step(LARGE_SPECS[kind], LOOKUPS["dense"])
  traced = tf.function(step)
  function_graph = traced.get_concrete_function().graph
  for built in (graph, function_graph):
    ops = _mask_ops(built)
    selects = [op for op in ops if op.type in ("Select", "SelectV2")]
    assert [op.type for op in selects] == ["SelectV2"], [
        op.type for op in ops]
    assert selects[0].inputs[1].shape.rank == 0  # The scalar zero.
    assert not [op.type for op in ops if op.type in ("ZerosLike", "Fill")]
  before = table.numpy()
  traced()
  frozen = spec.frozen_mask(table)
  after = table.numpy()
  assert np.array_equal(after[frozen].view(np.uint32),
                        before[frozen].view(np.uint32))
  assert np.isnan(after[~frozen]).all()


@pytest.mark.parametrize("name", ["Momentum", "Adam", "Ftrl"])
def test_tf1_restores_wait_only_for_their_own_variables_update(
    name, monkeypatch):
  """In a TF1 graph each restore waits for its variable's update, not the
  whole apply: x's restore may run while y is still being updated. (The
  unfused step: a compiled kernel needs no restore.)"""
  make = getattr(tf.compat.v1.train, f"{name}Optimizer")
  args = {"Momentum": dict(momentum=0.9)}.get(name, {})
  with tf.Graph().as_default() as graph:
    x = tf.compat.v1.Variable(tf.ones([4, 3]), name="x", use_resource=True)
    y = tf.compat.v1.Variable(tf.ones([4, 3]), name="y", use_resource=True)
    loss = tf.reduce_sum(x * 2.0) + tf.reduce_sum(y * 3.0)
    spec = tfpartial.freeze(x, 0) | tfpartial.freeze(y, 1)
    train_op = spec.minimize(make(0.1, **args), loss)
    updates = {v.op.name: [op for op in graph.get_operations()
                           if op.type.startswith("ResourceApply")
                           and v.handle in list(op.inputs)]
               for v in (x, y)}
    restores = {v.op.name: [op for op in graph.get_operations()
                            if "tfpartial_restore" in op.name
                            and op.type == "AssignVariableOp"
                            and v.handle in list(op.inputs)]
                for v in (x, y)}
    assert all(len(ops) == 1 for ops in updates.values()), updates
    for mine, other in (("x", "y"), ("y", "x")):
      ancestors = _ancestors(restores[mine][0])
      assert updates[mine][0] in ancestors
      assert updates[other][0] not in ancestors
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(3):
        session.run(train_op)
      x_value, y_value = session.run([x, y])
  assert np.array_equal(x_value[0].view(np.uint32),
                        np.ones(3, np.float32).view(np.uint32))
  assert np.array_equal(y_value[1].view(np.uint32),
                        np.ones(3, np.float32).view(np.uint32))
  assert not np.any(x_value[1:] == 1.0) and not np.any(y_value[0] == 1.0)


class _CondGradientDescent(tf.compat.v1.train.GradientDescentOptimizer):
  """Updates inside `tf.cond`, as loss-scaling and accumulating optimizers
  do: under TF1 control flow the variable's handle reaches the update
  through a `Switch`."""

  def _resource_apply_dense(self, grad, handle):
    parent = super()._resource_apply_dense
    return tf.cond(tf.reduce_all(tf.math.is_finite(grad)),
                   lambda: parent(grad, handle), tf.no_op)


@pytest.mark.parametrize("control_flow", ["v1", "v2"])
def test_tf1_restores_wait_for_an_update_inside_control_flow(control_flow):
  """Wherever the update is (behind a `Switch` of TF1 control flow, in a
  branch of TF2's `If`), the restore runs after it: else it reads the
  variable before the update and writes the old trainable values back (a
  lost update), or the optimizer writes frozen elements after the restore.
  A session lowers an `If`, and a control edge on the `If` itself then waits
  only for its branch to start: the restore must wait for its outputs."""
  v2 = tf.compat.v1.control_flow_v2_enabled()
  if control_flow == "v1":
    tf.compat.v1.disable_control_flow_v2()
  else:
    tf.compat.v1.enable_control_flow_v2()
  steps = 10
  try:
    with tf.Graph().as_default() as graph:
      x = tf.compat.v1.Variable(tf.ones([4, 3]), name="x", use_resource=True)
      y = tf.compat.v1.Variable(tf.ones([4, 3]), name="y", use_resource=True)
      loss = tf.reduce_sum(x * 2.0) + tf.reduce_sum(y * 3.0)
      spec = tfpartial.freeze(x, 0) | tfpartial.freeze(y, 1)
      train_op = spec.minimize(_CondGradientDescent(0.1), loss)
      ops = graph.get_operations()
      applies = [op for op in ops if op.type == "ResourceApplyGradientDescent"]
      ifs = [op for op in ops if op.type in ("If", "StatelessIf")]
      assert len(applies if control_flow == "v1" else ifs) == 2
      # An `If` is done when its outputs are, not when the op "is".
      updates = applies or [consumer for op in ifs for out in op.outputs
                            for consumer in out.consumers()]
      restores = [op for op in ops if "tfpartial_restore" in op.name
                  and op.type == "AssignVariableOp"]
      assert len(restores) == 2, restores
      for restore in restores:
        assert set(updates) & _ancestors(restore), (
            f"{restore.name} does not wait for an update")
      with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        for _ in range(steps):
          session.run(train_op)
        x_value, y_value = session.run([x, y])
  finally:
    if v2:
      tf.compat.v1.enable_control_flow_v2()
    else:
      tf.compat.v1.disable_control_flow_v2()
  ones = np.ones(3, np.float32).view(np.uint32)
  assert np.array_equal(x_value[0].view(np.uint32), ones)
  assert np.array_equal(y_value[1].view(np.uint32), ones)
  # No update lost: every step moved the trainable elements (lr * slope).
  x_expected, y_expected = np.float32(1.0), np.float32(1.0)
  for _ in range(steps):
    x_expected -= np.float32(0.1) * np.float32(2.0)
    y_expected -= np.float32(0.1) * np.float32(3.0)
  np.testing.assert_allclose(x_value[1:], x_expected, rtol=1e-6)
  np.testing.assert_allclose(y_value[[0, 2, 3]], y_expected, rtol=1e-6)


@pytest.mark.parametrize("family", ["v1", "keras"])
def test_eagerly_the_masked_gradients_are_freed_before_the_restore(
    family, monkeypatch):
  """Eagerly a masked gradient lives as long as something holds it: the
  step lets them go once the optimizer has run, so the restore's select
  can take their memory (the peak of an eager step, bench row (m))."""
  from tfpartial._step import _restore  # pylint: disable=import-outside-toplevel
  masked, alive_at_restore = [], []
  original_mask, original_after = _mask.mask_gradient, (
      _restore.DenseGuard.after)

  def mask_gradient(grad, selection):
    result = original_mask(grad, selection)
    masked.append(weakref.ref(result))
    return result

  def after(self, token):
    alive_at_restore.append([ref() is not None for ref in masked])
    return original_after(self, token)

  monkeypatch.setattr(_mask, "mask_gradient", mask_gradient)
  monkeypatch.setattr(_restore.DenseGuard, "after", after)
  if family == "keras":
    keras = pytest.importorskip("keras")
    optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
  else:
    optimizer = tf.compat.v1.train.MomentumOptimizer(0.1, momentum=0.9)
  table = tf.Variable(VALUE, name="table")
  spec = _element_spec(table)
  before = table.numpy()
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.square(table * 2.0))
  grads = tape.gradient(loss, [table])
  spec.apply_gradients(optimizer, zip(grads, [table]))
  assert alive_at_restore == [[False]]
  frozen = spec.frozen_mask(table)
  assert np.array_equal(table.numpy()[frozen].view(np.uint32),
                        before[frozen].view(np.uint32))
