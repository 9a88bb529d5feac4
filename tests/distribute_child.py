"""Child process for test_distribute.py: one scenario, results as JSON.

    python distribute_child.py mirrored OUT.json [compact]
    python distribute_child.py multiworker OUT.json   (TF_CONFIG set)

Logical devices and TF_CONFIG are set once per process, hence a child.
`compact` adds the compact scenarios (`compact_scenarios`).
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

SCENARIO, OUT = sys.argv[1], sys.argv[2]
if SCENARIO == "mirrored":
  CPU = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      CPU, [tf.config.LogicalDeviceConfiguration()] * 3)

import tfpartial  # pylint: disable=g-import-not-at-top

X0 = np.linspace(-1.0, 1.3, 12).astype(np.float32).reshape(3, 4) / 3.0
FROZEN = np.zeros((3, 4), bool)
FROZEN[0] = True
FROZEN[2, 1] = True
results = {}


def bits(array):
  return np.ascontiguousarray(array, np.float32).view(np.uint32).tolist()


def record(name, variable, initial, frozen):
  values = [v.numpy() for v in variable.values] if hasattr(
      variable, "values") else [variable.numpy()]
  first = values[0]
  results[name] = {
      "replicas": len(values),
      "identical": all(np.array_equal(np.asarray(v).view(np.uint32),
                                      first.view(np.uint32)) for v in values),
      "frozen_held": all(np.array_equal(np.asarray(v)[frozen].view(np.uint32),
                                        initial[frozen].view(np.uint32))
                         for v in values),
      "trained": bool((first[~frozen] != initial[~frozen]).all()),
      "bits": bits(first),
  }


if SCENARIO == "mirrored":
  strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
else:
  strategy = tf.distribute.MultiWorkerMirroredStrategy()

# Custom loops in replica context: Keras AdamW and a TF1 Ftrl, on variables
# with aggregation NONE and MEAN.
for aggregation in ("NONE", "MEAN"):
  for kind in ("keras_adamw", "v1_ftrl"):
    with strategy.scope():
      x = tf.Variable(X0, name="x",
                      aggregation=getattr(tf.VariableAggregation, aggregation))
      if kind == "keras_adamw":
        optimizer = keras.optimizers.AdamW(0.1, weight_decay=0.3)
        optimizer.build([x])  # Keras cannot build inside strategy.run.
      else:
        optimizer = tf.compat.v1.train.FtrlOptimizer(
            0.1, l1_regularization_strength=0.01)
    spec = tfpartial.freeze(x, FROZEN)

    @tf.function
    def step():
      def replica():
        replica_id = tf.distribute.get_replica_context().replica_id_in_sync_group
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.square(x - 3.0)) * tf.cast(
              replica_id + 1, tf.float32)
        grad = tape.gradient(loss, x)
        grad = tf.where(FROZEN, np.nan, grad)  # Poisoned frozen gradients.
        spec.apply_gradients(optimizer, [(grad, x)])
      strategy.run(replica)

    for _ in range(3):
      step()
    record(f"replica_{kind}_{aggregation}", x, X0, FROZEN)

# model.fit inside strategy.scope() with a wrapped optimizer; with EMA, fit
# ends by writing the averages into the model in cross-replica context.
# Keras 3's fit does not run under MultiWorkerMirroredStrategy at all
# (keras-team/keras#20585), so multi-worker fit uses tf_keras (Keras 2).
if SCENARIO == "mirrored":
  fit_keras = keras
else:
  import tf_keras as fit_keras  # pylint: disable=g-import-not-at-top
for ema in (False, True):
  with strategy.scope():
    model = fit_keras.Sequential([fit_keras.Input((4,)),
                                  fit_keras.layers.Dense(3, name="d")])
    kernel = model.layers[0].kernel
    kernel.assign(X0.T)
    kernel_frozen = FROZEN.T.copy()
    model.compile(optimizer=tfpartial.freeze(kernel, kernel_frozen).wrap(
        fit_keras.optimizers.AdamW(0.05, weight_decay=0.2, use_ema=ema)),
                  loss="mse")
  rng = np.random.default_rng(0)
  data = tf.data.Dataset.from_tensor_slices(
      (rng.random((48, 4)).astype(np.float32),
       rng.random((48, 3)).astype(np.float32))).batch(12)
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.DATA)
  model.fit(data.with_options(options), epochs=2, verbose=0)
  record(f"model_fit_keras_adamw{'_ema' if ema else ''}",
         getattr(kernel, "value", kernel) if fit_keras is keras else kernel,
         X0.T.copy(), kernel_frozen)



# TensorFlow's and Keras' own limits that docs/guides/distribute.md states,
# plain, without tfpartial: checked here so that the page stays true.
def _mean_assign_changed_bits():
  """Bits a replica-context assign of each replica's own (equal) values
  changes in a MEAN variable: why tfpartial restores through merge_call."""
  values = np.random.default_rng(0).normal(size=4096).astype(np.float32)
  with strategy.scope():
    mean = tf.Variable(values, aggregation=tf.VariableAggregation.MEAN)

  @tf.function
  def assign_what_it_holds():
    strategy.run(lambda: mean.assign(tf.identity(mean.read_value())))

  assign_what_it_holds()
  return int((mean.values[0].numpy().view(np.uint32)
              != values.view(np.uint32)).sum())


def _keras_optimizer_built_in_run():
  """The error of a Keras 3 optimizer making its variables in strategy.run."""
  with strategy.scope():
    w = tf.Variable(np.ones(3, np.float32))
    optimizer = keras.optimizers.Adam(0.1)

  @tf.function
  def step():
    strategy.run(lambda: optimizer.apply_gradients([(tf.ones(3), w)]))

  try:
    step()
  except Exception as error:  # pylint: disable=broad-except
    return type(error).__name__
  return None


def _keras3_fit_error():
  """Keras 3's fit under MultiWorkerMirroredStrategy (keras-team/keras#20585)."""
  with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
  data = tf.data.Dataset.from_tensor_slices(
      (np.ones((8, 4), np.float32), np.ones((8, 3), np.float32))).batch(4)
  try:
    model.fit(data, epochs=1, verbose=0)
  except Exception as error:  # pylint: disable=broad-except
    return f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"
  return None


def compact_scenarios():
  """`compact=True` under the mirrored strategy, against the split
  reference trained under the same strategy (`compact_problem.py`: repeated
  ids; each replica's loss scaled by its id, so replicas' gradients
  differ): custom loops (v1 Adam by `spec.apply_gradients`, a wrapped
  Keras Adam on a MEAN variable) and `model.fit` (rows; elements with EMA,
  whose swap at the end writes in cross-replica context)."""
  import compact_problem as cp  # pylint: disable=g-import-not-at-top
  import helpers  # pylint: disable=g-import-not-at-top
  found = {}
  for name, family, kind, aggregation in (
      ("compact_loop_v1_adam_rows", "v1", "rows", "NONE"),
      ("compact_loop_keras_adam_elements_MEAN", "keras", "elements", "MEAN")):
    found[name] = _compact_loop(cp, family, kind, aggregation)
  for kind, ema in (("rows", False), ("elements", True)):
    table_model, split_model = cp.keras_models(keras)
    runs = []
    for split in (False, True):
      with strategy.scope():
        model = split_model(kind) if split else table_model()
        spec = None if split else tfpartial.train_only(
            model.table, cp.KINDS[kind][0], compact=True)
        optimizer = keras.optimizers.Adam(0.05, use_ema=ema)
        runs.append((cp.train_keras(keras, model, optimizer, spec,
                                    helpers.KERAS_MODEL_FIT,
                                    copies=strategy.num_replicas_in_sync),
                     model, optimizer))
    (trajectory, model, optimizer), (reference, split, _) = runs
    found[f"compact_fit_keras_adam_{kind}" + ("_ema" if ema else "")] = (
        _compact_report(cp, kind, trajectory, reference,
                        [v.numpy() for v in model.table.value.values],
                        split.values(), optimizer.variables))
  return found


def _compact_loop(cp, family, kind, aggregation):
  with strategy.scope():
    aggregation = getattr(tf.VariableAggregation, aggregation)
    make = (lambda: keras.optimizers.Adam(0.05)) if family == "keras" else (
        lambda: tf.compat.v1.train.AdamOptimizer(0.05))
    table = tf.Variable(cp.TABLE0, name="table", aggregation=aggregation)
    small = tf.Variable(cp.split_start(kind), name="small",
                        aggregation=aggregation)
    frozen = tf.Variable(cp.TABLE0, name="frozen", trainable=False)
    optimizer, reference = make(), make()
  spec = tfpartial.train_only(table, cp.KINDS[kind][0], compact=True)
  apply = lambda pairs: spec.apply_gradients(optimizer, pairs)
  if family == "keras":  # Keras cannot build inside strategy.run.
    with strategy.scope():
      optimizer = spec.wrap(optimizer)
      optimizer.build([table])
      reference.build([small])
    apply = optimizer.apply_gradients

  @tf.function
  def step():
    def replica():
      scale = tf.cast(
          tf.distribute.get_replica_context().replica_id_in_sync_group + 1,
          tf.float32)
      with tf.GradientTape() as tape:
        loss = cp.loss(tf.gather(table, cp.IDS)) * scale
      apply([(tape.gradient(loss, table), table)])
      with tf.GradientTape() as tape:
        loss = cp.loss(cp.split_lookup(small, frozen, kind, cp.IDS)) * scale
      reference.apply_gradients([(tape.gradient(loss, small), small)])
    strategy.run(replica)

  trajectory, expected = [], []
  for _ in range(cp.STEPS):
    step()
    trajectory.append(table.values[0].numpy())
    expected.append(small.values[0].numpy())
  variables = optimizer.variables if family == "keras" else []
  return _compact_report(cp, kind, trajectory, expected,
                         [v.numpy() for v in table.values], expected[-1],
                         variables)


def _compact_report(cp, kind, trajectory, reference, replicas, final,
                    variables):
  """Each step bit for bit as the reference (`failed`: why not), and the
  replicas' final values too (after fit's EMA swap, the reference's
  final ones), all replicas alike."""
  try:
    cp.check(kind, trajectory, reference, exact=True)
    trained = cp.trains(kind)
    for replica in replicas:
      assert bits(replica[trained]) == bits(cp.trained_part(final)), "final"
      assert bits(replica[~trained]) == bits(cp.TABLE0[~trained]), "frozen"
    failed = None
  except AssertionError as error:
    failed = str(error)[:500]
  first = replicas[0].view(np.uint32)
  return {"replicas": len(replicas), "reference": failed,
          "identical": all(np.array_equal(np.asarray(r).view(np.uint32),
                                          first) for r in replicas),
          "state_shapes": sorted({str(tuple(v.shape)) for v in variables})}


if SCENARIO == "mirrored" and sys.argv[3:] == ["compact"]:
  results["compact"] = compact_scenarios()

if SCENARIO == "mirrored":
  results["limits"] = {
      "mean_assign_changed_bits": _mean_assign_changed_bits(),
      "keras_optimizer_built_in_run": _keras_optimizer_built_in_run()}
else:
  results["limits"] = {"keras3_fit": _keras3_fit_error()}

with open(OUT, "w") as out:
  json.dump(results, out)
