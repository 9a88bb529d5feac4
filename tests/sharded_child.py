"""Child process for test_sharded.py: ShardedVariable tables under PSS.

Two workers and two parameter servers as in-process gRPC servers on
loopback (`tf.distribute.Server`, ports picked now), a
`ParameterServerStrategy` whose `FixedShardsPartitioner(2)` splits the
table in two shards, and a `ClusterCoordinator` scheduling each step (one
at a time, joined, so the run can be compared with the split-variable
reference, computed here without the strategy). Writes a JSON report of
each scenario to argv[1]; argv[2] is a scratch folder; a third argument
`compact` adds the compact scenarios.
"""

import json
import os
import pathlib
import socket
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import tfpartial  # pylint: disable=g-import-not-at-top
from tfpartial import cli  # pylint: disable=g-import-not-at-top

ROWS, DIM, STEPS = 10, 3, 3
IDS = np.arange(ROWS, dtype=np.int64)
TARGET = np.linspace(-2.0, 3.0, ROWS * DIM, dtype=np.float32).reshape(
    ROWS, DIM)
INIT = np.random.default_rng(3).normal(size=(ROWS, DIM)).astype(np.float32)
FROZEN_IDS = np.array([1, 2, 5, 9], dtype=np.int64)
TRAIN_IDS = np.setdiff1d(IDS, FROZEN_IDS)
DEADLINE = time.monotonic() + 400  # Every scenario, bounded in time.
LOOKUPS = {"div": tf.nn.embedding_lookup,  # TF2's, "div" always
           "mod": tf.compat.v1.nn.embedding_lookup}  # "mod" by default


def _port():
  with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    return sock.getsockname()[1]


CLUSTER = tf.train.ClusterSpec({
    "worker": [f"127.0.0.1:{_port()}" for _ in range(2)],
    "ps": [f"127.0.0.1:{_port()}" for _ in range(2)]})
SERVERS = [tf.distribute.Server(CLUSTER, job_name=job, task_index=task,
                                protocol="grpc", start=True)
           for job in ("worker", "ps") for task in range(2)]


def _strategy(shards):
  return tf.distribute.experimental.ParameterServerStrategy(
      tf.distribute.cluster_resolver.SimpleClusterResolver(
          CLUSTER, rpc_layer="grpc"),
      variable_partitioner=(
          tf.distribute.experimental.partitioners.FixedShardsPartitioner(
              shards)))


STRATEGY = _strategy(2)
COORDINATOR = tf.distribute.experimental.coordinator.ClusterCoordinator(
    STRATEGY)


def loss_of(looked):
  return tf.reduce_sum(tf.square(looked - TARGET) * (1.0 + TARGET / 10.0))


def _bits_equal(a, b):
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  return a.shape == b.shape and bool(np.array_equal(a.view(np.uint32),
                                                    b.view(np.uint32)))


def _table(name="emb"):
  with STRATEGY.scope():
    return tf.Variable(INIT, name=name)


def _train(table, lookup, apply, steps=STEPS):
  """Runs `steps` steps scheduled one at a time; returns every id's lookup
  before and after."""

  @tf.function
  def step():
    def replica():
      with tf.GradientTape() as tape:
        loss = loss_of(lookup(table, IDS))
      shards = table.variables
      apply(zip(tape.gradient(loss, shards), shards))
    STRATEGY.run(replica)

  # In a tf.function, as the step reads: eagerly, TensorFlow 2.21's
  # `tf.compat.v1.nn.embedding_lookup` of a ShardedVariable reads the
  # table as one tensor ("div"), and in a tf.function by its shards
  # ("mod", its default).
  read = tf.function(lambda: lookup(table, IDS))
  start = read().numpy()
  for _ in range(steps):
    if time.monotonic() > DEADLINE:
      raise TimeoutError("the scenarios ran past their time")
    COORDINATOR.schedule(step)
    COORDINATOR.join()
  return start, read().numpy()


def _reference(start, make_optimizer, steps=STEPS):
  """The trainable ids' rows after the split-variable reference."""
  trained = tf.Variable(start[TRAIN_IDS])
  optimizer = make_optimizer()
  position = np.zeros(ROWS, np.int64)
  position[TRAIN_IDS] = np.arange(TRAIN_IDS.size)
  is_frozen = np.isin(IDS, FROZEN_IDS)[:, None]
  for _ in range(steps):
    with tf.GradientTape() as tape:
      loss = loss_of(tf.where(is_frozen, start, tf.gather(trained, position)))
    optimizer.apply_gradients([(tape.gradient(loss, trained), trained)])
  return trained.numpy()


def _report(start, after, make_optimizer):
  expected = _reference(start, make_optimizer)
  ulps = np.abs(after[TRAIN_IDS].view(np.int32).astype(np.int64)
                - expected.view(np.int32).astype(np.int64))
  return {"frozen_held": _bits_equal(after[FROZEN_IDS], start[FROZEN_IDS]),
          "trained": bool((after[TRAIN_IDS] != start[TRAIN_IDS]).all()),
          "reference_ulps": int(ulps.max())}


OPTIMIZERS = {"adam": lambda: keras.optimizers.Adam(0.1),
              "ftrl": lambda: keras.optimizers.Ftrl(
                  0.3, l1_regularization_strength=0.01)}


def apply_gradients(strategy_name, optimizer_name):
  """`spec.apply_gradients` on the shards, the spec given the ids the
  lookup of `strategy_name` reads."""
  table = _table()
  with STRATEGY.scope():
    optimizer = OPTIMIZERS[optimizer_name]()
    optimizer.build(table.variables)
  spec = tfpartial.freeze(table, FROZEN_IDS, partition_strategy=strategy_name)
  start, after = _train(table, LOOKUPS[strategy_name],
                        lambda pairs: spec.apply_gradients(optimizer, pairs))
  return _report(start, after, OPTIMIZERS[optimizer_name])


def wrapped(spec_of_table, optimizer_name="adam"):
  """A wrapped optimizer's `apply_gradients`, "div" lookups."""
  table = _table()
  spec = spec_of_table(table)
  with STRATEGY.scope():
    optimizer = spec.wrap(OPTIMIZERS[optimizer_name]())
    optimizer.build(table.variables)
  start, after = _train(table, LOOKUPS["div"], optimizer.apply_gradients)
  return table, optimizer, _report(start, after, OPTIMIZERS[optimizer_name])


def describe():
  table = _table()
  spec = tfpartial.freeze(table, FROZEN_IDS, partition_strategy="mod")
  try:
    tfpartial.freeze(table, FROZEN_IDS)
    error = ""
  except ValueError as raised:
    error = str(raised)
  return {"repr": repr(spec), "json": json.loads(spec.to_json()),
          "variables": spec.variables == (table,), "len": len(spec),
          "mask_rows": np.flatnonzero(spec.frozen_mask(table)[:, 0]).tolist(),
          "error": error}


def checkpoints(folder):
  """tf.train.Checkpoint both ways, into 3 shards, and `tfpartial verify`."""
  folder = pathlib.Path(folder)
  layouts, paths = {}, {}
  for run in ("plain", "tfpartial"):
    table = _table()
    spec = tfpartial.freeze(table, FROZEN_IDS, partition_strategy="div")
    with STRATEGY.scope():
      optimizer = keras.optimizers.Adam(0.1)
      if run == "tfpartial":
        optimizer = spec.wrap(optimizer)
      optimizer.build(table.variables)
    checkpoint = tf.train.Checkpoint(emb=table, optimizer=optimizer)
    _train(table, LOOKUPS["div"], optimizer.apply_gradients, steps=1)
    paths[run, "before"] = checkpoint.write(str(folder / run / "before"))
    _train(table, LOOKUPS["div"], optimizer.apply_gradients, steps=1)
    paths[run, "after"] = checkpoint.write(str(folder / run / "after"))
    layouts[run] = sorted(tf.train.list_variables(paths[run, "after"]))
  spec_path = folder / "spec.json"
  spec.to_json(spec_path)
  table.variables[0].scatter_add(tf.IndexedSlices(
      tf.ones([1, DIM]), tf.constant([1])))  # Row 1, frozen.
  paths["changed"] = tf.train.Checkpoint(emb=table).write(
      str(folder / "changed"))
  verify = [cli.main(["verify", paths[run, "before"], paths[run, "after"],
                      "--spec", str(spec_path)]) for run in layouts]
  changed = cli.main(["verify", paths["tfpartial", "after"], paths["changed"],
                      "--spec", str(spec_path)])
  with _strategy(3).scope():
    three = tf.Variable(tf.zeros([ROWS, DIM]), name="emb")
  tf.train.Checkpoint(emb=three).read(
      paths["tfpartial", "after"]).expect_partial()
  saved = tf.train.load_variable(paths["tfpartial", "after"],
                                 "emb/.ATTRIBUTES/VARIABLE_VALUE")
  bound = tfpartial.load_spec(spec_path, [three])
  return {"layout_kept": layouts["plain"] == layouts["tfpartial"],
          "names": [name for name, _ in layouts["plain"]],
          "verify": verify, "verify_changed": changed,
          "three_shards": [v.shape[0] for v in three.variables],
          "restored_into_three": _bits_equal(three.numpy(), saved),
          "bound_mask": bool(np.array_equal(bound.frozen_mask(three),
                                            spec.frozen_mask(table)))}


def tf_keras_embedding():
  """A tf_keras `Embedding` under the strategy (its variable is the
  ShardedVariable), a custom loop with a wrapped tf_keras Adam; None
  where tf_keras is not installed."""
  try:
    import tf_keras  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  with STRATEGY.scope():
    model = tf_keras.Sequential([tf_keras.layers.Embedding(
        ROWS, DIM, embeddings_initializer=tf_keras.initializers.Constant(
            INIT))])
    model.build((None,))
    table = model.layers[0].embeddings
    # tf_keras' Embedding reads as `tf.nn.embedding_lookup`: "div".
    spec = tfpartial.freeze(table, FROZEN_IDS, partition_strategy="div")
    optimizer = spec.wrap(tf_keras.optimizers.Adam(0.1))
    optimizer.build(model.trainable_variables)

  @tf.function
  def step():
    def replica():
      with tf.GradientTape() as tape:
        loss = loss_of(model(IDS))
      variables = model.trainable_variables
      optimizer.apply_gradients(zip(tape.gradient(loss, variables),
                                    variables))
    STRATEGY.run(replica)

  before = table.numpy()
  for _ in range(STEPS):
    COORDINATOR.schedule(step)
    COORDINATOR.join()
  after = table.numpy()
  return {"sharded": type(table).__name__,
          "frozen_held": _bits_equal(after[FROZEN_IDS], before[FROZEN_IDS]),
          "trained": bool((after[TRAIN_IDS] != before[TRAIN_IDS]).all()),
          "spec_of": repr(tfpartial.spec_of(optimizer))}


def min_size_layout():
  """A `MinSizePartitioner` table of 3 shards: the rows a "mod" spec
  freezes are those the v1 lookup reads for the ids, in a tf.function."""
  strategy = tf.distribute.experimental.ParameterServerStrategy(
      tf.distribute.cluster_resolver.SimpleClusterResolver(
          CLUSTER, rpc_layer="grpc"),
      variable_partitioner=(
          tf.distribute.experimental.partitioners.MinSizePartitioner(
              min_shard_bytes=4 * 3, max_shards=3)))
  with strategy.scope():
    table = tf.Variable(IDS.astype(np.float32).reshape(ROWS, 1))
  read = tf.function(lambda: tf.compat.v1.nn.embedding_lookup(table, IDS))
  rows_read = read().numpy()[:, 0].astype(np.int64)
  spec = tfpartial.freeze(table, FROZEN_IDS, partition_strategy="mod")
  return {"shards": [int(v.shape[0]) for v in table.variables],
          "spec_rows": np.flatnonzero(spec.frozen_mask(table)).tolist(),
          "read_rows": sorted(rows_read[FROZEN_IDS].tolist())}


# An element mask, in the ids a lookup reads: for the compact scenarios.
TRAIN_ELEMENTS = np.random.default_rng(5).random((ROWS, DIM)) < 0.5


def compact(kind, strategy_name, entry, late=False, rows=TRAIN_IDS):
  """`compact=True` on the table: a small variable per shard, made with
  the spec (or, for a spec loaded without variables, where the wrapped
  optimizer is built in the scope), its slots on the shard's parameter
  server; a wrapped Keras Adam, stepped by its own `apply_gradients` or by
  `spec.apply_gradients`; against the split reference."""
  table = _table()
  trains = (np.isin(IDS, rows)[:, None] & np.ones((ROWS, DIM), bool)
            if kind == "rows" else TRAIN_ELEMENTS)
  if late:
    spec = tfpartial.load_spec(json.dumps({"emb": {
        "train_only": str(rows.tolist()), "compact": True}}))
  else:
    spec = tfpartial.train_only(
        table, rows if kind == "rows" else TRAIN_ELEMENTS, compact=True,
        partition_strategy=strategy_name)
  with STRATEGY.scope():
    optimizer = spec.wrap(keras.optimizers.Adam(0.1))
    optimizer.build(table.variables)
  apply = (optimizer.apply_gradients if entry == "wrap"
           else lambda pairs: spec.apply_gradients(optimizer, pairs))
  start, after = _train(table, LOOKUPS[strategy_name], apply)
  expected = _element_reference(start, trains, OPTIMIZERS["adam"])
  ulps = np.abs(after[trains].view(np.int32).astype(np.int64)
                - expected.view(np.int32).astype(np.int64))
  slots = [(list(v.shape), v.value.device) for v in optimizer.variables
           if len(v.shape)]
  return {"frozen_held": _bits_equal(after[~trains], start[~trains]),
          "trained": bool((after[trains] != start[trains]).all()),
          "reference_ulps": int(ulps.max()),
          "slot_shapes": sorted(shape for shape, _ in slots),
          "trainable": int(trains.sum()),
          "slot_devices": sorted({device for _, device in slots}),
          "shard_devices": [v.device for v in table.variables],
          "checkpoint": _compact_checkpoint(table, optimizer)}


def _element_reference(start, trains, make_optimizer, steps=STEPS):
  """What trains of every id's lookup after the split reference: a vector
  of the trainable elements (and a last slot that frozen ones read, its
  gradient zero), the frozen ones constants."""
  small = tf.Variable(np.append(start[trains], np.float32(0)))
  slots = np.cumsum(trains.reshape(-1)) - 1
  slots[~trains.reshape(-1)] = trains.sum()
  optimizer = make_optimizer()
  for _ in range(steps):
    with tf.GradientTape() as tape:
      looked = tf.where(trains, tf.reshape(tf.gather(small, slots),
                                           trains.shape), start)
      loss = loss_of(looked)
    optimizer.apply_gradients([(tape.gradient(loss, small), small)])
  return small.numpy()[:-1]


def _compact_checkpoint(table, optimizer):
  """The shapes a `tf.train.Checkpoint` of the run saves for the
  optimizer's slots: the small variables', which say the layout is
  compact."""
  path = tf.train.Checkpoint(emb=table, optimizer=optimizer).write(
      os.path.join(sys.argv[2], "compact", "ckpt"))
  return sorted(shape for name, shape in tf.train.list_variables(path)
                if name.startswith("optimizer/") and shape)


def eager_lookup_limit():
  """What TensorFlow's v1 lookup of a ShardedVariable reads, eagerly and
  in a tf.function (ids 0..9 of a table whose row i holds i)."""
  with STRATEGY.scope():
    table = tf.Variable(IDS.astype(np.float32).reshape(ROWS, 1))
  lookup = tf.compat.v1.nn.embedding_lookup
  return {"eager": lookup(table, IDS).numpy()[:, 0].tolist(),
          "function": tf.function(lambda: lookup(table, IDS))().numpy()[
              :, 0].tolist()}


def keras3_embedding_limit():
  """Plain Keras 3 under PSS: its Embedding's variable wraps the
  ShardedVariable, and a custom loop's `tape.gradient` fails in Keras."""
  with STRATEGY.scope():
    layer = keras.layers.Embedding(ROWS, DIM)
    layer.build((None,))

  @tf.function
  def step():
    def replica():
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(tf.constant([1, 7])))
      tape.gradient(loss, layer.trainable_variables)
    STRATEGY.run(replica)

  try:
    COORDINATOR.schedule(step)
    COORDINATOR.join()
  except Exception as error:  # pylint: disable=broad-except
    return {"sharded": type(layer.embeddings.value).__name__,
            "fails": type(error).__name__ + ": " + str(error)[-200:]}
  return {"sharded": type(layer.embeddings.value).__name__, "fails": ""}


def main():
  results = {}
  for strategy_name in ("div", "mod"):
    for optimizer_name in OPTIMIZERS:
      results[f"apply_{strategy_name}_{optimizer_name}"] = apply_gradients(
          strategy_name, optimizer_name)
  results["wrap_ftrl"] = wrapped(
      lambda t: tfpartial.train_only(t, TRAIN_IDS, partition_strategy="div"),
      "ftrl")[2]
  text = json.dumps({"emb": {"freeze": "[1, 2, 5, 9]"}})
  results["late"] = wrapped(lambda t: tfpartial.load_spec(text))[2]
  results["describe"] = describe()
  results["checkpoints"] = checkpoints(sys.argv[2])
  results["keras3_embedding"] = keras3_embedding_limit()
  results["eager_lookup"] = eager_lookup_limit()
  results["tf_keras_embedding"] = tf_keras_embedding()
  results["min_size"] = min_size_layout()
  if sys.argv[3:] == ["compact"]:
    results["compact_rows_div_wrap"] = compact("rows", "div", "wrap")
    results["compact_elements_mod_spec"] = compact("elements", "mod", "spec")
    results["compact_rows_late"] = compact("rows", "div", "wrap", late=True)
    # New rows at the end: the first shard is all frozen, and gets no state.
    results["compact_new_rows"] = compact("rows", "div", "wrap",
                                          rows=np.array([8, 9]))
  with open(sys.argv[1], "w") as out:
    json.dump(results, out)


if __name__ == "__main__":
  main()
