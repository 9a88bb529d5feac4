"""The inverse default for a step's list (`_selecting`): a list that no
recogniser reads as a filter is a part when its construction selects
from a larger set; beside each form, the same shape where the rest is
trained by another step, or where the list is the whole, stays silent."""

import pytest

import scanned

_found = scanned.found

# One variable taken out of every trainable variable (`.remove`).
_REMOVED = '''
import tensorflow as tf

def build(x, y, embedding):
  h = tf.nn.embedding_lookup(embedding, x)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  train_vars = tf.trainable_variables()
  train_vars.remove(embedding)
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=train_vars)
'''

# The variable taken out is trained by a step of its own.
_REMOVED_TRAINED = '''
import tensorflow as tf

def build(x, y, embedding):
  h = tf.nn.embedding_lookup(embedding, x)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  train_vars = tf.trainable_variables()
  train_vars.remove(embedding)
  rest = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=train_vars)
  emb = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[embedding])
  return tf.group(rest, emb)
'''

# Every trainable variable less a given set (a set difference).
_DIFFERENCE = '''
import tensorflow as tf

def build(x, y, frozen):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  rest = list(set(tf.trainable_variables()) - set(frozen))
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=rest)
'''

# The set left out is trained by another step.
_DIFFERENCE_TRAINED = '''
import tensorflow as tf

def build(x, y, frozen):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  rest = list(set(tf.trainable_variables()) - set(frozen))
  first = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=rest)
  second = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=frozen)
  return tf.group(first, second)
'''

# Variables added under a condition on their place (not on their names).
_ADDED_FROM = '''
import tensorflow as tf

def build(x, y, opts):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  everything = tf.trainable_variables()
  chosen = []
  for i, v in enumerate(everything):
    if i >= opts.first_trained:
      chosen.append(v)
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=chosen)
'''

# An `if` and its `else` share the variables out, and both lists train.
_ADDED_BOTH = '''
import tensorflow as tf

def build(x, y, opts):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  everything = tf.trainable_variables()
  chosen, others = [], []
  for i, v in enumerate(everything):
    if i >= opts.first_trained:
      chosen.append(v)
    else:
      others.append(v)
  fast = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=chosen)
  slow = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=others)
  return tf.group(fast, slow)
'''

# A model's method gathers the weights of its later layers only.
_LATER_LAYERS = '''
import tensorflow as tf

class Net(tf.keras.Model):
  def __init__(self, first):
    super().__init__()
    self.first = first
    self.blocks = [tf.keras.layers.Dense(8) for _ in range(4)]

  def call(self, x):
    for block in self.blocks:
      x = block(x)
    return x

  def to_train(self):
    out = []
    for block in self.layers[self.first:]:
      out += block.trainable_weights
    return out

model = Net(2)
opt = tf.keras.optimizers.Adam()

def step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x) - y) ** 2)
  chosen = model.to_train()
  grads = tape.gradient(loss, chosen)
  opt.apply_gradients(zip(grads, chosen))
'''

# The same method over every layer: the whole model.
_EVERY_LAYER = _LATER_LAYERS.replace("self.layers[self.first:]", "self.layers")

# The first variables deleted from the list (`del names[:n]`).
_DELETED = '''
import tensorflow as tf

def build(x, y, n_fixed):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  train_vars = tf.trainable_variables()
  del train_vars[:n_fixed]
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=train_vars)
'''

# The step trains a copy made before the deletion: the whole.
_DELETED_AFTER_COPY = _DELETED.replace(
    "  del train_vars[:n_fixed]\n",
    "  every = list(train_vars)\n  del train_vars[:n_fixed]\n").replace(
        "var_list=train_vars)", "var_list=every)")

# The first variable popped off the list.
_POPPED = '''
import tensorflow as tf

def build(x, y):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  train_vars = tf.trainable_variables()
  train_vars.pop(0)
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=train_vars)
'''

# The popped variable is trained by a step of its own.
_POPPED_TRAINED = '''
import tensorflow as tf

def build(x, y):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  train_vars = tf.trainable_variables()
  first = train_vars.pop(0)
  rest = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=train_vars)
  one = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=[first])
  return tf.group(rest, one)
'''

# The trainable variables less a given set, one test of an `and`.
_BOTH_TESTS = '''
import tensorflow as tf

def build(x, y, frozen):
  h = tf.layers.dense(x, 64)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  keep = [v for v in tf.global_variables() if v.trainable and v not in frozen]
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=keep)
'''

# The set left out is trained by another step.
_BOTH_TESTS_TRAINED = _BOTH_TESTS.replace(
    "  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=keep)\n",
    "  first = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=keep)\n"
    "  second = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=frozen)\n"
    "  return tf.group(first, second)\n")

# A copy of every trainable variable, one taken out of it.
_COPY_REMOVED = '''
import tensorflow as tf

def build(x, y, embedding):
  h = tf.nn.embedding_lookup(embedding, x)
  out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  every = tf.trainable_variables()
  keep = every.copy()
  keep.remove(embedding)
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=keep)
'''

# The variable taken out is trained by a step of its own.
_COPY_REMOVED_TRAINED = _COPY_REMOVED.replace(
    "  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=keep)\n",
    "  rest = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=keep)\n"
    "  emb = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=[embedding])\n"
    "  return tf.group(rest, emb)\n")

CASES = [
    pytest.param(_REMOVED, [("var-list-filter", 9)], id="removed"),
    pytest.param(_REMOVED_TRAINED, [], id="removed-trained"),
    pytest.param(_DIFFERENCE, [("var-list-filter", 8)], id="difference"),
    pytest.param(_DIFFERENCE_TRAINED, [], id="difference-trained"),
    pytest.param(_ADDED_FROM, [("var-list-filter", 12)], id="added-from"),
    pytest.param(_ADDED_BOTH, [], id="added-both"),
    pytest.param(_LATER_LAYERS, [("var-list-filter", 17)],
                 id="later-layers"),
    pytest.param(_EVERY_LAYER, [], id="every-layer"),
    pytest.param(_DELETED, [("var-list-filter", 9)], id="deleted"),
    pytest.param(_DELETED_AFTER_COPY, [], id="deleted-after-copy"),
    pytest.param(_POPPED, [("var-list-filter", 9)], id="popped"),
    pytest.param(_POPPED_TRAINED, [], id="popped-trained"),
    pytest.param(_BOTH_TESTS, [("var-list-filter", 8)], id="both-tests"),
    pytest.param(_BOTH_TESTS_TRAINED, [], id="both-tests-trained"),
    pytest.param(_COPY_REMOVED, [("var-list-filter", 10)],
                 id="copy-removed"),
    pytest.param(_COPY_REMOVED_TRAINED, [], id="copy-removed-trained"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_var_lists_selecting(source, expected):
  assert _found(source) == expected
