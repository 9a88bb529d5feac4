"""A tiny BERT-like model and BERT-style optimization code, for the patterns.

The model has what a BERT fine-tuning job freezes: a word-embedding table
whose pretrained rows stay fixed while new vocabulary rows train (a row
spec, with sparse `tf.gather` gradients), position embeddings frozen whole,
and a dense kernel with a few frozen elements. The optimizer code follows
the shape of BERT's `optimization.py` (written here from its description,
not copied): gradients, a global-norm clip, `apply_gradients` with the
global step, and an Adam-with-weight-decay optimizer that subclasses
`tf.compat.v1.train.Optimizer`, overrides `apply_gradients` and makes its
own slots with `tf.compat.v1.get_variable`.

`split_*` builds the split-variable reference: only the trainable elements
are variables, the frozen ones constants held in non-trainable variables.
"""

from __future__ import annotations

import re
from typing import Dict, List

import numpy as np
import tensorflow as tf

import tfpartial

VOCAB, POSITIONS, HIDDEN, CLASSES = 6, 3, 4, 2
PRETRAINED_ROWS = 4  # Rows 0..3 of the word table are frozen; 4, 5 train.
IDS = np.array([[0, 4, 5], [5, 1, 4]], np.int32)
LABELS = np.array([1, 0], np.int32)

_RNG = np.random.default_rng(20261130)
# Large enough that the global norm of the gradients is well above the
# clip norm, and the frozen gradients count for much of it. The kernel is
# small so that no tanh unit saturates: where tanh(x) rounds to 1, its
# gradient 1 - tanh(x)**2 is all round-off, which Adam's normalisation
# turns into differences of 1e-5 between two equal computations on
# another CPU (seen on CI with TensorFlow 2.15 and 2.18).
WORD0 = (3.0 * _RNG.normal(size=(VOCAB, HIDDEN))).astype(np.float32)
POS0 = (3.0 * _RNG.normal(size=(POSITIONS, HIDDEN))).astype(np.float32)
KERNEL0 = (0.1 * _RNG.normal(size=(HIDDEN, HIDDEN))).astype(np.float32)
BIAS0 = _RNG.normal(size=(HIDDEN,)).astype(np.float32)
OUT0 = (2.0 * _RNG.normal(size=(HIDDEN, CLASSES))).astype(np.float32)
KERNEL_FROZEN = np.zeros((HIDDEN, HIDDEN), bool)
KERNEL_FROZEN[[0, 1, 3], [2, 0, 3]] = True

NAMES = ("word_embeddings", "position_embeddings", "kernel", "bias",
         "output_weights")
INITIAL = dict(zip(NAMES, (WORD0, POS0, KERNEL0, BIAS0, OUT0)))


def frozen_masks() -> Dict[str, np.ndarray]:
  """name -> the frozen elements, True = frozen."""
  word = np.zeros(WORD0.shape, bool)
  word[:PRETRAINED_ROWS] = True
  return {"word_embeddings": word,
          "position_embeddings": np.ones(POS0.shape, bool),
          "kernel": KERNEL_FROZEN, "bias": np.zeros(BIAS0.shape, bool),
          "output_weights": np.zeros(OUT0.shape, bool)}


def pre_activations() -> np.ndarray:
  """The tanh layer's inputs at the initial values, one row a token."""
  embedded = WORD0[IDS] + POS0[np.newaxis]
  return embedded.reshape(-1, HIDDEN) @ KERNEL0 + BIAS0


def loss(word, pos, kernel, bias, out) -> tf.Tensor:
  """The classifier's loss on the fixed batch."""
  embedded = tf.gather(word, IDS) + pos[tf.newaxis]
  hidden = tf.tanh(tf.matmul(tf.reshape(embedded, [-1, HIDDEN]), kernel)
                   + bias)
  pooled = tf.reduce_mean(tf.reshape(hidden, [-1, POSITIONS, HIDDEN]), 1)
  logits = tf.matmul(pooled, out)
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=LABELS, logits=logits))


def build(make_variable) -> List[tf.Variable]:
  """The model's variables, `make_variable(value, name)` each, in order."""
  return [make_variable(INITIAL[name], name) for name in NAMES]


def spec(variables) -> tfpartial.FreezeSpec:
  """Pretrained rows (row spec), position embeddings (whole), kernel
  elements (element spec)."""
  word, pos, kernel, _, _ = variables
  return (tfpartial.freeze(word, np.s_[:PRETRAINED_ROWS])
          | tfpartial.freeze(pos)
          | tfpartial.freeze(kernel, KERNEL_FROZEN))


def model_loss(variables) -> tf.Tensor:
  return loss(*variables)


class Split:
  """The split reference's variables: trainable elements only."""

  def __init__(self, make_variable, make_constant):
    masks = frozen_masks()
    self.word_frozen = make_constant(WORD0[:PRETRAINED_ROWS], "word_frozen")
    self.pos = make_constant(POS0, "pos_frozen")
    self.kernel_frozen = make_constant(KERNEL0, "kernel_frozen")
    self.word_new = make_variable(WORD0[PRETRAINED_ROWS:], "word_new")
    self.kernel_t = make_variable(KERNEL0[~masks["kernel"]], "kernel_t")
    self.bias = make_variable(BIAS0, "bias_ref")
    self.out = make_variable(OUT0, "output_weights_ref")

  @property
  def trainable(self) -> List[tf.Variable]:
    return [self.word_new, self.kernel_t, self.bias, self.out]

  def loss(self) -> tf.Tensor:
    word = tf.concat([tf.convert_to_tensor(self.word_frozen),
                      tf.convert_to_tensor(self.word_new)], 0)
    kernel = tf.tensor_scatter_nd_update(
        tf.convert_to_tensor(self.kernel_frozen),
        np.argwhere(~KERNEL_FROZEN), self.kernel_t)
    return loss(word, self.pos, kernel, self.bias, self.out)

  def as_model(self, values) -> Dict[str, np.ndarray]:
    """The reference's values placed where the model keeps them."""
    word_new, kernel_t, bias, out = values
    kernel = KERNEL0.copy()
    kernel[~KERNEL_FROZEN] = kernel_t
    return {"word_embeddings": np.concatenate([WORD0[:PRETRAINED_ROWS],
                                               word_new]),
            "position_embeddings": POS0, "kernel": kernel, "bias": bias,
            "output_weights": out}


class AdamWeightDecay(tf.compat.v1.train.Optimizer):
  """Adam with decoupled weight decay, made the way BERT's is: its own
  `apply_gradients`, its own slots (`<variable>/adam_m`, `/adam_v`), and
  no bias correction; biases are not decayed."""

  def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9,
               beta_2=0.999, epsilon=1e-6, exclude_from_weight_decay=("bias",),
               name="AdamWeightDecay"):
    super().__init__(False, name)
    self.learning_rate = learning_rate
    self.weight_decay_rate = weight_decay_rate
    self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
    self.exclude_from_weight_decay = exclude_from_weight_decay

  def apply_gradients(self, grads_and_vars, global_step=None, name=None):
    del global_step  # As in BERT: the caller increments it.
    assignments = []
    for grad, param in grads_and_vars:
      if grad is None or param is None:
        continue
      param_name = re.sub(r":\d+$", "", param.name)
      m = tf.compat.v1.get_variable(
          param_name + "/adam_m", shape=param.shape.as_list(),
          dtype=tf.float32, trainable=False,
          initializer=tf.compat.v1.zeros_initializer())
      v = tf.compat.v1.get_variable(
          param_name + "/adam_v", shape=param.shape.as_list(),
          dtype=tf.float32, trainable=False,
          initializer=tf.compat.v1.zeros_initializer())
      grad = tf.convert_to_tensor(grad)
      next_m = self.beta_1 * m + (1.0 - self.beta_1) * grad
      next_v = self.beta_2 * v + (1.0 - self.beta_2) * tf.square(grad)
      update = next_m / (tf.sqrt(next_v) + self.epsilon)
      if not any(re.search(word, param_name)
                 for word in self.exclude_from_weight_decay):
        update += self.weight_decay_rate * param
      assignments += [param.assign(param - self.learning_rate * update),
                      m.assign(next_m), v.assign(next_v)]
    return tf.group(*assignments, name=name)


def bert_train_op(loss_value, tvars, optimizer, global_step, mask=None):
  """BERT's `create_optimizer` after the loss: gradients, clip, apply, and
  the global step it increments itself. `mask` is the one added line."""
  grads = tf.compat.v1.gradients(loss_value, tvars)
  if mask is not None:
    grads = mask(grads, tvars)
  (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
  train_op = optimizer.apply_gradients(zip(grads, tvars),
                                       global_step=global_step)
  # BERT's own optimizer ignores `global_step`; a built-in one increments
  # it too, and BERT's unordered `global_step.assign(global_step + 1)`
  # would race with that increment (plain TensorFlow under load counted
  # 11 for 12 in 4 of 150 runs of 6 steps). So the increment waits here.
  with tf.control_dependencies([train_op]):
    increment = global_step.assign(global_step + 1)
  return tf.group(train_op, increment)
