"""Real training code with the one line a user adds: exact, in every mode.

BERT-style optimization code (gradients -> `spec.mask` -> global-norm clip
-> a wrapped optimizer's `apply_gradients`) in a TF1 graph with a custom
optimizer of BERT's kind and with a built-in one, and its TF2 form (tape,
`spec.mask`, clip, wrapped `apply_gradients`) eagerly and in `tf.function`,
for each optimizer family; tf-slim's `--trainable_scopes` and a
`MonitoredTrainingSession` with batch norm's `UPDATE_OPS`. Each is
compared with the split-variable reference, and every frozen element is
checked bit for bit after every step.
"""

import numpy as np
import pytest
import tensorflow as tf

import bert_problem as bert
import helpers
import tfpartial

STEPS = 6
TF1_MODES = (helpers.TF1_GRAPH, helpers.TF1_GRAPH_REF)

# BERT's optimizer has no bias correction: its first steps are about
# 3 * learning_rate, so it gets the smaller rate.
V1_OPTIMIZERS = {
    "bert_AdamWeightDecay": lambda: bert.AdamWeightDecay(
        0.01, weight_decay_rate=0.1),
    "Adam": lambda: tf.compat.v1.train.AdamOptimizer(0.05),
    "Momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.05, 0.9),
}


def _check_frozen(values, step):
  for name, frozen in bert.frozen_masks().items():
    helpers.assert_same_bits(values[name][frozen], bert.INITIAL[name][frozen],
                             f"frozen {name}, step {step}")


def _compare(trajectory, reference, tolerance=dict(rtol=1e-5, atol=1e-6)):
  """Frozen bits everywhere; trainable elements as the reference's."""
  assert len(trajectory) == len(reference) == STEPS
  for step, (values, expected) in enumerate(zip(trajectory, reference),
                                            start=1):
    _check_frozen(values, step)
    for name in bert.NAMES:
      np.testing.assert_allclose(values[name], expected[name], **tolerance,
                                 err_msg=f"{name}, step {step}")
  last = trajectory[-1]
  for name in ("word_embeddings", "kernel", "bias", "output_weights"):
    assert not np.array_equal(last[name], bert.INITIAL[name]), name


def test_the_problem_saturates_no_tanh_unit():
  """The oracle compares float32 runs to 1e-5: where tanh saturates, its
  gradient is round-off, and two equal computations differ by more."""
  hidden = np.tanh(bert.pre_activations())
  assert np.min(1.0 - hidden**2) > 0.05


def _largest_difference(trajectory, reference):
  return max(float(np.max(np.abs(values[name] - expected[name])))
             for values, expected in zip(trajectory, reference)
             for name in bert.NAMES)


# --- TF1: BERT's create_optimizer, in a graph and a Session ------------------


def _bert_tf1(mode, make_optimizer, wrapped=True, masked=True):
  """Trains the tiny BERT with BERT-style TF1 code; the values after each
  step, and the names of the graph's global variables (its checkpoint)."""
  with mode.runner() as runner:
    variables = bert.build(runner.variable)
    spec = bert.spec(variables)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    loss = bert.model_loss(variables)
    tvars = tf.compat.v1.trainable_variables()
    optimizer = make_optimizer()
    if wrapped:
      optimizer = spec.wrap(optimizer)
    train_op = bert.bert_train_op(loss, tvars, optimizer, global_step,
                                  mask=spec.mask if masked else None)
    trajectory = []
    for _ in range(STEPS):
      runner.run(train_op)
      trajectory.append(dict(zip(bert.NAMES, runner.run(variables))))
    steps_counted = runner.run(global_step)
    names = sorted(v.op.name for v in tf.compat.v1.global_variables())
  return trajectory, names, steps_counted


def _split_tf1(mode, make_optimizer):
  with mode.runner() as runner:
    split = bert.Split(
        runner.variable,
        lambda value, name: runner.variable(value, name, trainable=False))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    train_op = bert.bert_train_op(split.loss(), split.trainable,
                                  make_optimizer(), global_step)
    trajectory = []
    for _ in range(STEPS):
      runner.run(train_op)
      trajectory.append(split.as_model(runner.run(split.trainable)))
    steps_counted = runner.run(global_step)
  return trajectory, steps_counted


@pytest.mark.parametrize("name", sorted(V1_OPTIMIZERS))
@pytest.mark.parametrize("mode", TF1_MODES, ids=lambda mode: mode.name)
def test_bert_create_optimizer_with_one_added_line_is_exact(mode, name):
  make = V1_OPTIMIZERS[name]
  trajectory, names, steps_counted = _bert_tf1(mode, make)
  reference, reference_steps = _split_tf1(mode, make)
  _compare(trajectory, reference)
  assert steps_counted == reference_steps
  # The same variables as the plain run's, slots of the fully frozen
  # position embeddings included: its checkpoint loads both ways.
  _, plain_names, _ = _bert_tf1(mode, make, wrapped=False, masked=False)
  assert names == plain_names
  if name == "bert_AdamWeightDecay":
    assert "position_embeddings/adam_m" in names


@pytest.mark.parametrize("name", sorted(V1_OPTIMIZERS))
def test_bert_without_the_mask_line_clips_on_frozen_gradients(name):
  """The failure the added line fixes: the clip counts frozen gradients."""
  make = V1_OPTIMIZERS[name]
  trajectory, _, _ = _bert_tf1(helpers.TF1_GRAPH, make, masked=False)
  for step, values in enumerate(trajectory, start=1):
    _check_frozen(values, step)  # The freeze holds either way,
  reference, _ = _split_tf1(helpers.TF1_GRAPH, make)
  assert _largest_difference(trajectory, reference) > 1e-3  # the rest not.


# --- TF2: tape, spec.mask, clip, a wrapped optimizer -------------------------


def _tf2_optimizers():
  optimizers = {"v1_Adam": lambda: tf.compat.v1.train.AdamOptimizer(0.05)}
  if helpers.KERAS_3:
    import keras  # pylint: disable=g-import-not-at-top
    optimizers["keras_AdamW"] = lambda: keras.optimizers.AdamW(0.05, 0.1)
    try:
      import tf_keras  # pylint: disable=g-import-not-at-top
    except ImportError:
      tf_keras = None
  else:  # TensorFlow 2.15: `keras` is Keras 2.
    import keras as tf_keras  # pylint: disable=g-import-not-at-top
  if tf_keras is not None:
    optimizers["tf_keras_AdamW"] = lambda: tf_keras.optimizers.AdamW(0.05, 0.1)
    optimizers["tf_keras_legacy_Adam"] = (
        lambda: tf_keras.optimizers.legacy.Adam(0.05))
  return optimizers


TF2_OPTIMIZERS = _tf2_optimizers()


def _train_tf2(function, make_optimizer, variables, spec, trainable, values):
  optimizer = make_optimizer()
  if spec is not None:
    optimizer = spec.wrap(optimizer)

  def step():
    with tf.GradientTape() as tape:
      loss = (bert.model_loss(variables) if spec is not None
              else trainable.loss())
    tvars = variables if spec is not None else trainable.trainable
    grads = tape.gradient(loss, tvars)
    if spec is not None:
      grads = spec.mask(grads, tvars)  # The one added line.
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, tvars))

  if function:
    step = tf.function(step)
  trajectory = []
  for _ in range(STEPS):
    step()
    trajectory.append(values())
  return trajectory


@pytest.mark.parametrize("name", sorted(TF2_OPTIMIZERS))
@pytest.mark.parametrize("function", [False, True],
                         ids=["eager", "tf_function"])
def test_bert_tf2_form_with_one_added_line_is_exact(function, name):
  make = TF2_OPTIMIZERS[name]
  variables = bert.build(lambda value, n: tf.Variable(value, name=n))
  trajectory = _train_tf2(
      function, make, variables, bert.spec(variables), None,
      lambda: {n: v.numpy() for n, v in zip(bert.NAMES, variables)})
  split = bert.Split(lambda value, n: tf.Variable(value, name=n),
                     lambda value, n: tf.Variable(value, name=n,
                                                  trainable=False))
  reference = _train_tf2(
      function, make, None, None, split,
      lambda: split.as_model([v.numpy() for v in split.trainable]))
  _compare(trajectory, reference)


# --- tf-slim --trainable_scopes, MonitoredTrainingSession with batch norm ---

_SLIM_RNG = np.random.default_rng(20261203)
SLIM_X = _SLIM_RNG.normal(size=(8, 3)).astype(np.float32)
SLIM_LABELS = _SLIM_RNG.integers(0, 4, 8).astype(np.int32)
FEATURES0 = _SLIM_RNG.normal(size=(3, 5)).astype(np.float32)
LOGITS0 = _SLIM_RNG.normal(size=(5, 4)).astype(np.float32)
LOGIT_BIASES0 = _SLIM_RNG.normal(size=(4,)).astype(np.float32)
PRETRAINED_CLASSES = 2  # Columns 0, 1 of logits/weights stay; 2, 3 train.
SLIM_STEPS = 3


def _batch_norm(inputs, decay=0.9):
  """Batch norm in training mode as slim's `batch_norm` makes it: batch
  statistics, and moving averages updated by ops in `UPDATE_OPS`."""
  v1 = tf.compat.v1
  size = inputs.shape[-1]
  with v1.variable_scope("bn"):
    gamma = v1.get_variable("gamma", initializer=np.ones(size, np.float32))
    beta = v1.get_variable("beta", initializer=np.zeros(size, np.float32))
    moving_mean = v1.get_variable("moving_mean", trainable=False,
                                  initializer=np.zeros(size, np.float32))
    moving_variance = v1.get_variable("moving_variance", trainable=False,
                                      initializer=np.ones(size, np.float32))
  mean, variance = tf.nn.moments(inputs, [0])
  for average, value in ((moving_mean, mean), (moving_variance, variance)):
    v1.add_to_collection(v1.GraphKeys.UPDATE_OPS, v1.assign_sub(
        average, (average - value) * (1.0 - decay)))
  return tf.nn.batch_normalization(inputs, mean, variance, beta, gamma, 1e-3)


def _slim_network(split):
  """features (a kernel, batch norm in training mode) and logits; `split`:
  the reference, whose logits/weights hold only the new class columns."""
  v1 = tf.compat.v1
  with v1.variable_scope("features"):
    kernel = v1.get_variable("weights", initializer=FEATURES0)
    hidden = tf.nn.relu(_batch_norm(tf.matmul(SLIM_X, kernel)))
  with v1.variable_scope("logits"):
    if split:
      weights = tf.concat([
          v1.get_variable("pretrained", trainable=False,
                          initializer=LOGITS0[:, :PRETRAINED_CLASSES]),
          v1.get_variable("weights",
                          initializer=LOGITS0[:, PRETRAINED_CLASSES:])], 1)
    else:
      weights = v1.get_variable("weights", initializer=LOGITS0)
    biases = v1.get_variable("biases", initializer=LOGIT_BIASES0)
  logits = tf.matmul(hidden, weights) + biases
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=SLIM_LABELS, logits=logits))


def _slim_train_op(loss, optimizer, global_step, how):
  """How each codebase builds its train op, batch norm's UPDATE_OPS run
  with it."""
  v1 = tf.compat.v1
  update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
  # slim's _get_variables_to_train() for --trainable_scopes=logits.
  variables_to_train = v1.get_collection(
      v1.GraphKeys.TRAINABLE_VARIABLES, "logits")
  if how == "slim":  # train_image_classifier.py, via model_deploy.
    gradients = optimizer.compute_gradients(loss, var_list=variables_to_train)
    grad_updates = optimizer.apply_gradients(gradients,
                                             global_step=global_step)
    update_op = tf.group(*(update_ops + [grad_updates]))
    with tf.control_dependencies([update_op]):
      return tf.identity(loss, name="train_op")
  with tf.control_dependencies(update_ops):  # The batch norm docs' way.
    return optimizer.minimize(loss, global_step=global_step,
                              var_list=variables_to_train)


SLIM_NAMES = ("features/weights", "features/bn/gamma", "features/bn/beta",
              "features/bn/moving_mean", "features/bn/moving_variance",
              "logits/weights", "logits/biases")


def _slim_run(checkpoint_dir, use_resource, how, split=False, steps=SLIM_STEPS):
  """One MonitoredTrainingSession (a restart when `checkpoint_dir` has a
  checkpoint); the values after each step, by name."""
  with tf.Graph().as_default():
    with tf.compat.v1.variable_scope("", use_resource=use_resource):
      loss = _slim_network(split)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    # tf-slim's default optimizer settings.
    optimizer = tf.compat.v1.train.RMSPropOptimizer(
        0.01, decay=0.9, momentum=0.9, epsilon=1.0)
    if not split:
      variables = {v.op.name: v for v in tf.compat.v1.global_variables()}
      spec = tfpartial.freeze(variables["logits/weights"],
                              np.s_[:, :PRETRAINED_CLASSES])
      optimizer = spec.wrap(optimizer)
    train_op = _slim_train_op(loss, optimizer, global_step, how)
    variables = {v.op.name: v for v in tf.compat.v1.global_variables()
                 if v.op.name in SLIM_NAMES}
    trajectory = []
    with tf.compat.v1.train.MonitoredTrainingSession(
        checkpoint_dir=str(checkpoint_dir), save_summaries_steps=None,
        save_summaries_secs=None, log_step_count_steps=None) as session:
      for _ in range(steps):
        session.run(train_op)
        trajectory.append(session.run(variables))
  return trajectory


@pytest.mark.parametrize("how", ["slim", "control_dependencies"])
@pytest.mark.parametrize("use_resource", [True, False],
                         ids=["tf1_graph", "tf1_graph_ref"])
def test_slim_trainable_scopes_and_batch_norm_in_a_monitored_session(
    tmp_path, use_resource, how):
  trajectory = (_slim_run(tmp_path / "partial", use_resource, how)
                + _slim_run(tmp_path / "partial", use_resource, how))
  reference = _slim_run(tmp_path / "split", use_resource, how, split=True,
                        steps=2 * SLIM_STEPS)
  pretrained = LOGITS0[:, :PRETRAINED_CLASSES]
  for step, (values, expected) in enumerate(zip(trajectory, reference), 1):
    logits = values["logits/weights"]
    helpers.assert_same_bits(logits[:, :PRETRAINED_CLASSES], pretrained,
                             f"pretrained columns, step {step}")
    # Not under --trainable_scopes: never trained, either way.
    helpers.assert_same_bits(values["features/weights"], FEATURES0,
                             f"features, step {step}")
    helpers.assert_same_bits(values["features/bn/gamma"],
                             expected["features/bn/gamma"], "gamma")
    np.testing.assert_allclose(logits[:, PRETRAINED_CLASSES:],
                               expected["logits/weights"], rtol=1e-5,
                               atol=1e-6, err_msg=f"new columns, step {step}")
    for name in ("logits/biases", "features/bn/moving_mean",
                 "features/bn/moving_variance"):
      np.testing.assert_allclose(values[name], expected[name], rtol=1e-5,
                                 atol=1e-6, err_msg=f"{name}, step {step}")
  last = trajectory[-1]
  assert not np.array_equal(last["logits/weights"][:, PRETRAINED_CLASSES:],
                            LOGITS0[:, PRETRAINED_CLASSES:])
  assert not np.array_equal(last["features/bn/moving_mean"],
                            trajectory[0]["features/bn/moving_mean"])
