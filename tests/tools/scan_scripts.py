"""Small training scripts with hand-made freezing, in the styles of real
TF1 and TF2 code, for the scan's port tests. Each prints `held: True` or
`held: False`: whether its frozen element is bit-for-bit what it must be.
"""

TF1_GRADS_MASK_FTRL = '''\
"""TF1: freeze x[0] by masking its gradient (FTRL with l1)."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

x = tf.Variable([1.0, 2.0, 3.0], name="x")
loss = tf.reduce_sum(tf.square(x - 5.0))
optimizer = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.5)
grads_and_vars = optimizer.compute_gradients(loss)
mask = tf.constant([0.0, 1.0, 1.0])  # 0 where frozen.
train_op = optimizer.apply_gradients(
    [(grad * mask, var) for grad, var in grads_and_vars])  # masked

with tf.Session() as session:
  session.run(tf.global_variables_initializer())
  for _ in range(5):
    session.run(train_op)
  value = session.run(x)
print("held:", np.float32(value[0]).view(np.uint32) ==
      np.float32(1.0).view(np.uint32))
'''

TF2_GRADS_MASK_ADAMW = '''\
"""TF2: a tf.function step, gradients masked before Keras AdamW."""
import numpy as np
import tensorflow as tf

x = tf.Variable([1.0, 2.0, 3.0])
optimizer = tf.keras.optimizers.AdamW(0.1, weight_decay=0.5)
mask = np.array([0.0, 1.0, 1.0], np.float32)


@tf.function
def train_step():
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.square(x - 5.0))
  grads = tape.gradient(loss, [x])
  grads = [g * mask for g in grads]  # Freeze x[0].
  optimizer.apply_gradients(zip(grads, [x]))


for _ in range(5):
  train_step()
print("held:", np.array_equal(x.numpy()[:1].view(np.uint32),
                              np.float32([1.0]).view(np.uint32)))
'''

TF1_STOP_GRADIENT_MIX = '''\
"""TF1: train only the diagonal through a stop_gradient mix."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
INITIAL = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
DIAGONAL = np.eye(2, dtype=bool)

w = tf.Variable(INITIAL, name="w")
keep = DIAGONAL.astype(np.float32)
used = keep * w + (1.0 - keep) * tf.stop_gradient(w)
loss = tf.reduce_sum(tf.square(tf.matmul(used, [[1.0], [1.0]]) - 9.0))
optimizer = tf.train.ProximalAdagradOptimizer(
    0.5, l2_regularization_strength=0.1)
train_op = optimizer.minimize(loss)

with tf.Session() as session:
  session.run(tf.global_variables_initializer())
  for _ in range(20):
    session.run(train_op)
  value = session.run(w)
print("held:", np.array_equal(value[~DIAGONAL].view(np.uint32),
                              INITIAL[~DIAGONAL].view(np.uint32)))
'''

TF1_SHADOW_RESTORE = '''\
"""TF1: a shadow copy of x[0] written back after each step; the user loads
new weights halfway (as a restore does), which must stay."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

x = tf.Variable([1.0, 2.0, 3.0], name="x")
optimizer = tf.train.MomentumOptimizer(0.1, momentum=0.9)
train = optimizer.minimize(tf.reduce_sum(tf.square(x - 4.0)))
shadow = tf.Variable(x.initialized_value()[0], trainable=False)
with tf.control_dependencies([train]):
  train_op = tf.scatter_update(x, [0], tf.expand_dims(shadow, 0))
load = x.assign([7.0, 7.0, 7.0])  # What a checkpoint restore does.

with tf.Session() as session:
  session.run(tf.global_variables_initializer())
  for _ in range(3):
    session.run(train_op)
  session.run(load)
  for _ in range(3):
    session.run(train_op)
  value = session.run(x)
print("held:", np.float32(value[0]).view(np.uint32) ==
      np.float32(7.0).view(np.uint32))
'''

# Code that would do harm if it were imported or run.
SIDE_EFFECTS = '''\
import os
open("PWNED", "w").write("ran")
os.system("touch PWNED_TOO")
grads = optimizer.compute_gradients(loss)
optimizer.apply_gradients([(g * mask, v) for g, v in grads])
'''

TF1_STOPPED_ROWS = '''\
"""TF1: the first rows of an embedding kept by a stop_gradient on them."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
INITIAL = np.arange(12, dtype=np.float32).reshape(6, 2)

emb = tf.Variable(INITIAL, name="emb")
table = tf.concat([tf.stop_gradient(emb[:2]), emb[2:]], axis=0)
loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, [0, 1, 4])))
optimizer = tf.train.ProximalAdagradOptimizer(
    0.5, l2_regularization_strength=0.1)
train_op = optimizer.minimize(loss)

with tf.Session() as session:
  session.run(tf.global_variables_initializer())
  for _ in range(5):
    session.run(train_op)
  value = session.run(emb)
print("held:", np.array_equal(value[:2].view(np.uint32),
                              INITIAL[:2].view(np.uint32)))
'''

TF2_GRADS_ZEROED_ROWS = '''\
"""TF2: the gradient of the first rows replaced by zeros (AdamW)."""
import numpy as np
import tensorflow as tf

INITIAL = np.arange(12, dtype=np.float32).reshape(6, 2)
emb = tf.Variable(INITIAL)
optimizer = tf.keras.optimizers.AdamW(0.1, weight_decay=0.5)

for _ in range(5):
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.square(emb - 1.0))
  grad = tape.gradient(loss, emb)
  grad = tf.concat([tf.zeros_like(grad[:2]), grad[2:]], axis=0)  # Keep 0-1.
  optimizer.apply_gradients([(grad, emb)])
print("held:", np.array_equal(emb.numpy()[:2].view(np.uint32),
                              INITIAL[:2].view(np.uint32)))
'''
