"""The public TF1, TF2 and Keras ways code lets only part of a variable
learn by mixing it with its own `tf.stop_gradient` (a mask blend,
`tf.where`, stopped rows joined by `tf.concat`, `tf.tensor_scatter_nd_update`,
`tf.dynamic_stitch`, a row replaced by constants, the same in a Keras
layer's `call`) and the ways it puts a fixed mask back on the weights
after every step (a Keras `Constraint`, `assign` after `apply_gradients`,
a callback, `scatter_update` beside or after the train op, `set_weights`,
a lottery ticket's fixed masks): one minimal model per API, catalogued by
API rather than by a codebase, each found as `stop-gradient-mix` or
`weight-remask`. Beside them, the look-alikes that keep no part of a
variable from training stay silent: straight-through estimators, VQ-VAE
losses, target networks, Polyak averages, structural masks (MADE, causal
kernels, `band_part`), attention and loss masks, dropout, magnitude
pruning that recomputes its mask, a re-mask for evaluation or a rewind
done once, `MaxNorm`/`NonNeg`, weight normalisation, a padding row
appended to a table that trains whole."""

import pytest

import scanned

MIX = "stop-gradient-mix"
REMASK = "weight-remask"

# A TF2 model of one kernel `w` and a fixed 0/1 `mask` of its shape.
_TF2 = '''
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.random.normal([784, 10]), name="w")
mask = tf.constant(np.load("mask.npy"), tf.float32)
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
{forward}
    logits = tf.matmul(x, w_eff)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
  grads = tape.gradient(loss, [w])
  optimizer.apply_gradients(zip(grads, [w]))
  return loss

for x, y in dataset:
  train_step(x, y)
'''

# The same in a TF1 graph, trained by `minimize` in a Session.
_TF1 = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int32, [None])
w = tf.get_variable("w", [784, 10])
mask = tf.constant(np.load("mask.npy"), tf.float32)
{forward}
logits = tf.matmul(x, w_eff)
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(train_op, {{x: xs, y: ys}})
'''

# A TF2 embedding table of which the first `k` rows are pretrained.
_TABLE2 = '''
import tensorflow as tf

k = 30000
emb = tf.Variable(tf.random.normal([50000, 128]), name="emb")
out = tf.Variable(tf.random.normal([128, 2]), name="out")
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(ids, y):
  with tf.GradientTape() as tape:
{forward}
    logits = tf.matmul(tf.reduce_mean(vectors, 1), out)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
  variables = [emb, out]
  grads = tape.gradient(loss, variables)
  optimizer.apply_gradients(zip(grads, variables))

for ids, y in dataset:
  train_step(ids, y)
'''

# The same table in a TF1 graph.
_TABLE1 = '''
import tensorflow as tf

k = 30000
ids = tf.placeholder(tf.int32, [None, 20])
y = tf.placeholder(tf.int32, [None])
emb = tf.get_variable("emb", [50000, 128])
{forward}
logits = tf.layers.dense(tf.reduce_mean(vectors, 1), 2)
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
'''


def _indented(lines, by):
  return "".join(by + line + "\n" for line in lines.strip("\n").split("\n"))


def _tf2(forward):
  return _TF2.format(forward=_indented(forward, "    "))


def _tf1(forward):
  return _TF1.format(forward=_indented(forward, ""))


def _table2(forward):
  return _TABLE2.format(forward=_indented(forward, "    "))


def _table1(forward):
  return _TABLE1.format(forward=_indented(forward, ""))


_BLEND = "w_eff = mask * w + (1 - mask) * tf.stop_gradient(w)"
_WHERE = "w_eff = tf.where(mask > 0, w, tf.stop_gradient(w))"
_CONCAT = ("table = tf.concat([tf.stop_gradient(emb[:k]), emb[k:]], 0)\n"
           "vectors = tf.nn.embedding_lookup(table, ids)")
_CONCAT_GATHER = ("table = tf.concat([tf.stop_gradient(emb[:k]), emb[k:]],"
                  " axis=0)\n"
                  "vectors = tf.gather(table, ids)")
_SCATTER = '''\
rows = tf.constant([[0], [1], [2]])
table = tf.tensor_scatter_nd_update(
    emb, rows, tf.stop_gradient(tf.gather_nd(emb, rows)))
vectors = tf.nn.embedding_lookup(table, ids)'''
_STITCH = '''\
frozen = tf.range(k)
trained = tf.range(k, 50000)
table = tf.dynamic_stitch(
    [frozen, trained],
    [tf.stop_gradient(tf.gather(emb, frozen)), tf.gather(emb, trained)])
vectors = tf.nn.embedding_lookup(table, ids)'''
_ZERO_PAD = '''\
table = tf.concat((tf.zeros(shape=[1, 128]), emb[1:, :]), 0)
vectors = tf.nn.embedding_lookup(table, ids)'''

# A Keras layer whose kernel only partly learns.
_KERAS_DENSE = '''
import numpy as np
import tensorflow as tf

class PartlyFrozenDense(tf.keras.layers.Layer):
  def __init__(self, units, mask, **kwargs):
    super().__init__(**kwargs)
    self.units = units
    self.mask = tf.constant(mask, tf.float32)

  def build(self, input_shape):
    self.kernel = self.add_weight(
        name="kernel", shape=(input_shape[-1], self.units))

  def call(self, inputs):
{forward}
    return tf.matmul(inputs, kernel)

model = tf.keras.Sequential([
    PartlyFrozenDense(10, np.load("mask.npy"))])
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(x_train, y_train, epochs=3)
'''

# A Keras `Embedding` whose first rows are pretrained and kept.
_KERAS_EMBEDDING = '''
import tensorflow as tf

class PartlyFrozenEmbedding(tf.keras.layers.Embedding):
  def __init__(self, n_frozen, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.n_frozen = n_frozen

  def call(self, inputs):
{forward}
    return tf.nn.embedding_lookup(table, inputs)

model = tf.keras.Sequential([
    PartlyFrozenEmbedding(30000, 50000, 128),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(2)])
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(x_train, y_train, epochs=3)
'''


def _dense(forward):
  return _KERAS_DENSE.format(forward=_indented(forward, "    "))


def _embedding(forward):
  return _KERAS_EMBEDDING.format(forward=_indented(forward, "    "))


MIXES = {
    "blend_tf2": _tf2(_BLEND),
    "blend_tf1": _tf1(_BLEND),
    "blend_numpy_random_mask_drawn_once": _tf2(_BLEND).replace(
        'np.load("mask.npy")', "np.random.rand(784, 10) < 0.1"),
    "blend_inverted_tf2": _tf2(
        "w_eff = tf.stop_gradient(w) * (1 - mask) + w * mask"),
    "where_tf2": _tf2(_WHERE),
    "where_tf1": _tf1("w_eff = tf.where(tf.cast(mask, tf.bool), w, "
                      "tf.stop_gradient(w))"),
    "concat_lookup_tf2": _table2(_CONCAT),
    "concat_lookup_tf1": _table1(_CONCAT),
    "concat_gather_tf2": _table2(_CONCAT_GATHER),
    "tensor_scatter_nd_update_tf2": _table2(_SCATTER),
    "tensor_scatter_nd_update_tf1": _table1(_SCATTER),
    "dynamic_stitch_tf2": _table2(_STITCH),
    "dynamic_stitch_tf1": _table1(_STITCH),
    "zero_pad_row_tf2": _table2(_ZERO_PAD),
    "zero_pad_row_tf1": _table1(_ZERO_PAD),
    "keras_layer_blend": _dense(
        "kernel = (self.mask * self.kernel\n"
        "          + (1 - self.mask) * tf.stop_gradient(self.kernel))"),
    "keras_layer_where": _dense(
        "kernel = tf.where(self.mask > 0, self.kernel,\n"
        "                  tf.stop_gradient(self.kernel))"),
    "keras_embedding_concat": _embedding(
        "n = self.n_frozen\n"
        "table = tf.concat([tf.stop_gradient(self.embeddings[:n]),\n"
        "                   self.embeddings[n:]], 0)"),
    "keras_embedding_zero_pad": _embedding(
        "table = tf.concat([tf.zeros([1, self.output_dim]),\n"
        "                   self.embeddings[1:]], 0)"),
}

# A Keras model whose kernels should keep a fixed sparsity pattern.
_KERAS_MODEL = '''
import numpy as np
import tensorflow as tf

mask = np.load("mask.npy")
model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", name="hidden"),
    tf.keras.layers.Dense(10, name="out")])
model.build((None, 784))
'''

_FIT = '''
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(x_train, y_train, epochs=3{callbacks})
'''

_CONSTRAINT_CLASS = '''
import numpy as np
import tensorflow as tf

class FixedMask(tf.keras.constraints.Constraint):
  def __init__(self, mask):
    self.mask = tf.constant(mask, tf.float32)

  def __call__(self, w):
    return w * self.mask

  def get_config(self):
    return {"mask": self.mask.numpy().tolist()}

'''

_TF2_LOOP = '''
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
model.build((None, 784))
mask = tf.constant(np.load("mask.npy"), tf.float32)
kernel = model.layers[0].kernel
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
  grads = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
{after}
  return loss

for epoch in range(10):
  for x, y in dataset:
    train_step(x, y)
'''

_TF2_TABLE_LOOP = '''
import tensorflow as tf

emb = tf.Variable(tf.random.normal([50000, 128]), name="emb")
out = tf.Variable(tf.random.normal([128, 2]), name="out")
optimizer = tf.keras.optimizers.Adam(1e-3)

for ids, y in dataset:
  with tf.GradientTape() as tape:
    vectors = tf.nn.embedding_lookup(emb, ids)
    logits = tf.matmul(tf.reduce_mean(vectors, 1), out)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
  grads = tape.gradient(loss, [emb, out])
  optimizer.apply_gradients(zip(grads, [emb, out]))
{after}
'''

_TF1_TABLE = '''
import tensorflow as tf

ids = tf.placeholder(tf.int32, [None, 20])
y = tf.placeholder(tf.int32, [None])
emb = tf.get_variable("emb", [50000, 128])
vectors = tf.nn.embedding_lookup(emb, ids)
logits = tf.layers.dense(tf.reduce_mean(vectors, 1), 2)
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
{after}
'''


def _loop(after):
  return _TF2_LOOP.format(after=_indented(after, "  "))


def _table_loop(after):
  return _TF2_TABLE_LOOP.format(after=_indented(after, "  "))


def _tf1_table(after):
  return _TF1_TABLE.format(after=after.strip("\n"))


_CALLBACK = '''
class ReMask(tf.keras.callbacks.Callback):
  def __init__(self, masks):
    super().__init__()
    self.masks = masks

  def on_train_batch_end(self, batch, logs=None):
{body}
'''


def _callback(body):
  return (_KERAS_MODEL + _CALLBACK.format(body=_indented(body, "    "))
          + _FIT.format(callbacks=", callbacks=[ReMask({'hidden': mask})]"))


REMASKS = {
    "constraint_class_kernel": _CONSTRAINT_CLASS + '''
mask = np.load("mask.npy")
model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, kernel_constraint=FixedMask(mask)),
    tf.keras.layers.Dense(10)])
''' + _FIT.format(callbacks=""),
    "constraint_class_embeddings_padding_row": _CONSTRAINT_CLASS + '''
row_mask = np.ones((50000, 1), np.float32)
row_mask[0] = 0.0
model = tf.keras.Sequential([
    tf.keras.layers.Embedding(50000, 128,
                              embeddings_constraint=FixedMask(row_mask)),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(2)])
''' + _FIT.format(callbacks=""),
    "constraint_lambda": '''
import numpy as np
import tensorflow as tf

mask = tf.constant(np.load("mask.npy"), tf.float32)
model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, kernel_constraint=lambda w: w * mask),
    tf.keras.layers.Dense(10)])
''' + _FIT.format(callbacks=""),
    "assign_after_apply_gradients": _loop("kernel.assign(kernel * mask)"),
    "assign_where_after_apply_gradients": _loop(
        "kernel.assign(tf.where(mask > 0, kernel, tf.zeros_like(kernel)))"),
    "callback_assign": _callback(
        "for layer in self.model.layers:\n"
        "  if layer.name in self.masks:\n"
        "    layer.kernel.assign(layer.kernel * self.masks[layer.name])"),
    "callback_set_weights": _callback(
        "layer = self.model.get_layer('hidden')\n"
        "kernel, bias = layer.get_weights()\n"
        "layer.set_weights([kernel * self.masks['hidden'], bias])"),
    "padding_row_assign_each_step": _table_loop(
        "emb[0].assign(tf.zeros(128))"),
    "padding_row_scatter_each_step": _table_loop(
        "emb.scatter_update(tf.IndexedSlices(tf.zeros([1, 128]), [0]))"),
    "scatter_update_fetched_beside": _tf1_table('''
zero_pad_op = tf.compat.v1.scatter_update(emb, [0], tf.zeros([1, 128]))
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for feed in batches():
    sess.run([train_op, zero_pad_op], feed)
'''),
    "scatter_update_after_train_op": _tf1_table('''
with tf.control_dependencies([train_op]):
  step = tf.scatter_update(emb, [0], tf.zeros([1, 128]))
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for feed in batches():
    sess.run(step, feed)
'''),
    "tf1_assign_masks_after_train_op": '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int32, [None])
w = tf.get_variable("w", [784, 10])
mask = tf.constant(np.load("mask.npy"), tf.float32)
logits = tf.matmul(x, w)
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
with tf.control_dependencies([train_op]):
  step = tf.assign(w, w * mask)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run(step, {x: xs, y: ys})
''',
    "tf1_assign_fetched_beside": '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int32, [None])
w = tf.get_variable("w", [784, 10])
mask = tf.constant(np.load("mask.npy"), tf.float32)
logits = tf.matmul(x, w)
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
remask_op = tf.compat.v1.assign(w, w * mask)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    sess.run([train_op, remask_op], {x: xs, y: ys})
''',
    "pruning_wrapper_fixed_mask": '''
import numpy as np
import tensorflow as tf

class FixedPruneWrapper(tf.keras.layers.Wrapper):
  def __init__(self, layer, mask, **kwargs):
    super().__init__(layer, **kwargs)
    self.mask = tf.constant(mask, tf.float32)

  def call(self, inputs, training=None):
    if training:
      self.layer.kernel.assign(self.layer.kernel * self.mask)
    return self.layer(inputs)

model = tf.keras.Sequential([
    FixedPruneWrapper(tf.keras.layers.Dense(64), np.load("mask.npy")),
    tf.keras.layers.Dense(10)])
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(x_train, y_train, epochs=3)
''',
    "lottery_ticket_fixed_masks": '''
import numpy as np
import tensorflow as tf

model = tf.keras.models.load_model("round1.keras")
masks = {}
for v in model.trainable_variables:
  if "kernel" in v.name:
    cut = np.percentile(np.abs(v.numpy()), 80)
    masks[v.name] = tf.constant(np.abs(v.numpy()) > cut, tf.float32)
model.load_weights("init.weights.h5")
optimizer = tf.keras.optimizers.SGD(0.1)

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
        y, model(x), from_logits=True))
  grads = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
  for v in model.trainable_variables:
    if v.name in masks:
      v.assign(v * masks[v.name])

for x, y in dataset:
  train_step(x, y)
''',
}

# Further public routes to the same two idioms: Keras 3's `Constraint`, a
# `LambdaCallback`, `K.batch_set_value` of a pair written out, TF1's
# `scatter_nd_update` after the train op, a `train_step` override, a mix
# of a lookup's output by the ids, a TF1 layer function, a scatter of
# gathered rows.
_MORE = {
    "keras3_constraint": _CONSTRAINT_CLASS.replace(
     "import tensorflow as tf", "import tensorflow as tf\nimport keras"
 ).replace("tf.keras.constraints", "keras.constraints") + '''
mask = np.load("mask.npy")
model = keras.Sequential([
    keras.layers.Dense(64, kernel_constraint=FixedMask(mask)),
    keras.layers.Dense(10)])
''' + _FIT.format(callbacks=""),
    "lambda_callback": _KERAS_MODEL + '''
layer = model.get_layer("hidden")
remask = tf.keras.callbacks.LambdaCallback(
    on_batch_end=lambda batch, logs: layer.kernel.assign(layer.kernel * mask))
''' + _FIT.format(callbacks=", callbacks=[remask]"),
    "batch_set_value_callback": _KERAS_MODEL + '''
from tensorflow.keras import backend as K
class ReMask(tf.keras.callbacks.Callback):
  def on_batch_end(self, batch, logs=None):
    layer = self.model.get_layer("hidden")
    K.batch_set_value([(layer.kernel, K.get_value(layer.kernel) * mask)])
''' + _FIT.format(callbacks=", callbacks=[ReMask()]"),
    "tf1_scatter_nd_update_after": _tf1_table('''
with tf.control_dependencies([train_op]):
  step = tf.compat.v1.scatter_nd_update(emb, [[0]], tf.zeros([1, 128]))
with tf.Session() as sess:
  for feed in batches():
    sess.run(step, feed)
'''),
    "lookup_output_where_ids": _table2(
     "looked = tf.nn.embedding_lookup(emb, ids)\n"
     "vectors = tf.where((ids < k)[..., None], tf.stop_gradient(looked),"
     " looked)"),
    "train_step_override_remask": '''
import numpy as np
import tensorflow as tf

class Masked(tf.keras.Model):
  def __init__(self, mask):
    super().__init__()
    self.dense = tf.keras.layers.Dense(64)
    self.out = tf.keras.layers.Dense(10)
    self.mask = tf.constant(mask, tf.float32)
  def call(self, x):
    return self.out(self.dense(x))
  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      loss = self.compiled_loss(y, self(x, training=True))
    grads = tape.gradient(loss, self.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    self.dense.kernel.assign(self.dense.kernel * self.mask)
    return {"loss": loss}

model = Masked(np.load("mask.npy"))
model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(True))
model.fit(x_train, y_train, epochs=3)
''',
    "tf1_blend_variable_scope_layer": '''
import numpy as np
import tensorflow as tf

def masked_dense(x, units, mask):
  w = tf.get_variable("kernel", [x.shape[-1], units])
  w = mask * w + (1. - mask) * tf.stop_gradient(w)
  return tf.matmul(x, w)

x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int32, [None])
logits = masked_dense(x, 10, np.load("mask.npy").astype(np.float32))
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
''',
    "gather_scatter_nd_rows": _table2(
     "keep = tf.stop_gradient(tf.gather(emb, tf.range(k)))\n"
     "table = tf.tensor_scatter_nd_update(emb, tf.range(k)[:, None], keep)\n"
     "vectors = tf.nn.embedding_lookup(table, ids)"),
}
_KERAS3 = ("import tensorflow as tf", "import tensorflow as tf\nimport keras")

# Sums spelled as calls, other joins and partitions, other callbacks, a
# constraint given to `add_weight`, a `SessionRunHook`, a row reset by
# writing the table whole.
_MORE.update({
    "add_n": _tf2(
        "w_eff = tf.add_n([mask * w, (1 - mask) * tf.stop_gradient(w)])"),
    "math_add_of_math_multiply": _tf2(
        "w_eff = tf.math.add(tf.math.multiply(mask, w),\n"
        "                    tf.math.multiply(1 - mask, tf.stop_gradient(w)))"),
    "stop_gradient_of_the_product": _tf2(
        "w_eff = mask * w + tf.stop_gradient((1 - mask) * w)"),
    "keras3_ops_where": _tf2(
        "w_eff = keras.ops.where(mask > 0, w, keras.ops.stop_gradient(w))"
    ).replace(*_KERAS3),
    "concat_columns": _tf2(
        "w_eff = tf.concat([tf.stop_gradient(w[:, :5]), w[:, 5:]], axis=1)"),
    "live_rows_scattered_into_stopped_table": _table2(
        "rows = tf.constant([[0], [1]])\n"
        "table = tf.tensor_scatter_nd_update(\n"
        "    tf.stop_gradient(emb), rows, tf.gather_nd(emb, rows))\n"
        "vectors = tf.nn.embedding_lookup(table, ids)"),
    "dynamic_partition_then_stitch": _table2('''\
part = tf.cast(tf.range(50000) >= k, tf.int32)
frozen, trained = tf.dynamic_partition(emb, part, 2)
idx = tf.dynamic_partition(tf.range(50000), part, 2)
table = tf.dynamic_stitch(idx, [tf.stop_gradient(frozen), trained])
vectors = tf.nn.embedding_lookup(table, ids)'''),
    "callback_on_epoch_end": _KERAS_MODEL + '''
class ReMask(tf.keras.callbacks.Callback):
  def on_epoch_end(self, epoch, logs=None):
    layer = self.model.get_layer("hidden")
    layer.kernel.assign(layer.kernel * mask)
''' + _FIT.format(callbacks=", callbacks=[ReMask()]"),
    "callback_on_train_batch_begin": _KERAS_MODEL + '''
class ReMask(tf.keras.callbacks.Callback):
  def on_train_batch_begin(self, batch, logs=None):
    layer = self.model.get_layer("hidden")
    layer.kernel.assign(layer.kernel * mask)
''' + _FIT.format(callbacks=", callbacks=[ReMask()]"),
    "add_weight_constraint": _CONSTRAINT_CLASS + '''
class Sparse(tf.keras.layers.Layer):
  def __init__(self, units, mask):
    super().__init__()
    self.units, self.mask = units, mask

  def build(self, input_shape):
    self.kernel = self.add_weight("kernel", (input_shape[-1], self.units),
                                  constraint=FixedMask(self.mask))

  def call(self, x):
    return tf.matmul(x, self.kernel)

model = tf.keras.Sequential([
    Sparse(64, np.load("mask.npy")), tf.keras.layers.Dense(10)])
''' + _FIT.format(callbacks=""),
    "session_run_hook": '''
import numpy as np
import tensorflow as tf

class MaskHook(tf.estimator.SessionRunHook):
  def __init__(self, masks):
    self.masks = masks

  def begin(self):
    self.ops = [tf.assign(v, v * self.masks[v.op.name])
                for v in tf.trainable_variables() if v.op.name in self.masks]

  def after_run(self, run_context, run_values):
    run_context.session.run(self.ops)

masks = {"dense/kernel": np.load("mask.npy")}
estimator.train(input_fn, hooks=[MaskHook(masks)], steps=1000)
''',
    "set_weights_of_the_whole_model": _KERAS_MODEL + '''
masks = [np.load("m%d.npy" % i) for i in range(4)]

class ReMask(tf.keras.callbacks.Callback):
  def on_train_batch_end(self, batch, logs=None):
    self.model.set_weights(
        [w * m for w, m in zip(self.model.get_weights(), masks)])
''' + _FIT.format(callbacks=", callbacks=[ReMask()]"),
    "keras3_ops_multiply_assign": _loop(
        "kernel.assign(keras.ops.multiply(kernel, mask))"
    ).replace(*_KERAS3),
    "tf1_zero_pad_run_after_train_op": _tf1_table('''
zero_pad_op = tf.scatter_update(emb, [0], tf.zeros([1, 128]))
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for feed in batches():
    sess.run(train_op, feed)
    sess.run(zero_pad_op)
'''),
    "padding_row_reset_by_assign_of_a_join": _table_loop(
        "emb.assign(tf.concat([tf.zeros([1, 128]), emb[1:]], 0))"),
    "callback_padding_row_reset_by_a_join": _KERAS_MODEL + '''
class ZeroPad(tf.keras.callbacks.Callback):
  def on_train_batch_end(self, batch, logs=None):
    emb = self.model.layers[0].embeddings
    emb.assign(tf.concat([tf.zeros([1, 128]), emb[1:]], axis=0))
''' + _FIT.format(callbacks=", callbacks=[ZeroPad()]"),
})
for _name in ("lookup_output_where_ids", "tf1_blend_variable_scope_layer",
              "gather_scatter_nd_rows", "add_n", "math_add_of_math_multiply",
              "stop_gradient_of_the_product", "keras3_ops_where",
              "concat_columns", "live_rows_scattered_into_stopped_table",
              "dynamic_partition_then_stitch"):
  MIXES[_name] = _MORE.pop(_name)
REMASKS.update(_MORE)

# The `constraint=` of a variable itself (TF1's `get_variable`, TF2's
# `tf.Variable`) and of a TF1 `tf.layers` layer: the optimizer applies it
# after each update.
_TF1_CONSTRAINED = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int32, [None])
mask = tf.constant(np.load("mask.npy"), tf.float32)
{make}
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
'''
REMASKS.update({
    "get_variable_constraint": _TF1_CONSTRAINED.format(make=(
        'w = tf.get_variable("w", [784, 10], constraint=lambda v: v * mask)\n'
        "logits = tf.matmul(x, w)")),
    "get_variable_constraint_class": _CONSTRAINT_CLASS + (
        _TF1_CONSTRAINED.format(make=(
            'w = tf.get_variable("w", [784, 10],\n'
            '                    constraint=FixedMask(np.load("mask.npy")))\n'
            "logits = tf.matmul(x, w)"))),
    "tf1_layers_dense_kernel_constraint": _TF1_CONSTRAINED.format(make=(
        "logits = tf.layers.dense(\n"
        "    x, 10, kernel_constraint=lambda v: v * mask)")),
    "tf_variable_constraint": _TF2.replace(
        'w = tf.Variable(tf.random.normal([784, 10]), name="w")\n'
        'mask = tf.constant(np.load("mask.npy"), tf.float32)',
        'mask = tf.constant(np.load("mask.npy"), tf.float32)\n'
        'w = tf.Variable(tf.random.normal([784, 10]), name="w",\n'
        "                constraint=lambda v: v * mask)").format(
            forward="    w_eff = w\n"),
})

NEGATIVE = {
    "straight_through_estimator": _tf2(
        "q = tf.round(w * 4.0) / 4.0\n"
        "w_eff = w + tf.stop_gradient(q - w)"),
    "straight_through_sign_tf1": _tf1(
        "w_eff = w + tf.stop_gradient(tf.sign(w) - w)"),
    "vq_vae_commitment": '''
import tensorflow as tf

codebook = tf.Variable(tf.random.normal([512, 64]), name="codebook")
encoder = tf.keras.layers.Dense(64)
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x):
  with tf.GradientTape() as tape:
    z_e = encoder(x)
    d = tf.reduce_sum((z_e[:, None] - codebook[None]) ** 2, -1)
    z_q = tf.gather(codebook, tf.argmin(d, -1))
    commitment = tf.reduce_mean((z_e - tf.stop_gradient(z_q)) ** 2)
    codebook_loss = tf.reduce_mean((tf.stop_gradient(z_e) - z_q) ** 2)
    z_st = z_e + tf.stop_gradient(z_q - z_e)
    loss = tf.reduce_mean((z_st - x[:, :64]) ** 2) + codebook_loss
    loss += 0.25 * commitment
  variables = encoder.trainable_variables + [codebook]
  grads = tape.gradient(loss, variables)
  optimizer.apply_gradients(zip(grads, variables))
''',
    "target_network_and_polyak": '''
import tensorflow as tf

q_net = tf.keras.Sequential([tf.keras.layers.Dense(4)])
target = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(s, a, r, s2):
  y = r + 0.99 * tf.stop_gradient(tf.reduce_max(target(s2), -1))
  with tf.GradientTape() as tape:
    q = tf.reduce_sum(q_net(s) * tf.one_hot(a, 4), -1)
    loss = tf.reduce_mean((q - y) ** 2)
  grads = tape.gradient(loss, q_net.trainable_variables)
  optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
  for t, w in zip(target.variables, q_net.variables):
    t.assign(0.995 * t + 0.005 * w)
''',
    "made_degree_mask": '''
import numpy as np
import tensorflow as tf

class MaskedDense(tf.keras.layers.Dense):
  def __init__(self, units, in_degrees, out_degrees, **kwargs):
    super().__init__(units, **kwargs)
    self.mask = tf.constant(
        out_degrees[None, :] >= in_degrees[:, None], tf.float32)

  def call(self, inputs):
    return tf.matmul(inputs, self.kernel * self.mask) + self.bias

model = tf.keras.Sequential([
    MaskedDense(64, np.arange(784) % 10, np.arange(64) % 10)])
model.compile("adam", "mse")
model.fit(x_train, x_train, epochs=3)
''',
    "pixelcnn_causal_kernel": '''
import numpy as np
import tensorflow as tf

class MaskedConv2D(tf.keras.layers.Conv2D):
  def build(self, input_shape):
    super().build(input_shape)
    kh, kw = self.kernel_size
    mask = np.ones(self.kernel.shape, np.float32)
    mask[kh // 2, kw // 2:] = 0.0
    mask[kh // 2 + 1:] = 0.0
    self.mask = tf.constant(mask)

  def call(self, inputs):
    return tf.nn.conv2d(inputs, self.kernel * self.mask, 1, "SAME")

model = tf.keras.Sequential([MaskedConv2D(32, 7)])
model.compile("adam", "mse")
model.fit(images, images, epochs=3)
''',
    "band_part_attention_and_loss_masks": '''
import tensorflow as tf

proj = tf.keras.layers.Dense(64)
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y, lengths):
  n = tf.shape(x)[1]
  causal = tf.linalg.band_part(tf.ones((n, n)), -1, 0)
  with tf.GradientTape() as tape:
    h = proj(x)
    scores = tf.matmul(h, h, transpose_b=True)
    scores = scores * causal - 1e9 * (1 - causal)
    h = tf.matmul(tf.nn.softmax(scores), h)
    h = tf.nn.dropout(h, 0.1)
    weights = tf.sequence_mask(lengths, n, tf.float32)
    loss = tf.reduce_sum(((h[..., 0] - y) ** 2) * weights)
  grads = tape.gradient(loss, proj.trainable_variables)
  optimizer.apply_gradients(zip(grads, proj.trainable_variables))
''',
    "magnitude_pruning_recomputed": _loop(
        "k = tf.sort(tf.reshape(tf.abs(kernel), [-1]))[40000]\n"
        "kernel.assign(kernel * tf.cast(tf.abs(kernel) >= k, tf.float32))"),
    "remask_for_evaluation_once": _KERAS_MODEL + _FIT.format(callbacks="") + '''
layer = model.get_layer("hidden")
layer.kernel.assign(layer.kernel * mask)
model.evaluate(x_test, y_test)
''',
    "rewind_once": _KERAS_MODEL + '''
initial = model.get_weights()
''' + _FIT.format(callbacks="") + '''
model.set_weights(initial)
''',
    "max_norm_non_neg_constraints": '''
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(
        64, kernel_constraint=tf.keras.constraints.MaxNorm(3.0),
        bias_constraint=tf.keras.constraints.NonNeg()),
    tf.keras.layers.Embedding(
        1000, 16, embeddings_constraint=tf.keras.constraints.UnitNorm()),
    tf.keras.layers.Dense(10)])
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(x_train, y_train, epochs=3)
''',
    "weight_normalisation": _dense(
        "kernel = self.kernel / tf.norm(self.kernel, axis=0, keepdims=True)"),
    "padding_row_appended_to_whole_table": _table2(
        "table = tf.concat([emb, tf.zeros([1, 128])], 0)\n"
        "vectors = tf.nn.embedding_lookup(table, ids)"),
    "padding_row_appended_tf1": _table1(
        "table = tf.concat([emb, tf.zeros([1, 128])], axis=0)\n"
        "vectors = tf.nn.embedding_lookup(table, ids)"),
    "clipping_constraint_and_mask_zero": '''
import tensorflow as tf

class Clip(tf.keras.constraints.Constraint):
  def __call__(self, w):
    return tf.clip_by_value(w, -0.01, 0.01)

model = tf.keras.Sequential([
    tf.keras.layers.Embedding(1000, 16, mask_zero=True),
    tf.keras.layers.LSTM(32),
    tf.keras.layers.Dense(1, kernel_constraint=Clip())])
model.compile("adam", "mse")
model.fit(x_train, y_train, epochs=3)
''',
    "numpy_random_mask_drawn_each_step": '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int32, [None])
drop = tf.placeholder(tf.float32, [784, 10])
w = tf.get_variable("w", [784, 10])
w_eff = drop * w + (1 - drop) * tf.stop_gradient(w)
logits = tf.matmul(x, w_eff)
loss = tf.reduce_mean(
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  for xs, ys in batches():
    m = np.random.rand(784, 10) < 0.5
    sess.run(train_op, {x: xs, y: ys, drop: m})
''',
    "gradient_reversal": _tf2("w_eff = w\nx = tf.stop_gradient(x * 2.0) - x"),
    "wgan_weight_clipping_each_step": _loop(
        "for v in model.trainable_variables:\n"
        "  v.assign(tf.clip_by_value(v, -0.01, 0.01))"),
    "padding_row_zeroed_once_before_training": '''
import tensorflow as tf

emb = tf.Variable(tf.random.normal([50000, 128]))
emb.assign(tf.concat([tf.zeros([1, 128]), emb[1:]], 0))
emb[0].assign(tf.zeros(128))
optimizer = tf.keras.optimizers.Adam()
for ids, y in dataset:
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids))
  g = tape.gradient(loss, [emb])
  optimizer.apply_gradients(zip(g, [emb]))
''',
    "spectral_norm_wrapper": '''
import tensorflow as tf

class SpectralNorm(tf.keras.layers.Wrapper):
  def build(self, input_shape):
    super().build(input_shape)
    self.w = self.layer.kernel
    self.u = self.add_weight("u", (1, self.w.shape[-1]), trainable=False)

  def call(self, inputs, training=None):
    w = tf.reshape(self.w, [-1, self.w.shape[-1]])
    v = tf.math.l2_normalize(tf.matmul(self.u, w, transpose_b=True))
    u = tf.math.l2_normalize(tf.matmul(v, w))
    sigma = tf.matmul(tf.matmul(tf.stop_gradient(v), w),
                      tf.stop_gradient(u), transpose_b=True)
    if training:
      self.u.assign(u)
    self.layer.kernel.assign(self.w / sigma)
    return self.layer(inputs)

model = tf.keras.Sequential([SpectralNorm(tf.keras.layers.Dense(64))])
model.compile("adam", "mse")
model.fit(x, y)
''',
    "distillation_and_simsiam": '''
import tensorflow as tf

student = tf.keras.Sequential([tf.keras.layers.Dense(10)])
teacher = tf.keras.models.load_model("teacher.keras")
opt = tf.keras.optimizers.Adam()

@tf.function
def step(x1, x2):
  with tf.GradientTape() as tape:
    t = tf.stop_gradient(teacher(x1))
    p1, p2 = student(x1), student(x2)
    loss = tf.keras.losses.kl_divergence(tf.nn.softmax(t), tf.nn.softmax(p1))
    loss += -tf.reduce_mean(
        tf.keras.losses.cosine_similarity(p1, tf.stop_gradient(p2)))
  g = tape.gradient(loss, student.trainable_variables)
  opt.apply_gradients(zip(g, student.trainable_variables))

for a, b in data:
  step(a, b)
''',
    "straight_through_by_tf_add": _tf2(
        "w_eff = tf.add(w, tf.stop_gradient(tf.round(w) - w))"),
    "vq_losses_by_tf_add_n": '''
import tensorflow as tf

codebook = tf.Variable(tf.random.normal([512, 64]), name="codebook")
encoder = tf.keras.layers.Dense(64)
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x):
  with tf.GradientTape() as tape:
    z_e = encoder(x)
    d = tf.reduce_sum((z_e[:, None] - codebook[None]) ** 2, -1)
    z_q = tf.gather(codebook, tf.argmin(d, -1))
    loss = tf.add_n([tf.reduce_mean((tf.stop_gradient(z_e) - z_q) ** 2),
                     0.25 * tf.reduce_mean((z_e - tf.stop_gradient(z_q)) ** 2)])
  variables = encoder.trainable_variables + [codebook]
  grads = tape.gradient(loss, variables)
  optimizer.apply_gradients(zip(grads, variables))

for x in dataset:
  train_step(x)
''',
    "shift_buffer_of_zeros_each_step": _table_loop(
        "history.assign(tf.concat([tf.zeros([1, 128]), history[:-1]], 0))"
    ).replace("optimizer = ", "history = tf.Variable(tf.zeros([16, 128]), "
              "trainable=False)\noptimizer = "),
    "numpy_random_mask_drawn_once_on_inputs": _tf2(
        "w_eff = w\n"
        "x = keep[None, :] * x + (1 - keep[None, :]) * tf.stop_gradient(x)"
    ).replace("optimizer = ", "keep = np.random.rand(784) < 0.9\n"
              "optimizer = "),
    "stop_gradient_of_an_input": _tf2(
        "w_eff = w\n"
        "x = mask[:, 0] * x + (1 - mask[:, 0]) * tf.stop_gradient(x)"),
}


@pytest.mark.parametrize("source", list(MIXES.values()), ids=list(MIXES))
def test_each_api_s_mix_is_found(source):
  assert [idiom for idiom, _ in scanned.found(source)] == [MIX]


@pytest.mark.parametrize("source", list(REMASKS.values()), ids=list(REMASKS))
def test_each_api_s_remask_is_found(source):
  assert [idiom for idiom, _ in scanned.found(source)] == [REMASK]


@pytest.mark.parametrize("source", list(NEGATIVE.values()), ids=list(NEGATIVE))
def test_the_look_alikes_stay_silent(source):
  assert scanned.found(source) == []


@pytest.mark.parametrize("name, says", [
    ("tensor_scatter_nd_update_tf2",
     "the indices `tensor_scatter_nd_update` is given"),
    ("dynamic_stitch_tf2", "the indices `dynamic_stitch` is given"),
    ("add_n", "the masks `add_n` sums")])
def test_a_mix_by_a_scatter_stitch_or_sum_is_ported_by_hand(name, says):
  finding, diff = scanned.finding_and_diff(MIXES[name], MIX)
  assert says in finding.by_hand and not diff
