"""A TF1 graph holds one constant per small mask's values: the same mask
on each of a deep model's layers is one node, not one per layer
(`_frozen/_tensors.SHARED_UP_TO`); different values never share."""

import numpy as np
import tensorflow as tf

import tfpartial
from tfpartial._frozen import _tensors


def _mask_constants(shape, masks):
  graph = tf.Graph()
  with graph.as_default():
    variables = [tf.compat.v1.Variable(tf.ones(shape)) for _ in masks]
    spec = tfpartial.FreezeSpec()
    for variable, mask in zip(variables, masks):
      spec = spec | tfpartial.freeze(variable, mask)
    loss = sum(tf.reduce_sum(v * v) for v in variables)
    train_op = spec.minimize(tf.compat.v1.train.GradientDescentOptimizer(0.5),
                             loss)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      session.run(train_op)
      values = session.run(variables)
  constants = [op for op in graph.get_operations()
               if op.type == "Const" and op.name.startswith("tfpartial_")]
  return constants, values


def test_one_constant_for_every_variable_with_the_same_mask():
  column = np.zeros((16, 8), bool)
  column[:, 0] = True
  constants, values = _mask_constants((16, 8), [column] * 5)
  assert len(constants) == 1, constants
  for value in values:  # Each keeps its frozen column, and trains the rest.
    assert (value[:, 0] == 1).all() and (value[:, 1:] != 1).all()


def test_different_masks_are_different_constants():
  first, second = np.zeros((16, 8), bool), np.zeros((16, 8), bool)
  first[:, 0], second[:, 1] = True, True
  constants, values = _mask_constants((16, 8), [first, second])
  assert len(constants) == 2, constants
  assert (values[0][:, 0] == 1).all() and (values[0][:, 1] != 1).all()
  assert (values[1][:, 1] == 1).all() and (values[1][:, 0] != 1).all()


def test_large_masks_are_not_hashed(monkeypatch):
  monkeypatch.setattr(_tensors, "SHARED_UP_TO", 100)
  column = np.zeros((16, 8), bool)
  column[:, 0] = True
  constants, _ = _mask_constants((16, 8), [column] * 3)
  assert len(constants) == 3, constants
