"""The public TF1, TF2 and Keras ways code masks gradients between
computing them (`tape.gradient`, `compute_gradients`, `tf.gradients`,
`optimizer.get_gradients`) and applying them, and the ways it writes
saved values of part of a variable back after the step: one minimal model
per API, each found as `grads-mask` or `write-back`, catalogued by API
rather than by a codebase. Beside them, the same APIs changing gradients
or writing values without keeping any part from training stay silent:
clipping, loss scaling, accumulation, a gradient penalty, NaN guards,
learning-rate multipliers, masks taken from the gradient itself each step,
an EMA or target network, a checkpoint restore, a rewind per round."""

import pytest

import scanned

# A Keras model whose first kernel's rows 0..9 are pretrained (kept).
_TF2 = '''
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"),
                             tf.keras.layers.Dense(10)])
model.build((None, 32))
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
kernel = model.layers[0].kernel
mask = np.ones((32, 64), np.float32)
mask[:10] = 0.0
mask = tf.constant(mask)

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
  grads = tape.gradient(loss, model.trainable_variables)
'''

_APPLY = ("  optimizer.apply_gradients(\n"
          "      zip(grads, model.trainable_variables))\n"
          "  return loss\n")


def _tf2(change, apply=_APPLY):
  return _TF2 + "".join("  " + line + "\n"
                        for line in change.strip("\n").split("\n")) + apply


# The same in a TF1 graph, trained through `compute_gradients`.
_TF1 = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 32])
y = tf.placeholder(tf.int64, [None])
w = tf.get_variable("w", [32, 10])
b = tf.get_variable("b", [10])
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=y, logits=tf.matmul(x, w) + b))
opt = tf.train.MomentumOptimizer(0.01, 0.9)
np_mask = np.ones((32, 10), np.float32)
np_mask[:10] = 0.0
mask = tf.constant(np_mask)
gvs = opt.compute_gradients(loss)
'''

_TF1_RUN = '''
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(train_op, {x: xs, y: ys})
'''


# The graph alone, for the calls that compute the gradients themselves.
_TF1_BARE = _TF1.replace("gvs = opt.compute_gradients(loss)\n", "")


def _tf1(change):
  return _TF1 + change.strip("\n") + "\n" + _TF1_RUN


# An embedding whose rows 0..999 are pretrained, its gradient sparse.
_EMBEDDING = '''
import numpy as np
import tensorflow as tf

embedding = tf.keras.layers.Embedding(50000, 128)
head = tf.keras.layers.Dense(2)
optimizer = tf.keras.optimizers.Adam(1e-3)
row_mask = tf.constant(np.r_[np.zeros(1000), np.ones(49000)], tf.float32)

@tf.function
def train_step(ids, y):
  with tf.GradientTape() as tape:
    logits = head(tf.reduce_mean(embedding(ids), axis=1))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits))
  variables = embedding.trainable_variables + head.trainable_variables
  grads = tape.gradient(loss, variables)
  g = grads[0]
'''


def _embedding(change):
  return _EMBEDDING + "".join(
      "  " + line + "\n" for line in change.strip("\n").split("\n")) + (
          "  optimizer.apply_gradients(zip(grads, variables))\n")


# The same table in a TF1 graph.
_TF1_EMBEDDING = '''
import numpy as np
import tensorflow as tf

ids = tf.placeholder(tf.int64, [None, 20])
y = tf.placeholder(tf.int64, [None])
table = tf.get_variable("table", [50000, 128])
logits = tf.layers.dense(tf.reduce_mean(
    tf.nn.embedding_lookup(table, ids), axis=1), 2)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=y, logits=logits))
opt = tf.train.AdagradOptimizer(0.1)
row_mask = tf.constant(np.r_[np.zeros(1000), np.ones(49000)], tf.float32)
gvs = opt.compute_gradients(loss)
'''

GRADS_MASK = {
    # Element masks on a dense gradient.
    "multiply_operator": _tf2("grads[0] = grads[0] * mask"),
    "multiply_in_comprehension": _tf2(
        "grads = [g * mask if v is kernel else g\n"
        "         for g, v in zip(grads, model.trainable_variables)]"),
    "tf_multiply": _tf2("grads[0] = tf.multiply(grads[0], mask)"),
    "tf_math_multiply": _tf2("grads[0] = tf.math.multiply(grads[0], mask)"),
    "tf_where_zeros_like": _tf2(
        "grads[0] = tf.where(mask > 0, grads[0], tf.zeros_like(grads[0]))"),
    "tf_where_zero_scalar": _tf2(
        "frozen = tf.equal(mask, 0.0)\n"
        "grads[0] = tf.where(frozen, 0.0, grads[0])"),
    "tensor_scatter_nd_update_dense": _tf2(
        "frozen_rows = tf.range(10)[:, None]\n"
        "grads[0] = tf.tensor_scatter_nd_update(\n"
        "    grads[0], frozen_rows, tf.zeros([10, 64]))"),
    "concat_zeros_head": _tf2(
        "g = grads[0]\n"
        "grads[0] = tf.concat([tf.zeros_like(g[:10]), g[10:]], axis=0)"),
    "gather_then_scatter_nd": _tf2(
        "train_rows = tf.range(10, 32)\n"
        "kept = tf.gather(grads[0], train_rows)\n"
        "grads[0] = tf.scatter_nd(train_rows[:, None], kept,\n"
        "                         tf.shape(grads[0]))"),
    "boolean_mask_then_scatter_nd": _tf2(
        "trains = tf.reduce_any(mask > 0, axis=1)\n"
        "rows = tf.where(trains)\n"
        "kept = tf.boolean_mask(grads[0], trains)\n"
        "grads[0] = tf.scatter_nd(rows, kept, tf.shape(grads[0], "
        "out_type=tf.int64))"),
    # Whole variables chosen by name.
    "none_by_name": _tf2(
        "grads = [None if 'dense/' in v.name else g\n"
        "         for g, v in zip(grads, model.trainable_variables)]"),
    "zeros_like_by_name": _tf2(
        "grads = [tf.zeros_like(g) if 'kernel' in v.name else g\n"
        "         for g, v in zip(grads, model.trainable_variables)]"),
    # Sparse gradients of an embedding.
    "indexed_slices_rebuilt": _embedding(
        "grads[0] = tf.IndexedSlices(g.values * tf.gather(row_mask, "
        "g.indices)[:, None],\n"
        "                            g.indices, g.dense_shape)"),
    "indexed_slices_densified": _embedding(
        "grads[0] = tf.convert_to_tensor(g) * row_mask[:, None]"),
    # Where the gradients are applied.
    "keras3_apply": _tf2("grads[0] = grads[0] * mask",
                         "  optimizer.apply(grads,\n"
                         "                  model.trainable_variables)\n"
                         "  return loss\n"),
    "strategy_run": '''
import numpy as np
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
  model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
  model.build((None, 32))
  optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
mask = np.ones((32, 10), np.float32)
mask[:10] = 0.0

@tf.function
def distributed_step(x, y):
  def step(x, y):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
          y, model(x), from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    grads = [grads[0] * mask] + grads[1:]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
  return strategy.run(step, args=(x, y))
''',
    "train_step_override": '''
import numpy as np
import tensorflow as tf

class Partial(tf.keras.Model):
  def __init__(self, mask):
    super().__init__()
    self.mask = mask
    self.dense = tf.keras.layers.Dense(10)

  def call(self, x):
    return self.dense(x)

  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      loss = self.compiled_loss(y, self(x, training=True))
    grads = tape.gradient(loss, self.trainable_variables)
    grads = [g * self.mask if "kernel" in v.name else g
             for g, v in zip(grads, self.trainable_variables)]
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    return {"loss": loss}

mask = np.ones((32, 10), np.float32)
mask[:10] = 0.0
model = Partial(mask)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
''',
    "apply_gradients_override_super": '''
import tensorflow as tf

class MaskedAdam(tf.keras.optimizers.Adam):
  def __init__(self, masks, **kwargs):
    super().__init__(**kwargs)
    self.masks = masks

  def apply_gradients(self, grads_and_vars, **kwargs):
    masked = [(g * self.masks[v.name], v) if v.name in self.masks else (g, v)
              for g, v in grads_and_vars]
    return super().apply_gradients(masked, **kwargs)
''',
    "get_gradients_override": '''
import tensorflow as tf
from tensorflow.keras import backend as K

class MaskedSGD(tf.keras.optimizers.legacy.SGD):
  def __init__(self, masks, **kwargs):
    super().__init__(**kwargs)
    self.masks = masks

  def get_gradients(self, loss, params):
    grads = super().get_gradients(loss, params)
    return [g * self.masks[p.name] if p.name in self.masks else g
            for g, p in zip(grads, params)]
''',
    "gradient_transformers": '''
import numpy as np
import tensorflow as tf

mask = np.ones((32, 10), np.float32)
mask[:10] = 0.0

def freeze_rows(grads_and_vars):
  return [(g * mask if len(v.shape) == 2 else g, v)
          for g, v in grads_and_vars]

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer=tf.keras.optimizers.Adam(
    1e-3, gradient_transformers=[freeze_rows]), loss="mse")
''',
    "gradient_transformers_lambda": '''
import numpy as np
import tensorflow as tf

mask = np.ones((32, 10), np.float32)
mask[:10] = 0.0
optimizer = tf.keras.optimizers.legacy.SGD(0.1, gradient_transformers=[
    lambda gvs: [(g * mask if v.shape == (32, 10) else g, v)
                 for g, v in gvs]])
model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer=optimizer, loss="mse")
''',
    "custom_gradient_identity": '''
import numpy as np
import tensorflow as tf

mask = np.ones((32, 10), np.float32)
mask[:10] = 0.0

@tf.custom_gradient
def partly_frozen(w):
  def grad(dy):
    return dy * mask
  return tf.identity(w), grad

class Masked(tf.keras.layers.Layer):
  def build(self, shape):
    self.kernel = self.add_weight("kernel", (32, 10))

  def call(self, x):
    return tf.matmul(x, partly_frozen(self.kernel))

model = tf.keras.Sequential([Masked()])
model.compile(optimizer="adam", loss="mse")
''',
    # TF1 graphs.
    "tf1_compute_gradients_multiply": _tf1(
        "masked = [(g * mask if v is w else g, v) for g, v in gvs]\n"
        "train_op = opt.apply_gradients(masked)"),
    "tf1_gradients_where": _tf1(
        "grads = tf.gradients(loss, [w, b])\n"
        "grads[0] = tf.where(mask > 0, grads[0], tf.zeros_like(grads[0]))\n"
        "train_op = opt.apply_gradients(zip(grads, [w, b]))"),
    "tf1_tensor_scatter_nd_update": _tf1(
        "g, v = gvs[0]\n"
        "g = tf.tensor_scatter_nd_update(g, [[0], [1], [2]], "
        "tf.zeros([3, 10]))\n"
        "train_op = opt.apply_gradients([(g, v)] + gvs[1:])"),
    "tf1_concat": _tf1(
        "g, v = gvs[0]\n"
        "g = tf.concat([tf.zeros_like(g[:10]), g[10:]], 0)\n"
        "train_op = opt.apply_gradients([(g, v)] + gvs[1:])"),
    "tf1_zeros_by_name": _tf1(
        "gvs = [(tf.zeros_like(g), v) if v.name.startswith('w') else (g, v)\n"
        "       for g, v in gvs]\n"
        "train_op = opt.apply_gradients(gvs)"),
    "tf1_indexed_slices_rebuilt": _TF1_EMBEDDING + '''
g, v = gvs[0]
kept = tf.expand_dims(tf.gather(row_mask, g.indices), 1)
g = tf.IndexedSlices(g.values * kept, g.indices, g.dense_shape)
train_op = opt.apply_gradients([(g, v)] + gvs[1:])
''' + _TF1_RUN,
}

# Saved values written back after the step.
_KEEP = '''
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"),
                             tf.keras.layers.Dense(10)])
model.build((None, 32))
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
w = model.layers[0].kernel
frozen = np.zeros((32, 64), bool)
frozen[:10] = True
frozen_ids = tf.constant([[i] for i in range(10)])

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
  grads = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
  return loss
'''


def _kept(save, restore):
  return _KEEP + save.strip("\n") + '''
for x, y in dataset:
  train_step(x, y)
''' + "".join("  " + line + "\n" for line in restore.strip("\n").split("\n"))


_TF1_KEEP = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 32])
y = tf.placeholder(tf.int64, [None])
w = tf.get_variable("w", [32, 10])
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=y, logits=tf.matmul(x, w)))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
frozen_ids = tf.constant(list(range(10)))
'''

WRITE_BACK = {
    "identity_then_where": _TF2.replace(
        "  with tf.GradientTape", "  saved = tf.identity(kernel)\n"
        "  with tf.GradientTape", 1) + '''\
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
  kernel.assign(tf.where(mask > 0, kernel, saved))
  return loss
''',
    "numpy_then_assign_where": _kept(
        "saved = w.numpy()",
        "w.assign(np.where(frozen, saved, w.numpy()))"),
    "variable_copy_then_where": _kept(
        "saved = tf.Variable(w.read_value(), trainable=False)",
        "w.assign(tf.where(frozen, saved, w))"),
    "scatter_nd_update_method": _kept(
        "saved = tf.identity(w)",
        "w.scatter_nd_update(frozen_ids, tf.gather_nd(saved, frozen_ids))"),
    "sliced_assign": _kept(
        "saved = w.numpy()",
        "w[:10].assign(saved[:10])"),
    "set_weights_in_callback": '''
import numpy as np
import tensorflow as tf

class KeepRows(tf.keras.callbacks.Callback):
  def __init__(self, layer, rows):
    super().__init__()
    self.layer = layer
    self.rows = rows
    self.saved = [w.copy() for w in layer.get_weights()]

  def on_train_batch_end(self, batch, logs=None):
    kernel, bias = self.layer.get_weights()
    kernel[self.rows] = self.saved[0][self.rows]
    self.layer.set_weights([kernel, bias])

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="mse")
model.fit(xs, ys, callbacks=[KeepRows(model.layers[0], np.arange(10))])
''',
    "sliced_assign_in_callback": '''
import tensorflow as tf

class KeepRows(tf.keras.callbacks.Callback):
  def __init__(self, layer, n):
    super().__init__()
    self.layer = layer
    self.n = n
    self.saved = layer.kernel.numpy()

  def on_train_batch_end(self, batch, logs=None):
    self.layer.kernel[:self.n].assign(self.saved[:self.n])

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="mse")
model.fit(xs, ys, callbacks=[KeepRows(model.layers[0], 10)])
''',
    "tf1_scatter_update_fetched_beside": _TF1_KEEP + '''
saved_rows = np.load("pretrained.npy")[:10]
restore_op = tf.compat.v1.scatter_update(w, frozen_ids, saved_rows)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run([train_op, restore_op], {x: xs, y: ys})
''',
    "tf1_scatter_update_after_control_dependencies": _TF1_KEEP + '''
saved_rows = tf.constant(np.load("pretrained.npy")[:10])
with tf.control_dependencies([train_op]):
  step = tf.scatter_update(w, frozen_ids, saved_rows)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(step, {x: xs, y: ys})
''',
    "tf1_saved_by_session_then_assigned": _TF1_KEEP + '''
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  saved = sess.run(w)
  for xs, ys in batches():
    sess.run(train_op, {x: xs, y: ys})
    current = sess.run(w)
    current[:10] = saved[:10]
    w.load(current, sess)
''',
}

# Optimizer APIs that take a transform or multipliers, the Keras 2 and
# Keras 3 optimizer methods, and zeros padded back.
_MORE_MASKS = {}
_MORE_MASKS["optimize_loss_gradient_multipliers"] = _TF1_BARE + '''
train_op = tf.contrib.layers.optimize_loss(
    loss, tf.train.get_or_create_global_step(), 0.01, "Adam",
    gradient_multipliers={w: 0.0})
''' + _TF1_RUN
_MORE_MASKS["slim_create_train_op_gradient_multipliers"] = _TF1_BARE + '''
slim = tf.contrib.slim
train_op = slim.learning.create_train_op(
    loss, opt, gradient_multipliers={w.op.name: 0.0})
''' + _TF1_RUN
_MORE_MASKS["slim_multiply_gradients"] = _tf1('''
slim = tf.contrib.slim
gvs = slim.learning.multiply_gradients(gvs, {w: 0.0})
train_op = opt.apply_gradients(gvs)''')
_MORE_MASKS["optimize_loss_clip_gradients_fn"] = _TF1_BARE + '''
def keep_rows(grads_and_vars):
  return [(g * mask if v is w else g, v) for g, v in grads_and_vars]

train_op = tf.contrib.layers.optimize_loss(
    loss, tf.train.get_or_create_global_step(), 0.01, "Adam",
    clip_gradients=keep_rows)
''' + _TF1_RUN
_MORE_MASKS["keras3_update_step_override"] = '''
import keras

class MaskedAdam(keras.optimizers.Adam):
  def __init__(self, masks, **kwargs):
    super().__init__(**kwargs)
    self.masks = masks

  def update_step(self, gradient, variable, learning_rate):
    if variable.path in self.masks:
      gradient = gradient * self.masks[variable.path]
    return super().update_step(gradient, variable, learning_rate)
'''
_MORE_MASKS["tf1_apply_dense_override"] = '''
import tensorflow as tf

class MaskedMomentum(tf.train.MomentumOptimizer):
  def __init__(self, masks, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.masks = masks

  def _apply_dense(self, grad, var):
    if var.op.name in self.masks:
      grad = grad * self.masks[var.op.name]
    return super()._apply_dense(grad, var)
'''
_MORE_MASKS["keras2_get_updates_override"] = '''
from keras import backend as K
from keras.optimizers import SGD

class MaskedSGD(SGD):
  def __init__(self, masks, **kwargs):
    super().__init__(**kwargs)
    self.masks = masks

  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    grads = [g * self.masks[p.name] if p.name in self.masks else g
             for g, p in zip(grads, params)]
    self.updates = []
    for p, g in zip(params, grads):
      self.updates.append(K.update(p, p - self.lr * g))
    return self.updates
'''
_MORE_MASKS["pad_zeros_head"] = _tf2(
    "grads[0] = tf.pad(grads[0][10:], [[10, 0], [0, 0]])")
_MORE_MASKS["keras3_train_step_apply"] = '''
import numpy as np
import keras
import tensorflow as tf

class Partial(keras.Model):
  def __init__(self, mask):
    super().__init__()
    self.mask = mask
    self.dense = keras.layers.Dense(10)

  def call(self, x):
    return self.dense(x)

  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      loss = self.compute_loss(y=y, y_pred=self(x, training=True))
    grads = tape.gradient(loss, self.trainable_variables)
    grads = [tf.where(self.mask, tf.zeros_like(g), g)
             if g.shape == self.mask.shape else g for g in grads]
    self.optimizer.apply(grads, self.trainable_variables)
    return {"loss": loss}
'''
# More writes: Keras' backend, a blend, a method's `IndexedSlices`,
# after `train_on_batch`, under TF1 `control_dependencies`.
_MORE_WRITES = {}
_MORE_WRITES["keras_set_value"] = _kept(
    "saved = K.get_value(w)",
    "K.set_value(w, np.where(frozen, saved, K.get_value(w)))").replace(
        "import tensorflow as tf",
        "import tensorflow as tf\nfrom tensorflow.keras import backend as K")
_MORE_WRITES["assign_arithmetic_blend"] = _kept(
    "saved = tf.identity(w)",
    "f = tf.cast(frozen, tf.float32)\nw.assign(saved * f + w * (1.0 - f))")
_MORE_WRITES["scatter_update_method_indexed_slices"] = _kept(
    "saved = tf.identity(w)",
    "rows = tf.range(10)\n"
    "w.scatter_update(tf.IndexedSlices(tf.gather(saved, rows), rows))")
_MORE_WRITES["train_on_batch_then_set_weights"] = '''
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="mse")
layer = model.layers[0]
saved_kernel = layer.get_weights()[0].copy()
for xs, ys in batches:
  model.train_on_batch(xs, ys)
  kernel, bias = layer.get_weights()
  kernel[:10] = saved_kernel[:10]
  layer.set_weights([kernel, bias])
'''
_MORE_WRITES["tf1_assign_where_control_dependencies"] = _TF1_KEEP + '''
saved = tf.constant(np.load("pretrained.npy"))
frozen = np.zeros((32, 10), bool)
frozen[:10] = True
with tf.control_dependencies([train_op]):
  step = tf.assign(w, tf.where(frozen, saved, w))
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(step, {x: xs, y: ys})
'''
_MORE_WRITES["tf1_scatter_nd_update_fetched"] = _TF1_KEEP + '''
saved_rows = np.load("pretrained.npy")[:10]
restore = tf.compat.v1.scatter_nd_update(
    w, tf.expand_dims(frozen_ids, 1), saved_rows)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run([train_op, restore], {x: xs, y: ys})
'''
# A write an estimator hook builds in `begin` and runs after each step.
_MORE_WRITES["estimator_hook_after_run"] = '''
import numpy as np
import tensorflow as tf

class KeepRows(tf.estimator.SessionRunHook):
  def __init__(self, rows):
    self.rows = rows

  def begin(self):
    table = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "emb")[0]
    saved = tf.constant(np.load("pretrained_rows.npy"))
    self.restore = tf.scatter_update(table, self.rows, saved)

  def after_run(self, run_context, run_values):
    run_context.session.run(self.restore)

estimator.train(input_fn, hooks=[KeepRows(np.arange(1000))])
'''

_MORE_WRITES["estimator_hook_before_run"] = '''
import numpy as np
import tensorflow as tf

class KeepRows(tf.estimator.SessionRunHook):
  def __init__(self, rows):
    self.rows = rows

  def begin(self):
    table = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "emb")[0]
    saved = tf.constant(np.load("pretrained_rows.npy"))
    self.restore = tf.scatter_update(table, self.rows, saved)

  def before_run(self, run_context):
    return tf.train.SessionRunArgs(self.restore)

estimator.train(input_fn, hooks=[KeepRows(np.arange(1000))])
'''

# The same hook writing the rows once, when the session is made: a warm
# start.
_HOOK_ONCE = '''
import numpy as np
import tensorflow as tf

class WarmStartRows(tf.estimator.SessionRunHook):
  def __init__(self, rows):
    self.rows = rows

  def begin(self):
    table = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "emb")[0]
    saved = tf.constant(np.load("pretrained_rows.npy"))
    self.restore = tf.scatter_update(table, self.rows, saved)

  def after_create_session(self, session, coord):
    session.run(self.restore)

estimator.train(input_fn, hooks=[WarmStartRows(np.arange(1000))])
'''

# Element-wise and structure-wise spellings, `tf.sparse.mask`, more
# overrides and run names.
_MORE_MASKS["multiply_no_nan"] = _tf2(
    "grads[0] = tf.math.multiply_no_nan(grads[0], mask)")
_MORE_MASKS["augmented_multiply_loop"] = _tf2(
    "masks = [mask] + [tf.ones_like(v)\n"
    "                  for v in model.trainable_variables[1:]]\n"
    "for i in range(len(grads)):\n"
    "  grads[i] *= masks[i]")
_MORE_MASKS["nest_map_structure"] = _tf2(
    "masks = [mask] + [tf.ones_like(v)\n"
    "                  for v in model.trainable_variables[1:]]\n"
    "grads = tf.nest.map_structure(lambda g, m: g * m, grads, masks)")
_MORE_MASKS["map_lambda_pairs"] = _tf1(
    "gvs = list(map(lambda gv: (gv[0] * mask, gv[1]) if gv[1] is w else gv,\n"
    "               gvs))\n"
    "train_op = opt.apply_gradients(gvs)")
_MORE_MASKS["sparse_mask_indexed_slices"] = _embedding(
    "grads[0] = tf.sparse.mask(g, tf.range(1000))")
_MORE_MASKS["tf1_compute_gradients_override"] = '''
import tensorflow as tf

class FrozenRowsAdam(tf.train.AdamOptimizer):
  def __init__(self, masks, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.masks = masks

  def compute_gradients(self, loss, var_list=None, **kwargs):
    gvs = super().compute_gradients(loss, var_list, **kwargs)
    return [(g * self.masks[v.op.name], v) if v.op.name in self.masks
            else (g, v) for g, v in gvs]
'''
_MORE_MASKS["experimental_run_v2"] = GRADS_MASK["strategy_run"].replace(
    "strategy.run(", "strategy.experimental_run_v2(")
_MORE_MASKS["keras3_apply_override_super"] = '''
import keras

class MaskedAdam(keras.optimizers.Adam):
  def __init__(self, masks, **kwargs):
    super().__init__(**kwargs)
    self.masks = masks

  def apply(self, grads, trainable_variables=None):
    grads = [g * self.masks[v.path] if v.path in self.masks else g
             for g, v in zip(grads, trainable_variables)]
    return super().apply(grads, trainable_variables)
'''
# A scatter rebuilt whole, per epoch, a TF1 slice, a batch of values.
_MORE_WRITES["assign_tensor_scatter_nd_update"] = _kept(
    "saved = tf.identity(w)",
    "w.assign(tf.tensor_scatter_nd_update(\n"
    "    w, frozen_ids, tf.gather_nd(saved, frozen_ids)))")
_MORE_WRITES["fit_epoch_then_set_weights"] = '''
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="mse")
saved = [w.copy() for w in model.get_weights()]
for epoch in range(10):
  model.fit(xs, ys, epochs=1)
  weights = model.get_weights()
  weights[0][:10] = saved[0][:10]
  model.set_weights(weights)
'''
_MORE_WRITES["tf1_sliced_assign_control_dependencies"] = _TF1_KEEP + '''
saved = tf.constant(np.load("pretrained.npy"))
with tf.control_dependencies([train_op]):
  step = w[:10].assign(saved[:10])
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(step, {x: xs, y: ys})
'''
_MORE_WRITES["batch_set_value"] = _kept(
    "saved = w.numpy()",
    "tf.keras.backend.batch_set_value(\n"
    "    [(w, np.where(frozen, saved, w.numpy()))])")
# A Keras 2 callback's backend write, a monitored session's second run,
# a TF2 step writing rows back itself.
_MORE_WRITES["callback_on_batch_end_set_value"] = '''
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K

class KeepRows(tf.keras.callbacks.Callback):
  def __init__(self, saved):
    super().__init__()
    self.saved = saved

  def on_batch_end(self, batch, logs=None):
    kernel = self.model.layers[0].kernel
    value = K.get_value(kernel)
    value[:10] = self.saved[:10]
    K.set_value(kernel, value)

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="mse")
model.fit(xs, ys, callbacks=[KeepRows(np.load("pretrained.npy"))])
'''
_MORE_WRITES["monitored_session_restore_op"] = _TF1_KEEP + '''
saved_rows = np.load("pretrained.npy")[:10]
restore_op = tf.scatter_update(w, frozen_ids, saved_rows)
with tf.train.MonitoredTrainingSession() as sess:
  while not sess.should_stop():
    sess.run(train_op)
    sess.run(restore_op)
'''
_MORE_WRITES["tf2_scatter_update_indexed_slices_after_apply"] = _KEEP.replace(
    "  return loss\n",
    "  w.scatter_update(tf.IndexedSlices(saved_rows, tf.range(10)))\n"
    "  return loss\n").replace(
        "frozen_ids = ",
        "saved_rows = tf.constant(np.load('pretrained.npy')[:10])\n"
        "frozen_ids = ")
GRADS_MASK.update(_MORE_MASKS)
WRITE_BACK.update(_MORE_WRITES)

# The saved rows kept in a non-trainable variable and written back under
# `control_dependencies`: the `shadow-variable` idiom, found as that.
OTHER_IDIOM = {
    "tf1_variable_copy_after_control_dependencies": ("shadow-variable",
                                                     _TF1_KEEP + '''
saved_rows = tf.Variable(tf.gather(w.initialized_value(), frozen_ids),
                         trainable=False)
with tf.control_dependencies([train_op]):
  step = tf.scatter_update(w, frozen_ids, saved_rows)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(step, {x: xs, y: ys})
'''),
}

_SILENT_TF2 = {
    "clip_by_norm": "grads = [tf.clip_by_norm(g, 5.0) for g in grads]",
    "clip_by_global_norm": "grads, _ = tf.clip_by_global_norm(grads, 1.0)",
    "loss_scale_unscaled": "grads = [g / 1024.0 for g in grads]",
    "nan_guard_where": (
        "grads = [tf.where(tf.math.is_finite(g), g, tf.zeros_like(g))\n"
        "         for g in grads]"),
    "learning_rate_multipliers": (
        "grads = [g * 0.1 if 'dense/' in v.name else g\n"
        "         for g, v in zip(grads, model.trainable_variables)]"),
    "top_k_sparsification": (
        "kept = []\n"
        "for g in grads:\n"
        "  k = tf.maximum(1, tf.size(g) // 100)\n"
        "  top = tf.math.top_k(tf.reshape(tf.abs(g), [-1]), k)\n"
        "  threshold = top.values[-1]\n"
        "  kept.append(g * tf.cast(tf.abs(g) >= threshold, g.dtype))\n"
        "grads = kept"),
    "magnitude_threshold": (
        "grads = [tf.where(tf.abs(g) < 1e-3, tf.zeros_like(g), g)\n"
        "         for g in grads]"),
    "gradient_dropout": (
        "grads = [tf.where(tf.random.uniform(tf.shape(g)) < 0.1,\n"
        "                  tf.zeros_like(g), g) for g in grads]"),
    "nest_map_structure_clipping": (
        "grads = tf.nest.map_structure(lambda g: tf.clip_by_norm(g, 1.0),"
        " grads)"),
    "map_halved": "grads = list(map(lambda g: g * 0.5, grads))",
    "nest_map_structure_nan_guard": (
        "grads = tf.nest.map_structure(\n"
        "    lambda g: tf.where(tf.math.is_finite(g), g, tf.zeros_like(g)),"
        " grads)"),
    "gradient_noise": (
        "grads = [g + tf.random.normal(tf.shape(g), stddev=0.01)\n"
        "         for g in grads]"),
}

SILENT = {name: _tf2(change) for name, change in _SILENT_TF2.items()}
SILENT.update({
    "tf1_clip_by_norm": _tf1(
        "clipped = [(tf.clip_by_norm(g, 5.0), v) for g, v in gvs]\n"
        "train_op = opt.apply_gradients(clipped)"),
    "tf1_nan_guard": _tf1(
        "safe = [(tf.where(tf.is_finite(g), g, tf.zeros_like(g)), v)\n"
        "        for g, v in gvs]\n"
        "train_op = opt.apply_gradients(safe)"),
    "loss_scale_optimizer": '''
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.Adam(1e-3))

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
    scaled = optimizer.get_scaled_loss(loss)
  grads = tape.gradient(scaled, model.trainable_variables)
  grads = optimizer.get_unscaled_gradients(grads)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
''',
    "gradient_accumulation": '''
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.build((None, 32))
optimizer = tf.keras.optimizers.Adam(1e-3)
acc = [tf.Variable(tf.zeros_like(v), trainable=False)
       for v in model.trainable_variables]

@tf.function
def train_step(x, y, apply_now):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
  grads = tape.gradient(loss, model.trainable_variables)
  for i, g in enumerate(grads):
    acc[i].assign_add(g)
  if apply_now:
    optimizer.apply_gradients(
        [(a / 4.0, v) for a, v in zip(acc, model.trainable_variables)])
    for a in acc:
      a.assign(tf.zeros_like(a))
''',
    "wgan_gp_penalty": '''
import tensorflow as tf

critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
generator = tf.keras.Sequential([tf.keras.layers.Dense(32)])
c_opt = tf.keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)

@tf.function
def critic_step(real, z):
  fake = generator(z)
  eps = tf.random.uniform([tf.shape(real)[0], 1])
  mixed = eps * real + (1 - eps) * fake
  with tf.GradientTape() as tape:
    with tf.GradientTape() as inner:
      inner.watch(mixed)
      score = critic(mixed)
    g = inner.gradient(score, mixed)
    penalty = tf.reduce_mean((tf.norm(g, axis=1) - 1.0) ** 2)
    loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real)) \\
        + 10.0 * penalty
  grads = tape.gradient(loss, critic.trainable_variables)
  c_opt.apply_gradients(zip(grads, critic.trainable_variables))
''',
    "ema_target_network": '''
import tensorflow as tf

online = tf.keras.Sequential([tf.keras.layers.Dense(4)])
target = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam(1e-3)
tau = 0.005

@tf.function
def train_step(s, q):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(online(s) - q))
  grads = tape.gradient(loss, online.trainable_variables)
  optimizer.apply_gradients(zip(grads, online.trainable_variables))
  for t, w in zip(target.trainable_variables, online.trainable_variables):
    t.assign(tau * w + (1 - tau) * t)
''',
    "checkpoint_restore_once": _KEEP + '''
saved = np.load("pretrained.npy")
w.assign(saved)
for x, y in dataset:
  train_step(x, y)
''',
    "rewind_once_per_round": _KEEP + '''
initial = [v.numpy() for v in model.trainable_variables]
for round in range(5):
  for x, y in dataset:
    train_step(x, y)
  for v, v0 in zip(model.trainable_variables, initial):
    v.assign(v0)
''',
    "gradient_transformers_clipping": '''
import tensorflow as tf

def clip(grads_and_vars):
  return [(tf.clip_by_norm(g, 1.0), v) for g, v in grads_and_vars]

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer=tf.keras.optimizers.Adam(
    1e-3, gradient_transformers=[clip]), loss="mse")
''',
    "apply_gradients_override_clipping": '''
import tensorflow as tf

class ClippedAdam(tf.keras.optimizers.Adam):
  def apply_gradients(self, grads_and_vars, **kwargs):
    clipped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in grads_and_vars]
    return super().apply_gradients(clipped, **kwargs)
''',
    "custom_gradient_reversal": '''
import tensorflow as tf

@tf.custom_gradient
def reverse(x):
  def grad(dy):
    return -dy
  return tf.identity(x), grad

class Reversal(tf.keras.layers.Layer):
  def call(self, x):
    return reverse(x)

model = tf.keras.Sequential([tf.keras.layers.Dense(10), Reversal()])
model.compile(optimizer="adam", loss="mse")
''',
    "best_weights_restored_at_the_end": '''
import numpy as np
import tensorflow as tf

class KeepBest(tf.keras.callbacks.Callback):
  def on_train_begin(self, logs=None):
    self.best, self.best_weights = np.inf, None

  def on_epoch_end(self, epoch, logs=None):
    if logs["val_loss"] < self.best:
      self.best = logs["val_loss"]
      self.best_weights = self.model.get_weights()

  def on_train_end(self, logs=None):
    self.model.set_weights(self.best_weights)

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="mse")
model.fit(xs, ys, validation_split=0.1, callbacks=[KeepBest()])
''',
    "optimize_loss_slower_body": _TF1.replace(
        "gvs = opt.compute_gradients(loss)\n", "") + '''
train_op = tf.contrib.layers.optimize_loss(
    loss, tf.train.get_or_create_global_step(), 0.01, "Adam",
    gradient_multipliers={w: 0.1, b: 1.0})
''' + _TF1_RUN,
    "slim_multiply_gradients_halved": _tf1('''
slim = tf.contrib.slim
gvs = slim.learning.multiply_gradients(gvs, {w: 0.5})
train_op = opt.apply_gradients(gvs)'''),
    "create_train_op_transform_clipping": _TF1.replace(
        "gvs = opt.compute_gradients(loss)\n", "") + '''
def clip(grads_and_vars):
  return [(tf.clip_by_norm(g, 1.0), v) for g, v in grads_and_vars]

train_op = tf.contrib.training.create_train_op(
    loss, opt, transform_grads_fn=clip)
''' + _TF1_RUN,
    "keras2_get_updates_warmup": '''
from keras import backend as K
from keras.optimizers import SGD

class WarmSGD(SGD):
  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    warm = K.cast(self.iterations > 100, "float32")
    self.updates = []
    for p, g in zip(params, grads):
      self.updates.append(K.update(p, p - self.lr * g * warm))
    return self.updates
''',
    "estimator_hook_warm_start_once": _HOOK_ONCE,
    "tf1_restore_before_training": _TF1_KEEP + '''
saved = np.load("w.npy")
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  w.load(saved, sess)
  for xs, ys in batches():
    sess.run(train_op, {x: xs, y: ys})
''',
})


@pytest.mark.parametrize("source", list(GRADS_MASK.values()),
                         ids=list(GRADS_MASK))
def test_each_api_s_masked_gradients_are_found(source):
  assert [idiom for idiom, _ in scanned.found(source)] == ["grads-mask"]


@pytest.mark.parametrize("source", list(WRITE_BACK.values()),
                         ids=list(WRITE_BACK))
def test_each_api_s_write_back_is_found(source):
  assert [idiom for idiom, _ in scanned.found(source)] == ["write-back"]


@pytest.mark.parametrize("idiom, source", list(OTHER_IDIOM.values()),
                         ids=list(OTHER_IDIOM))
def test_a_saved_copy_kept_in_a_variable_is_a_shadow(idiom, source):
  assert [found for found, _ in scanned.found(source)] == [idiom]


@pytest.mark.parametrize("source", list(SILENT.values()), ids=list(SILENT))
def test_the_same_apis_keeping_nothing_stay_silent(source):
  assert scanned.found(source) == []

