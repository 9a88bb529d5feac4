"""TF2 ShardedVariable tables under ParameterServerStrategy, as one variable.

`sharded_child.py` runs in a child process (a strategy is process-wide):
two workers and two parameter servers on loopback, the table split in two
shards by `FixedShardsPartitioner(2)`, each step scheduled by a
`ClusterCoordinator`. The spec freezes the rows the lookup of the step
reads for `FROZEN_IDS` ("div": `tf.nn.embedding_lookup`; "mod": the
`tf.compat.v1` one's default); those lookups keep their bits and the others
follow the split-variable reference. Then `tf.train.Checkpoint` both ways,
into three shards, `tfpartial verify`, a tf_keras `Embedding`, and (on the
newest TensorFlow) `compact=True`.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import helpers
import processes

pytestmark = helpers.needs_keras_3

HERE = pathlib.Path(__file__).parent.parent
TIMEOUT = 600


@pytest.fixture(scope="module", name="results")
def _results(tmp_path_factory):
  folder = tmp_path_factory.mktemp("sharded")
  out = folder / "results.json"
  compact = ["compact"] if helpers.MULTIPROCESS_ONCE else []
  result = processes.until_ports_bind(lambda: subprocess.run(
      [sys.executable, str(HERE / "sharded_child.py"), str(out),
       str(folder)] + compact, capture_output=True, text=True,
      timeout=TIMEOUT,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, check=False))
  assert result.returncode == 0, result.stderr[-4000:]
  return json.loads(out.read_text())


@pytest.mark.parametrize("scenario", [
    "apply_div_adam", "apply_mod_adam", "apply_div_ftrl", "apply_mod_ftrl",
    "wrap_ftrl", "late"])
def test_the_ids_a_lookup_reads_stay_frozen(results, scenario):
  result = results[scenario]
  assert result["frozen_held"], f"{scenario}: a frozen id's row moved"
  assert result["trained"], f"{scenario}: a trainable id's row stayed"
  # Adam is the reference bit for bit; Keras' Ftrl rounds its shards of 5
  # rows and the reference's 6 rows differently (its vectorized body and
  # scalar tail), a few ULPs after 3 steps.
  most = 0 if scenario.endswith("adam") or scenario == "late" else 8
  assert result["reference_ulps"] <= most, result


def test_the_spec_names_the_table_as_its_checkpoint_does(results):
  described = results["describe"]
  # Ids 1, 2, 5, 9 as "mod" reads them: 2 shards of 5 rows, id i in shard
  # i % 2 at its row i // 2.
  assert described["repr"] == (
      "FreezeSpec(emb [2 shards]: rows 1, 5, 7, 9 frozen)")
  assert described["json"] == {"emb": {"freeze": "[1, 5, 7, 9]",
                                       "shape": [10, 3]}}
  assert described["variables"] and described["len"] == 1
  assert described["mask_rows"] == [1, 5, 7, 9]
  assert "in 2 shards: which row an id names" in described["error"]


def test_checkpoints_move_both_ways_and_verify(results):
  result = results["checkpoints"]
  assert result["layout_kept"], result["names"]
  assert "emb/.ATTRIBUTES/VARIABLE_VALUE" in result["names"]
  # The plain run moved the frozen rows; the tfpartial run kept them.
  assert result["verify"] == [1, 0]
  assert result["verify_changed"] == 1
  assert result["three_shards"] == [4, 3, 3]
  assert result["restored_into_three"] and result["bound_mask"]


def test_mod_numbers_a_min_size_layout_as_the_lookup_reads_it(results):
  result = results["min_size"]
  assert result["shards"] == [4, 3, 3]
  assert result["spec_rows"] == result["read_rows"] == [3, 4, 7, 8]


@helpers.multiprocess_once
@pytest.mark.parametrize("scenario", ["compact_rows_div_wrap",
                                      "compact_elements_mod_spec",
                                      "compact_rows_late",
                                      "compact_new_rows"])
def test_compact_trains_a_small_variable_per_shard(results, scenario):
  """`compact=True` on a ShardedVariable: a small variable per shard, on
  its parameter server, made with the spec (a spec loaded without
  variables: where the wrapped optimizer is built); the split reference
  bit for bit; the optimizer's state only for what trains, beside each
  shard (none for a shard all frozen, even with `wrap`); a `tf.train.Checkpoint` of the small variables and their slots."""
  result = results[scenario]
  assert result["frozen_held"], f"{scenario}: a frozen element moved"
  assert result["trained"], f"{scenario}: a trainable element stayed"
  assert result["reference_ulps"] == 0, result
  # m and v, of each shard's trainable rows (elements), on its server.
  assert sum(np.prod(shape) for shape in result["slot_shapes"]) == (
      2 * result["trainable"]), result
  assert [5, 3] not in result["slot_shapes"], result
  if scenario == "compact_new_rows":  # The first shard all frozen: no state.
    assert result["slot_devices"] == result["shard_devices"][1:], result
  else:
    assert result["slot_devices"] == sorted(result["shard_devices"]), result
  # The checkpoint holds the small variables (one per shard) and their
  # slots (two each, sorted beside them): the compact layout.
  slots = result["slot_shapes"]
  assert result["checkpoint"] == sorted(slots + slots[::2]), result


def test_a_tf_keras_embedding_under_the_strategy(results):
  result = results["tf_keras_embedding"]
  if result is None:
    pytest.skip("tf_keras is not installed")
  assert result["sharded"] == "ShardedVariable"
  assert result["frozen_held"] and result["trained"]
  assert result["spec_of"] == (
      "FreezeSpec(embedding/embeddings [2 shards]: rows 1, 2, 5, 9 frozen)")


def test_what_tensorflow_and_keras_do_plain(results):
  # What docs/guides/distribute.md says: Keras 3 wraps the ShardedVariable
  # in its own variable and cannot take its gradient under the strategy;
  # the v1 lookup of a ShardedVariable reads "div" eagerly, "mod" in a
  # tf.function.
  assert results["keras3_embedding"]["sharded"] == "ShardedVariable"
  assert "has no attribute 'handle'" in results["keras3_embedding"]["fails"]
  assert results["eager_lookup"]["eager"] == list(range(10))
  assert results["eager_lookup"]["function"] == [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]
