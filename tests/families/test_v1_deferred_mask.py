"""A wrapped tf.compat.v1 optimizer's `minimize` in a graph costs what
`spec.minimize` costs: `compute_gradients` masks the gradients only for
whoever reads them, and `apply_gradients` steps with the gradients they
masked (`_step/_deferred.py`); what is read between the two is still
masked exactly."""

import collections

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

V1 = tf.compat.v1
RNG = np.random.default_rng(11)
W0 = RNG.normal(size=(24, 16)).astype(np.float32)
INPUTS = RNG.normal(size=(8, 24)).astype(np.float32)
TRAIN = RNG.random(W0.shape) < 0.3
SPARSE = RNG.random(W0.shape) < 0.05  # Under 1/8: a compact step's offsets.
# The gradient a poisoned loss gives: NaN and Inf where frozen.
POISON = np.where(RNG.random(W0.shape) < 0.5, np.nan, np.inf).astype(
    np.float32)

# (kind, trainable mask, compact, kernel on): the step's paths.
PATHS = {"kernel": (TRAIN, False, True), "packed kernel": (TRAIN, False, True),
         "unfused": (TRAIN, False, False), "compact": (SPARSE, True, True)}


@pytest.fixture(params=sorted(PATHS))
def path(request, monkeypatch):
  train, compact, kernel = PATHS[request.param]
  if kernel:
    request.getfixturevalue("compiled_kernel")
  else:
    helpers.unfused(monkeypatch)
  if request.param == "packed kernel":
    from tfpartial._kernels import _inputs  # pylint: disable=g-import-not-at-top
    monkeypatch.setattr(_inputs, "PACKED_FROM", 8)
  return train, compact


def _loss(w, train):
  """A loss whose gradient is NaN or Inf at frozen elements of `w`."""
  poison = tf.constant(np.where(train, 0, POISON), tf.float32)
  return tf.reduce_sum(tf.square(tf.matmul(INPUTS, w))) + tf.reduce_sum(
      tf.stop_gradient(w) * 0 + w * poison)


def _graph(train, compact, entry, steps=3):
  """A TF1 graph training W0 with v1 Adam through `entry`: the values of w
  and its slots after `steps` steps, the gradients read at each step (for
  "compute+apply"), and the op types the train op runs."""
  graph = tf.Graph()
  with graph.as_default():
    w = V1.Variable(W0, name="w", use_resource=True)
    spec = tfpartial.train_only(w, train, compact=compact)
    optimizer = V1.train.AdamOptimizer(0.1)
    loss = _loss(w, train)
    grads = []
    if entry == "spec.minimize":
      train_op = spec.minimize(optimizer, loss)
    elif entry == "wrap().minimize":
      train_op = spec.wrap(optimizer).minimize(loss)
    else:
      wrapped = spec.wrap(optimizer)
      pairs = wrapped.compute_gradients(loss)
      grads = [g for g, _ in pairs]
      train_op = wrapped.apply_gradients(pairs)
    ran = _ancestors(train_op)
    if grads:  # What the user reads is not what the train op runs.
      assert not {g.op for g in grads} & ran, "the train op runs the mask"
    with V1.Session(graph=graph) as session:
      session.run(V1.global_variables_initializer())
      read = [session.run([train_op] + grads)[1:] for _ in range(steps)]
      slots = [session.run(v) for v in optimizer.variables()]
      return session.run(w), slots, read, ran, graph


def _ancestors(op):
  """Every op `op` needs, by data or control edges."""
  seen, todo = set(), [op]
  while todo:
    node = todo.pop()
    if node in seen:
      continue
    seen.add(node)
    todo.extend(t.op for t in node.inputs)
    todo.extend(node.control_inputs)
  return seen


def test_wrapped_minimize_runs_what_spec_minimize_runs(path):
  train, compact = path
  w, slots, _, ran, _ = _graph(train, compact, "wrap().minimize")
  w_ref, slots_ref, _, ran_ref, _ = _graph(train, compact, "spec.minimize")
  helpers.assert_same_bits(w, w_ref, "w")
  helpers.assert_same_bits(w[~train], W0[~train], "frozen")
  for slot, slot_ref in zip(slots, slots_ref):
    helpers.assert_same_bits(slot, slot_ref, "slot")
  # The same ops: no mask of compute_gradients' runs in the train op.
  assert (collections.Counter(op.type for op in ran)
          == collections.Counter(op.type for op in ran_ref))


def test_gradients_read_between_compute_and_apply_are_exactly_masked(path):
  train, compact = path
  w, _, read, _, _ = _graph(train, compact, "compute+apply")
  w_ref, _, _, _, _ = _graph(train, compact, "spec.minimize")
  helpers.assert_same_bits(w, w_ref, "w")
  for (grad,) in read:
    helpers.assert_same_bits(grad[~train], np.zeros((~train).sum(), np.float32),
                             "a read gradient where frozen (NaN/Inf there)")
    assert np.isfinite(grad).all() and (grad[train] != 0).all()


def test_no_bool_mask_enters_the_graph_where_the_kernel_takes_it_packed(
    compiled_kernel, monkeypatch):
  from tfpartial._kernels import _inputs  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(_inputs, "PACKED_FROM", 8)
  _, _, read, _, graph = _graph(TRAIN, False, "compute+apply", steps=1)
  constants = [op for op in graph.get_operations() if op.type == "Const"]
  assert not [op for op in constants
              if op.get_attr("dtype") == tf.bool
              and op.outputs[0].shape.num_elements() == W0.size]
  assert [op for op in constants if op.get_attr("dtype") == tf.uint8
          and op.outputs[0].shape.num_elements() == W0.size // 8]
  helpers.assert_same_bits(read[0][0][~TRAIN],
                           np.zeros((~TRAIN).sum(), np.float32), "frozen")


def test_gradients_changed_between_compute_and_apply_are_applied(
    compiled_kernel):
  """A gradient the user made from the masked one is not compute's: the
  step takes it as it is given."""
  graph = tf.Graph()
  with graph.as_default():
    w = V1.Variable(W0, name="w", use_resource=True)
    small = V1.Variable(W0[TRAIN], name="small", use_resource=True)
    spec = tfpartial.train_only(w, TRAIN)
    wrapped = spec.wrap(V1.train.GradientDescentOptimizer(0.1))
    pairs = wrapped.compute_gradients(_loss(w, TRAIN), var_list=[w])
    doubled = [(2 * g, v) for g, v in pairs]
    train_op = wrapped.apply_gradients(doubled)
    grad = tf.convert_to_tensor(pairs[0][0])
    reference = V1.train.GradientDescentOptimizer(0.1).apply_gradients(
        [(2 * tf.boolean_mask(grad, TRAIN), small)])
    with V1.Session(graph=graph) as session:
      session.run(V1.global_variables_initializer())
      session.run([train_op, reference])
      after, expected = session.run([w, small])
  helpers.assert_same_bits(after[~TRAIN], W0[~TRAIN], "frozen")
  helpers.assert_same_bits(after[TRAIN], expected, "trainable")


def test_a_masked_gradient_given_to_another_spec_is_not_unmasked(
    compiled_kernel):
  """compute_gradients of one spec's optimizer, applied by another's that
  freezes less: the step gets the masked gradient, zeros where the first
  spec froze."""
  graph = tf.Graph()
  with graph.as_default():
    w = V1.Variable(W0, name="w", use_resource=True)
    loss = tf.reduce_sum(tf.square(tf.matmul(INPUTS, w)))
    first = tfpartial.train_only(w, TRAIN).wrap(
        V1.train.GradientDescentOptimizer(0.1))
    second = tfpartial.freeze(w, 0).wrap(V1.train.GradientDescentOptimizer(0.1))
    pairs = first.compute_gradients(loss)
    train_op = second.apply_gradients(pairs)
    with V1.Session(graph=graph) as session:
      session.run(V1.global_variables_initializer())
      grad = session.run(pairs[0][0])
      session.run(train_op)
      after = session.run(w)
  moved = after != W0
  # Rows past 0 move exactly where the first spec let them train.
  np.testing.assert_array_equal(moved[1:], (TRAIN & (grad != 0))[1:])
  helpers.assert_same_bits(after[0], W0[0], "row 0, frozen by the second")
