"""Sharded tables as one variable (`_frozen/_tables.py`): parts, row
numbering, each part's slice of the table's selection, and the errors.

The tables are TF1 partitioned variables, made in a graph; the TF1 steps
that train them are in `tests/guarantees/test_partitioned.py`.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._frozen import _selection
from tfpartial._frozen import _tables
from tfpartial._frozen import _tfprivate


def _table(rows=10, parts=4, axis=0, name="emb", use_resource=True):
  shape = [rows, 3] if axis == 0 else [3, rows]
  return tf.compat.v1.get_variable(
      name, shape, use_resource=use_resource,
      partitioner=tf.compat.v1.fixed_size_partitioner(parts, axis=axis))


@pytest.fixture(name="graph")
def _graph():
  with tf.Graph().as_default() as graph:
    yield graph


def test_parts_and_their_offsets(graph):
  del graph
  table = _table()
  found = _tables.parts(table)
  assert [part.offset for part in found] == [(0, 0), (3, 0), (6, 0), (8, 0)]
  assert [part.shape for part in found] == [(3, 3), (3, 3), (2, 3), (2, 3)]
  again = _tfprivate.partitioned_variable("emb", (10, 3), tf.float32,
                                          list(table), [4, 1])
  assert _tables.key(table) == _tables.key(again)


def test_mod_ids_become_checkpoint_rows(graph):
  del graph
  table = _table()
  ids = np.arange(10, dtype=np.int64)
  # Part p holds ids p, p + 4, ...: part 0 (rows 0-2) ids 0, 4, 8; part 1
  # (rows 3-5) ids 1, 5, 9; part 2 (rows 6, 7) ids 2, 6; part 3 ids 3, 7.
  assert _tables.checkpoint_rows(table, ids, "mod", "t").tolist() == [
      0, 3, 6, 8, 1, 4, 7, 9, 2, 5]
  assert _tables.checkpoint_rows(table, ids, "div", "t").tolist() == (
      ids.tolist())


@pytest.mark.parametrize("index", [np.s_[2:7], [9, 0, 4], 5, np.s_[::3]])
def test_each_part_gets_its_slice_of_rows(graph, index):
  del graph
  table = _table()
  spec = tfpartial.train_only(table, index, partition_strategy="div")
  full = spec.frozen_mask(table)
  assert np.array_equal(full, ~helpers.reads((10, 3), index))
  for part in _tables.parts(table):
    block = full[part.offset[0]:part.offset[0] + part.shape[0]]
    assert np.array_equal(spec.frozen_mask(part.variable), block)


def test_an_element_mask_and_parts_along_columns(graph):
  del graph
  table = _table(rows=7, parts=3, axis=1)
  mask = np.random.default_rng(0).random((3, 7)) < 0.4
  spec = tfpartial.freeze(table, mask)
  assert np.array_equal(spec.frozen_mask(table), mask)
  for part in _tables.parts(table):
    column = part.offset[1]
    assert np.array_equal(spec.frozen_mask(part.variable),
                          mask[:, column:column + part.shape[1]])


def test_mod_renumbers_an_element_mask_and_train_only(graph):
  del graph
  table = _table()
  mask = np.zeros((10, 3), bool)
  mask[1, 0] = mask[6, 2] = True
  expected = np.zeros((10, 3), bool)
  expected[3, 0] = expected[7, 2] = True   # ids 1 and 6 live at rows 3, 7
  spec = tfpartial.freeze(table, mask, partition_strategy="mod")
  assert np.array_equal(spec.frozen_mask(table), expected)
  trains = tfpartial.train_only(table, [1, 6], partition_strategy="mod")
  assert sorted(np.flatnonzero(~trains.frozen_mask(table)[:, 0])) == [3, 7]


def test_renumbered_rows_cost_the_rows_named():
  rows = _selection.from_rows((10**9, 4), np.array([3, 5], np.int64))
  moved = _selection.renumbered(rows, lambda ids: ids * 2)
  assert moved.row_set is not None and moved.row_set.rows.tolist() == [6, 10]


def test_the_spec_names_the_table_as_the_saver_does(graph):
  del graph
  table = _table()
  spec = tfpartial.freeze(table, np.s_[:4], partition_strategy="div")
  assert spec.variables == (table,) and len(spec) == 1
  assert repr(spec) == "FreezeSpec(emb [4 parts]: rows 0..3 frozen)"
  assert '"emb": {"freeze": ":4", "shape": [10, 3]}' in spec.to_json()
  assert table in spec and list(table)[1] in spec


def test_whole_table_needs_no_strategy(graph):
  del graph
  table = _table()
  assert tfpartial.freeze(table).frozen_mask(table).all()
  assert tfpartial.freeze(table, ...).frozen_mask(table).all()


def test_one_part_needs_no_strategy(graph):
  del graph
  table = _table(parts=1)
  assert tfpartial.freeze(table, 2).frozen_mask(table)[2].all()


def test_rows_without_a_strategy_name_both_choices(graph):
  del graph
  table = _table()
  with pytest.raises(ValueError, match=r"variable 'emb' of shape \(10, 3\) "
                     r"in 4 parts: .*partition_strategy=\"div\".*"
                     r"partition_strategy=\"mod\".*i % 4"):
    tfpartial.freeze(table, [1, 2])
  with pytest.raises(ValueError, match="partition_strategy"):
    tfpartial.train_only(table, np.s_[:5])


def test_a_strategy_is_div_or_mod(graph):
  del graph
  with pytest.raises(ValueError, match=r"'emb' .* must be \"div\" or "
                     r"\"mod\"; got 'modulo'"):
    tfpartial.freeze(_table(), 1, partition_strategy="modulo")


def test_a_strategy_for_a_plain_variable_is_an_error():
  x = tf.Variable(tf.zeros([4, 2]), name="x")
  with pytest.raises(ValueError, match=r"variable 'x' of shape \(4, 2\) is "
                     "not one"):
    tfpartial.freeze(x, 1, partition_strategy="mod")


def test_a_row_beyond_the_table_is_an_index_error(graph):
  del graph
  with pytest.raises(IndexError, match=r"'emb' of shape \(10, 3\)"):
    tfpartial.freeze(_table(), 10, partition_strategy="div")
  with pytest.raises(IndexError, match=r"'e2' of shape \(10, 3\)"):
    tfpartial.freeze(_table(name="e2"), [10], partition_strategy="mod")


def test_a_mask_variable_cannot_freeze_a_table(graph):
  del graph
  table = _table()
  mask = tf.compat.v1.Variable(np.zeros((10, 3), bool), name="m")
  with pytest.raises(ValueError, match=r"'emb' of shape \(10, 3\) in 4 "
                     "parts is a sharded table; a mask variable"):
    tfpartial.freeze(table, mask)


def test_the_table_and_its_part_in_one_spec_is_an_error(graph):
  del graph
  table = _table()
  with pytest.raises(ValueError, match="name the table only"):
    tfpartial.freeze(list(table)[0], 0) | tfpartial.freeze(table)


def test_mod_refuses_parts_a_lookup_does_not_make(graph):
  del graph
  parts = [tf.compat.v1.get_variable(f"p{i}", [n, 2])
           for i, n in enumerate((2, 4))]
  for offset, part in zip((0, 2), parts):
    info = tf.Variable.SaveSliceInfo("t", [6, 2], [offset, 0],
                                     part.shape.as_list())
    part._set_save_slice_info(info)  # pylint: disable=protected-access
  table = _tfprivate.partitioned_variable("t", (6, 2), tf.float32, parts,
                                          [2, 1])
  with pytest.raises(ValueError, match=r"hold \[2, 4\] rows.*\[3, 3\] rows"):
    tfpartial.freeze(table, 1, partition_strategy="mod")


def test_a_table_among_gradient_pairs_says_to_pass_its_parts(graph):
  del graph
  table = _table()
  spec = tfpartial.freeze(table, 1, partition_strategy="div")
  grads = [tf.zeros(part.shape) for part in table]
  with pytest.raises(TypeError, match=r"`variables\[0\]` is variable 'emb' "
                     r"of shape \(10, 3\) in 4 parts, a sharded table; .*"
                     r"list\(table\)"):
    spec.mask(grads[:1], [table])
  masked = spec.mask(grads, list(table))
  assert len(masked) == 4
