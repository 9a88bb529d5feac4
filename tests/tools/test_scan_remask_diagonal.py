"""A weight multiplied by a diagonal 0/1 matrix and written back
(`w.assign(tf.matmul(w, tf.linalg.diag(mask)))`, `w @ np.diag(keep)`,
`np.eye(n) * keep`, part 23's EQL `matmul([self.w[i]], self.masks[i])`)
re-masks its columns as `w * mask` does: found. The diagonal of a
trainable vector (a learned gate) or of a vector drawn each step is no
fixed mask, and a product by a dense matrix chooses no elements: silent."""

import pytest

import scanned

_found = scanned.found

_LAYER = '''
import numpy as np
import tensorflow as tf

KEEP = np.array([1., 0., 1.], dtype=np.float32)


class Masked(tf.keras.layers.Layer):
  def build(self, input_shape):
    self.w = self.add_weight(name="w", shape=(3, 3), trainable=True)
    self.keep_mask = tf.constant(KEEP)
    self.gate = tf.Variable(np.ones(3, np.float32), trainable=True)
    self.rotation = tf.constant(np.load("rotation.npy"))
    {build}

  def call(self, x):
    {line}
    return tf.matmul(x, self.w)
'''


def _source(line, build="pass"):
  return _LAYER.replace("{line}", line).replace("{build}", build)


CASES = [
    pytest.param(_source("self.w.assign(tf.matmul(self.w, "
                         "tf.linalg.diag(self.keep_mask)))"),
                 [("weight-remask", 17)], id="matmul_linalg_diag"),
    pytest.param(_source("self.w.assign(self.w @ np.diag(KEEP))"),
                 [("weight-remask", 17)], id="matmul_operator_np_diag"),
    pytest.param(_source("self.w.assign(self.w @ self.cols)",
                         build="self.cols = np.eye(3) * KEEP"),
                 [("weight-remask", 17)], id="eye_times_mask_attribute"),
    pytest.param(_source("w_mask = tf.matmul([self.w], self.diag_mask)[0]\n"
                         "    self.w.assign(w_mask)",
                         build="self.diag_mask = np.diag(KEEP)"),
                 [("weight-remask", 18)], id="listed_weight_eql"),
    pytest.param(_source("self.w.assign(tf.matmul(self.w, tf.linalg.diag("
                         "self.col_mask)))",
                         build="self.col_mask = tf.Variable(KEEP, "
                         "trainable=False)"),
                 [("weight-remask", 17)], id="untrainable_mask_variable"),
    pytest.param(_source("self.w.assign(tf.matmul(self.w, "
                         "tf.linalg.diag(self.gate)))"),
                 [], id="learned_gate"),
    pytest.param(_source("self.w.assign(tf.matmul(self.w, tf.linalg.diag("
                         "self.col_mask)))",
                         build="self.col_mask = tf.Variable(KEEP, "
                         "trainable=True)"),
                 [], id="learned_gate_named_mask"),
    pytest.param(_source("self.w.assign(tf.matmul(self.w, tf.linalg.diag("
                         "tf.cast(tf.random.uniform([3]) > 0.5, "
                         "tf.float32))))"),
                 [], id="drawn_each_step"),
    pytest.param(_source("self.w.assign(tf.matmul(self.w, self.rotation))"),
                 [], id="dense_matrix"),
    pytest.param(_source("y = tf.matmul(x, tf.linalg.diag(self.keep_mask))"),
                 [], id="input_not_weight"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_diagonal(source, expected):
  assert _found(source) == expected


_STEP = '''
import numpy as np
import tensorflow as tf

keep = {keep}
model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
optimizer = tf.keras.optimizers.Adam()


def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x) - y) ** 2)
  grads = tape.gradient(loss, model.trainable_variables)
  grads = [{product} for g in grads]
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''


def _step(product, keep="np.diag(np.load('keep.npy'))"):
  return _STEP.replace("{product}", product).replace("{keep}", keep)


STEPS = [
    pytest.param(_step("g @ keep"), [("grads-mask", 14)],
                 id="gradient_times_diagonal"),
    pytest.param(_step("tf.matmul(g, tf.linalg.diag(np.array([1., 0., 1.])))"),
                 [("grads-mask", 14)], id="gradient_matmul_literal_diagonal"),
    pytest.param(_step("g @ keep", keep="np.load('rotation.npy')"), [],
                 id="gradient_times_dense_matrix"),
    pytest.param(_step("g @ tf.linalg.diag(tf.random.uniform([3]))"), [],
                 id="gradient_times_drawn_diagonal"),
]


@pytest.mark.parametrize("source, expected", STEPS)
def test_grads_mask_diagonal(source, expected):
  assert _found(source) == expected


_PASSED = '''
import numpy as np
import tensorflow as tf


class EqlLayer(tf.keras.layers.Layer):
  def __init__(self, mask=None):
    super().__init__()
    self.mask = mask

  def build(self, input_shape):
    self.w = self.add_weight(name="w", shape=(3, 3), trainable=True)

  def call(self, x):
    if self.mask:
      w_mask = tf.matmul([self.w], self.mask[0])[0]
      self.w.assign(w_mask)
    return tf.matmul(x, self.w)


def build_mask(weights):
  keep = []
  for value in weights:
    keep.append(0 if value == 0 else 1)
  return [{made}]


model = tf.keras.Sequential([EqlLayer(mask=build_mask(np.load("w.npy")))])
model.compile("adam", "mse")
model.fit(np.zeros((4, 3)), np.zeros((4, 3)))
'''


@pytest.mark.parametrize("made, expected", [
    pytest.param("np.diag(keep)", [("weight-remask", 17)],
                 id="diagonal_passed_to_constructor"),
    pytest.param("np.load('rotation.npy')", [],
                 id="dense_matrix_passed_to_constructor"),
])
def test_remask_diagonal_passed(made, expected):
  assert _found(_PASSED.replace("{made}", made)) == expected
