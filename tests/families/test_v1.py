"""The tf.compat.v1.train family: wrap, legacy minimize, slots, checkpoints."""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import problems
import tfpartial
from tfpartial._kernels import _native
from problems import B0, X0, X_FROZEN

V1 = tf.compat.v1


def test_wrapped_optimizer_is_still_its_class():
  x = tf.Variable([1.0, 2.0], name="x")
  optimizer = V1.train.MomentumOptimizer(0.1, 0.9)
  wrapped = tfpartial.freeze(x, 0).wrap(optimizer)
  assert isinstance(wrapped, V1.train.MomentumOptimizer)
  assert isinstance(wrapped, V1.train.Optimizer)
  assert wrapped is not optimizer
  assert wrapped.get_name() == optimizer.get_name()
  assert type(optimizer) is V1.train.MomentumOptimizer, "wrap changed its input"


def test_wrapped_shares_state_with_the_original():
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  optimizer = V1.train.AdamOptimizer(0.1)
  wrapped = tfpartial.freeze(x, 0).wrap(optimizer)
  wrapped.minimize(lambda: tf.reduce_sum(x * x), var_list=[x])
  assert optimizer.get_slot(x, "m") is wrapped.get_slot(x, "m")
  assert sorted(v.name for v in optimizer.variables()) == sorted(
      v.name for v in wrapped.variables())
  assert x.numpy()[0] == 1.0 and x.numpy()[1] != 2.0


def test_wrapping_a_wrapped_optimizer_freezes_the_union():
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  optimizer = V1.train.GradientDescentOptimizer(0.1)
  wrapped = tfpartial.freeze(x, 2).wrap(tfpartial.freeze(x, 0).wrap(optimizer))
  # One wrapper over the optimizer's own class, not a wrapper of a wrapper.
  assert type(wrapped)._tfpartial_base is V1.train.GradientDescentOptimizer
  assert sum("_tfpartial_base" in vars(cls)
             for cls in type(wrapped).__mro__) == 1
  wrapped.minimize(lambda: tf.reduce_sum(x * x), var_list=[x])
  np.testing.assert_array_equal(x.numpy()[[0, 2]], [1.0, 3.0])
  assert x.numpy()[1] != 2.0


def test_compute_gradients_masks_and_keeps_every_pair(exact_mode):
  with exact_mode.runner() as runner:
    model = problems.Model.build(runner)
    wrapped = model.spec().wrap(V1.train.GradientDescentOptimizer(0.1))
    if runner.graph:
      pairs = wrapped.compute_gradients(model.loss(), var_list=model.variables)
      values = runner.run([g for g, _ in pairs])
    else:
      pairs = wrapped.compute_gradients(model.loss, var_list=model.variables)
      values = [g.numpy() for g, _ in pairs]
  # Fully frozen b keeps its pair, with a zero gradient: the optimizer then
  # makes its slots, as in a plain run.
  assert [v.name for _, v in pairs] == ["x:0", "b:0", "c:0"]
  helpers.assert_same_bits(values[1], np.zeros_like(values[1]), "b")
  helpers.assert_same_bits(values[0][X_FROZEN],
                           np.zeros(X_FROZEN.sum(), np.float32),
                           "Inf/NaN gradients of frozen x")
  assert np.isfinite(values[0]).all() and (values[0][~X_FROZEN] != 0).all()


def _graph_train(use_tfpartial, steps=3):
  """A TF1 script: default var_list, global_step, Saver. Returns names, values."""
  graph = tf.Graph()
  with graph.as_default():
    model = problems.Model(
        V1.Variable(X0, name="x"), V1.Variable(B0, name="b"),
        V1.Variable(problems.C0, name="c"), V1.train.get_or_create_global_step())
    optimizer = V1.train.AdamOptimizer(0.05)
    loss = model.loss(poison=use_tfpartial)
    if use_tfpartial:
      train_op = model.spec().wrap(optimizer).minimize(
          loss, global_step=model.global_step)
    else:
      train_op = optimizer.minimize(loss, global_step=model.global_step)
    init = V1.global_variables_initializer()
    uninitialized = V1.report_uninitialized_variables()
    with V1.Session() as session:
      session.run(init)
      assert session.run(uninitialized).size == 0
      for _ in range(steps):
        session.run(train_op)
      values = session.run({v.op.name: v for v in V1.global_variables()})
    graph.is_ref = model.x.dtype != model.x.dtype.base_dtype
  return values, graph


@pytest.mark.parametrize("kernels", ["on", "off"])
def test_legacy_minimize_in_a_graph_uses_default_var_list_and_global_step(
    kernels, monkeypatch):
  monkeypatch.setenv(_native.SWITCH, kernels)
  values, graph = _graph_train(use_tfpartial=True)
  assert values["global_step"] == 3
  helpers.assert_same_bits(values["x"][X_FROZEN], X0[X_FROZEN], "frozen x")
  helpers.assert_same_bits(values["b"], B0, "fully frozen b")
  assert "b/Adam" in values, "fully frozen b has no slots, unlike a plain run"
  fused = any(op.type.startswith("Tfpartial") for op in graph.get_operations())
  assert fused == (kernels == "on" and _native.compiler() is not None)
  # A ref variable's snapshot needs a shadow variable, a resource read is
  # one, and with the compiled kernel (v1 Adam) there is no snapshot.
  shadows = [op for op in graph.get_operations()
             if op.name.endswith("tfpartial_shadow")]
  assert bool(shadows) == (graph.is_ref and not fused)


def test_checkpoints_are_the_same_with_and_without_tfpartial(tmp_path):
  """Shadow state is in no collection, and a wrapped optimizer makes the
  slots a plain one makes: Saver files load both ways."""
  with_values, _ = _graph_train(use_tfpartial=True)
  without_values, _ = _graph_train(use_tfpartial=False)
  assert not any("tfpartial" in name for name in with_values)
  assert set(with_values) == set(without_values)
  for writer, reader in ((True, False), (False, True)):
    with tf.Graph().as_default():
      x = V1.Variable(X0 + 1.0, name="x")
      saver = V1.train.Saver([x])
      with V1.Session() as session:
        session.run(x.initializer)
        path = saver.save(session, str(tmp_path / f"from_{writer}"))
    del reader  # Both graphs hold a plain `x`: the file is the same shape.
    with tf.Graph().as_default():
      x = V1.Variable(X0, name="x")
      step = tfpartial.freeze(x, 0).minimize(
          V1.train.GradientDescentOptimizer(0.1), tf.reduce_sum(x * x))
      with V1.Session() as session:
        V1.train.Saver().restore(session, path)
        session.run(step)
        helpers.assert_same_bits(session.run(x)[0], X0[0] + 1.0, "restored")


def test_monitored_training_session_runs_the_train_op(tmp_path):
  with tf.Graph().as_default():
    x = V1.Variable(X0, name="x")
    gs = V1.train.get_or_create_global_step()
    train_op = tfpartial.train_only(x, np.eye(3, 4, dtype=bool)).minimize(
        V1.train.MomentumOptimizer(0.1, 0.9), tf.reduce_sum(tf.sin(x)),
        global_step=gs)
    with V1.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_checkpoint_steps=2,
        hooks=[V1.train.StopAtStepHook(last_step=5)]) as session:
      while not session.should_stop():
        session.run(train_op)
    reader = tf.train.load_checkpoint(str(tmp_path))
    final = reader.get_tensor("x")
  frozen = ~np.eye(3, 4, dtype=bool)
  helpers.assert_same_bits(final[frozen], X0[frozen], "frozen x")
  assert (final[~frozen] != X0[~frozen]).all()
  assert reader.get_tensor("global_step") == 5
  assert not any("tfpartial" in name
                 for name in reader.get_variable_to_shape_map())


def test_tf2_checkpoint_of_a_wrapped_optimizer_matches_the_plain_one(tmp_path):
  def keys(wrap):
    x = tf.Variable([1.0, 2.0], name="x")
    optimizer = V1.train.AdamOptimizer(0.1)
    if wrap:
      optimizer = tfpartial.freeze(x, 0).wrap(optimizer)
    optimizer.minimize(lambda: tf.reduce_sum(x * x), var_list=[x])
    path = tf.train.Checkpoint(x=x, optimizer=optimizer).save(
        str(tmp_path / f"wrap_{wrap}"))
    return sorted(name for name, _ in tf.train.list_variables(path))

  assert keys(wrap=True) == keys(wrap=False)


@pytest.mark.parametrize("entry", ["spec_minimize", "wrap_minimize"])
def test_eager_minimize_without_var_list_trains_what_the_tape_watches(entry):
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  b = tf.Variable([5.0], name="b")
  spec = tfpartial.freeze(x, 1) | tfpartial.freeze(b)
  optimizer = V1.train.AdamOptimizer(0.1)
  loss = lambda: tf.reduce_sum(x * x) + tf.reduce_sum(b * b)
  if entry == "spec_minimize":
    spec.minimize(optimizer, loss)
  else:
    spec.wrap(optimizer).minimize(loss)
  assert x.numpy()[1] == 2.0 and b.numpy()[0] == 5.0
  assert x.numpy()[0] != 1.0
  # spec.minimize leaves fully frozen b out; a wrapped optimizer keeps a
  # plain run's slots.
  assert (optimizer.get_slot(b, "m") is None) == (entry == "spec_minimize")
