"""The hint: a row spec training under 1% of a large table without
`compact=True` is told, once, that compact mode exists and what it changes."""

import logging

import numpy as np
import pytest
import tensorflow as tf

import tfpartial
from tfpartial._step import _hint

# Large enough for the hint: 1M elements or more (16,384 x 64).
ROWS, WIDTH = 1 << 14, 64
IDS = np.array([0, 3, 7, 9000])


@pytest.fixture(autouse=True)
def _fresh_hint(monkeypatch):
  # The hint is said once a process: each test starts before it was said.
  monkeypatch.setattr(_hint, "_compact_hinted", False)


def _step_on(spec, table, optimizer=None):
  optimizer = optimizer or tf.compat.v1.train.GradientDescentOptimizer(0.1)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.gather(table, IDS))
  grads = tape.gradient(loss, [table])
  spec.apply_gradients(optimizer, zip(grads, [table]))


def _table(rows=ROWS, name="table"):
  return tf.Variable(tf.zeros([rows, WIDTH]), name=name)


def _hints(caplog):
  return [record for record in caplog.records
          if "compact=True" in record.getMessage()]


def test_train_only_few_rows_of_a_large_table_hints_once(caplog):
  caplog.set_level(logging.INFO, logger="tfpartial")
  table, other = _table(), _table(name="other")
  _step_on(tfpartial.train_only(table, [0, 3, 7]), table)
  _step_on(tfpartial.train_only(table, [0, 3, 7]), table)
  _step_on(tfpartial.freeze(other, np.s_[:ROWS - 5]), other)
  hints = _hints(caplog)
  assert len(hints) == 1
  message = hints[0].getMessage()
  assert hints[0].levelno == logging.WARNING
  assert hints[0].name.startswith("tfpartial")
  # What, where, and what compact mode changes.
  assert "table" in message and "3 of 16384 rows" in message
  assert "train_only(" in message and "checkpoint" in message
  assert ("less than both the plain step and this spec without `compact`"
          in message), message


def test_the_hint_in_a_tf_function_and_a_tf1_graph(caplog):
  caplog.set_level(logging.INFO, logger="tfpartial")
  table = _table()
  spec = tfpartial.train_only(table, [1])
  tf.function(lambda: _step_on(spec, table))()
  assert len(_hints(caplog)) == 1
  with tf.Graph().as_default():
    graph_table = tf.compat.v1.Variable(tf.zeros([ROWS, WIDTH]),
                                        use_resource=True)
    tfpartial.train_only(graph_table, [1]).minimize(
        tf.compat.v1.train.GradientDescentOptimizer(0.1),
        tf.reduce_sum(graph_table))
  assert len(_hints(caplog)) == 1


@pytest.mark.parametrize("make_spec", [
    # compact already.
    lambda table: tfpartial.train_only(table, [0, 3], compact=True),
    # 1% or more trains.
    lambda table: tfpartial.train_only(table, np.arange(ROWS // 100 + 1)),
    # An element mask, 2% or more trainable (compact can cost more than
    # the default spec from about 4%).
    lambda table: tfpartial.train_only(
        table, np.random.default_rng(0).random((ROWS, WIDTH)) < 0.03),
    # An element mask, compact already.
    lambda table: tfpartial.train_only(
        table, np.eye(ROWS, WIDTH, dtype=bool), compact=True),
], ids=["compact", "one_percent", "elements", "compact_elements"])
def test_no_hint(caplog, make_spec):
  caplog.set_level(logging.INFO, logger="tfpartial")
  table = _table()
  _step_on(make_spec(table), table)
  assert not _hints(caplog)


def test_no_hint_for_a_small_table(caplog):
  caplog.set_level(logging.INFO, logger="tfpartial")
  table = _table(rows=(1 << 14) - 1)  # Under 1M elements.
  _step_on(tfpartial.train_only(table, [0]), table)
  assert not _hints(caplog)


def test_an_element_mask_training_under_2_percent_hints_once(caplog):
  caplog.set_level(logging.INFO, logger="tfpartial")
  table = _table()
  spec = tfpartial.train_only(table, np.eye(ROWS, WIDTH, dtype=bool))
  _step_on(spec, table)
  _step_on(spec, table)
  hints = _hints(caplog)
  assert len(hints) == 1
  message = hints[0].getMessage()
  assert "trains 64 of 1048576 elements (0.0061%)" in message, message
  assert "train_only(variable, mask, compact=True)" in message
  # Against both: the plain step and the spec without compact.
  assert ("under 2% trainable a step costs less than both the plain step "
          "and this spec without `compact`") in message, message
  assert "checkpoint" in message
