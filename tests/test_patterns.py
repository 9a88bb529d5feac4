"""Real training code with the one line a user adds: exact, in every mode.

BERT-style optimization code (gradients -> `spec.mask` -> global-norm clip
-> a wrapped optimizer's `apply_gradients`) in a TF1 graph with a custom
optimizer of BERT's kind and with a built-in one, and its TF2 form (tape,
`spec.mask`, clip, wrapped `apply_gradients`) eagerly and in `tf.function`,
for each optimizer family. Each is compared with the split-variable
reference (`bert_problem.Split`), and every frozen element is checked bit
for bit after every step.
"""

import functools
import warnings

import numpy as np
import pytest
import tensorflow as tf

import bert_problem as bert
import helpers
import tfpartial

STEPS = 6
TF1_MODES = (helpers.TF1_GRAPH, helpers.TF1_GRAPH_REF)

V1_OPTIMIZERS = {
    "bert_AdamWeightDecay": lambda: bert.AdamWeightDecay(
        0.05, weight_decay_rate=0.1),
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


# --- spec.mask: aligned, and what a fully frozen variable's entry is ---------


def _mask_problem():
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  table = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2),
                      name="table")
  b = tf.Variable([3.0], name="b")
  free = tf.Variable([4.0, 5.0], name="free")
  spec = (tfpartial.freeze(x, [0, 2]) | tfpartial.freeze(table)
          | tfpartial.freeze(b))
  return spec, [x, table, b, free]


def test_mask_gives_one_gradient_per_variable_in_order():
  spec, (x, table, b, free) = _mask_problem()
  rows = tf.IndexedSlices(tf.constant([[np.inf, 1.0], [np.nan, 2.0]]),
                          tf.constant([3, 1]), tf.constant([4, 2]))
  gradients = [tf.constant([np.nan, 6.0, np.inf]), rows, None,
               tf.constant([7.0, 8.0])]
  masked = spec.mask(gradients, [x, table, b, free])
  assert len(masked) == 4
  helpers.assert_same_bits(masked[0].numpy(), np.float32([0.0, 6.0, 0.0]),
                           "x: frozen elements 0, even from NaN and Inf")
  # Fully frozen: an exact zero of the gradient's form, still sparse.
  assert isinstance(masked[1], tf.IndexedSlices)
  helpers.assert_same_bits(masked[1].values.numpy(), np.zeros((2, 2),
                                                              np.float32))
  np.testing.assert_array_equal(masked[1].indices.numpy(), [3, 1])
  assert masked[2] is None  # None stays None.
  assert masked[3] is gradients[3]  # Not in the spec: as it was.
  # Clipping takes the list, and counts only what trains.
  clipped, norm = tf.clip_by_global_norm(masked, 1.0)
  assert float(norm) == pytest.approx(np.sqrt(36.0 + 49.0 + 64.0))
  assert isinstance(clipped[1], tf.IndexedSlices) and clipped[2] is None


def test_mask_fully_frozen_zero_is_taken_by_every_family():
  spec, variables = _mask_problem()
  x, table, b, free = variables
  optimizers = [opt() for opt in TF2_OPTIMIZERS.values()]
  for optimizer in optimizers:
    for variable, value in zip(variables, ([1.0, 2.0, 3.0], np.arange(
        8, dtype=np.float32).reshape(4, 2), [3.0], [4.0, 5.0])):
      variable.assign(value)
    before = [v.numpy() for v in variables]
    rows = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([2]),
                            tf.constant([4, 2]))
    grads = spec.mask([tf.ones([3]), rows, tf.ones([1]), tf.ones([2])],
                      variables)
    spec.wrap(optimizer).apply_gradients(zip(grads, variables))
    helpers.assert_same_bits(x.numpy()[[0, 2]], before[0][[0, 2]],
                             type(optimizer).__name__)
    helpers.assert_same_bits(table.numpy(), before[1], "table")
    helpers.assert_same_bits(b.numpy(), before[2], "b")
    assert not np.array_equal(free.numpy(), before[3])


@pytest.mark.parametrize("gradients, error, message", [
    ([tf.constant([1.0, 2.0, 3.0])], ValueError,
     "`gradients` has 1 entries and `variables` 4"),
    ([tf.ones([2]), tf.ones([4, 2]), tf.ones([1]), tf.ones([2])], ValueError,
     "`gradients[0]` pairs a gradient of shape (2,) with variable 'x' of "
     "shape (3,)"),
    ("pairs", TypeError, "`gradients[0]` must be a gradient"),
    ([tf.ones([3]), tf.ones([4, 2]), "not a gradient", tf.ones([2])],
     TypeError, "`gradients[2]` must be a gradient"),
    ([tf.ones([3]), tf.ones([4, 2]), tf.ones([1]),
      tf.constant(["a", "b"])], TypeError,
     "`gradients[3]` must be a gradient"),
])
def test_mask_refuses_what_would_misalign(gradients, error, message):
  spec, variables = _mask_problem()
  if gradients == "pairs":  # mask_gradients' input given to mask.
    gradients = list(zip([tf.ones([3]), tf.ones([4, 2]), tf.ones([1]),
                          tf.ones([2])], variables))
  with pytest.raises(error) as raised:
    spec.mask(gradients, variables)
  assert message in str(raised.value)


# --- Models whose compile is their own (keras_hub's Task) ------------------


@functools.lru_cache(maxsize=None)
def _tiny_task_class():
  """A model made the way keras_hub's `Task` models are: it compiles itself
  in `__init__`, and its `compile()` has defaults of its own. So Keras, on
  `load_model`, makes it anew (compiled with those defaults) and does not
  compile it from the saved config."""
  import keras  # pylint: disable=g-import-not-at-top

  @keras.saving.register_keras_serializable(package="tfpartial_tests")
  class TinyTask(keras.Model):

    def __init__(self, vocabulary=6, classes=2, **kwargs):
      ids = keras.Input((3,), dtype="int32")
      hidden = keras.layers.Embedding(vocabulary, 4, name="embedding")(ids)
      hidden = keras.layers.GlobalAveragePooling1D()(hidden)
      logits = keras.layers.Dense(classes, name="logits")(hidden)
      super().__init__(inputs=ids, outputs=logits, **kwargs)
      self.vocabulary, self.classes = vocabulary, classes
      self.compile()

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto",
                **kwargs):
      if optimizer == "auto":
        optimizer = keras.optimizers.Adam(5e-5)
      if loss == "auto":
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
      if metrics == "auto":
        metrics = [keras.metrics.SparseCategoricalAccuracy()]
      super().compile(optimizer=optimizer, loss=loss, metrics=metrics,
                      **kwargs)

    def get_config(self):
      return {"vocabulary": self.vocabulary, "classes": self.classes,
              "name": self.name}

    @classmethod
    def from_config(cls, config):
      return cls(**config)

  return TinyTask


TASK_IDS = np.array([[0, 4, 5], [5, 1, 4]], np.int32)
TASK_LABELS = np.array([1, 0], np.int32)


def _table(model):
  return model.get_layer("embedding").embeddings


def _load_task(path):
  """`load_model`, and the two warnings Keras gives: compile was not called
  from the config, and the saved optimizer state was skipped (the default
  optimizer made in `__init__` is not built)."""
  import keras  # pylint: disable=g-import-not-at-top
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = keras.models.load_model(path)
  messages = " | ".join(str(w.message) for w in caught)
  assert "`compile()` was not called as part of model loading" in messages
  assert "Skipping variable loading for optimizer" in messages
  return model


@helpers.needs_keras_3
def test_a_model_with_its_own_compile_loses_the_freeze_on_load_and_the_recipe(
    tmp_path):
  import keras  # pylint: disable=g-import-not-at-top
  model = _tiny_task_class()()
  table = _table(model)
  spec = tfpartial.freeze(table, np.s_[:4])  # Pretrained rows.
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)))
  assert tfpartial.spec_of(model) == spec
  pretrained = table.numpy()[:4]
  model.fit(TASK_IDS, TASK_LABELS, epochs=2, verbose=0)
  helpers.assert_same_bits(table.numpy()[:4], pretrained, "pretrained rows")
  spec.to_json(tmp_path / "spec.json")
  model.save(tmp_path / "task.keras")

  # Loaded, it is compiled with its own defaults: the freeze is gone.
  loaded = _load_task(tmp_path / "task.keras")
  assert tfpartial.spec_of(loaded) is None
  assert type(loaded.optimizer) is keras.optimizers.Adam
  loaded.fit(TASK_IDS, TASK_LABELS, epochs=1, verbose=0)
  assert not np.array_equal(_table(loaded).numpy()[:4], pretrained)

  # The recipe: check with spec_of after loading; re-attach from the spec
  # file; load the weights again for the optimizer's state.
  loaded = _load_task(tmp_path / "task.keras")
  if tfpartial.spec_of(loaded) is None:
    spec = tfpartial.load_spec(tmp_path / "spec.json", loaded)
    loaded.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)))
    loaded.optimizer.build(loaded.trainable_variables)
    loaded.load_weights(tmp_path / "task.keras")
  assert tfpartial.spec_of(loaded) == spec
  assert int(loaded.optimizer.iterations) == 2  # The state came back too.
  before = _table(loaded).numpy()
  loaded.fit(TASK_IDS, TASK_LABELS, epochs=2, verbose=0)
  after = _table(loaded).numpy()
  helpers.assert_same_bits(after[:4], pretrained, "pretrained rows")
  assert not np.array_equal(after[4:], before[4:])
