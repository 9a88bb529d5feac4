"""The public TF1, TF2, Keras and slim ways code picks a subset of a
model's variables and hands it to a step (`minimize`, `compute_gradients`
then `apply_gradients`, `apply_gradients(zip(grads, subset))`,
`tape.gradient(loss, subset)`, slim's `create_train_op(
variables_to_train=...)`, `optimize_loss(variables=...)`): one minimal
model that trains per API, each found as `var-list-filter`, catalogued by
API rather than by a codebase. Beside them, the same APIs where nothing
is left out stay silent: a Saver's, a restore's or a warm start's list, a
GAN's two halves at their own optimizers, every variable trained by one
of two optimizers at two learning rates, the whole list, an EMA's list."""

import pytest

import scanned

# A TF1 model in two scopes: 'body' under 'head'.
_TF1 = '''
import tensorflow as tf

def build(x, y):
  with tf.variable_scope("body"):
    h = tf.layers.dense(x, 64, activation=tf.nn.relu)
  with tf.variable_scope("head"):
    out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  opt = tf.train.AdamOptimizer(1e-3)
'''

# The same in slim, trained by `create_train_op`.
_SLIM = '''
import tensorflow as tf
slim = tf.contrib.slim

def build(images, labels):
  with tf.variable_scope("body"):
    net = slim.conv2d(images, 32, [3, 3])
    net = slim.flatten(net)
  with tf.variable_scope("head"):
    logits = slim.fully_connected(net, 10, activation_fn=None)
  loss = tf.losses.softmax_cross_entropy(labels, logits)
  optimizer = tf.train.MomentumOptimizer(0.01, 0.9)
'''

# A Keras model of three named layers, trained by a tape.
_KERAS = '''
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", name="body"),
    tf.keras.layers.Dense(64, activation="relu", name="middle"),
    tf.keras.layers.Dense(10, name="head"),
])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
'''

_MINIMIZE = "  return opt.minimize(loss, var_list=chosen)\n"
_COMPUTED = '''\
  gvs = opt.compute_gradients(loss, var_list=chosen)
  return opt.apply_gradients(gvs)
'''
_ZIPPED = '''\
  grads = tf.gradients(loss, chosen)
  return opt.apply_gradients(zip(grads, chosen))
'''
_CREATE = ("  return slim.learning.create_train_op(\n"
           "      loss, optimizer, variables_to_train=chosen)\n")
_OPTIMIZE_LOSS = ("  return tf.contrib.layers.optimize_loss(\n"
                  "      loss, tf.train.get_or_create_global_step(), 0.01,"
                  " 'Adam', variables=chosen)\n")
_TAPE = '''\
  grads = tape.gradient(loss, chosen)
  optimizer.apply_gradients(zip(grads, chosen))
  return loss
'''


def _indented(lines, by):
  return "".join(by + line + "\n" for line in lines.strip("\n").split("\n"))


def _tf1(choose, step=_MINIMIZE):
  return _TF1 + _indented(choose, "  ") + step


def _slim(choose, step=_CREATE):
  return _SLIM + _indented(choose, "  ") + step


def _keras(choose):
  return _KERAS + _indented(choose, "    ") + _TAPE


# A Keras model of two parts, one of them trained, the model run whole.
_SUBMODULE = '''
import tensorflow as tf

class Net(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.backbone = tf.keras.layers.Dense(64, activation="relu")
    self.head = tf.keras.layers.Dense(10)

  def call(self, x):
    return self.head(self.backbone(x))

model = Net()
optimizer = tf.keras.optimizers.Adam(1e-3)
slow = tf.keras.optimizers.Adam(1e-5)

def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
        y, model(x), from_logits=True))
'''

# Keras 3: a functional model of two sub-models, one of them trained.
_KERAS3 = '''
import keras
import tensorflow as tf

backbone = keras.Sequential([keras.layers.Dense(64, activation="relu")])
head = keras.Sequential([keras.layers.Dense(10)])
inputs = keras.Input((32,))
model = keras.Model(inputs, head(backbone(inputs)))
optimizer = keras.optimizers.Adam(1e-3)

def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(
        y, model(x), from_logits=True))
  grads = tape.gradient(loss, {chosen})
  optimizer.apply_gradients(zip(grads, {chosen}))
  return loss
'''

POSITIVE = {
    # TF1's collections, narrowed by a scope.
    "trainable_variables_scope": _tf1(
        "chosen = tf.trainable_variables(scope='head')"),
    "compat_v1_trainable_variables": _tf1(
        "chosen = tf.compat.v1.trainable_variables('head')"),
    "get_collection_scope": _tf1(
        "chosen = tf.get_collection(\n"
        "    tf.GraphKeys.TRAINABLE_VARIABLES, scope='head')"),
    "compat_v1_get_collection": _tf1(
        "chosen = tf.compat.v1.get_collection(\n"
        "    tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, 'head')"),
    "get_collection_ref_scope": _tf1(
        "chosen = tf.get_collection_ref(\n"
        "    tf.GraphKeys.TRAINABLE_VARIABLES, scope='head')"),
    "global_variables_scope": _tf1(
        "chosen = tf.global_variables(scope='head')"),
    "model_variables_scope": _tf1(
        "chosen = tf.model_variables(scope='head')"),
    "compute_then_apply": _tf1(
        "chosen = tf.trainable_variables('head')", _COMPUTED),
    "tf_gradients_zip": _tf1(
        "chosen = tf.trainable_variables('head')", _ZIPPED),
    # contrib.framework and slim.
    "filter_variables_include": _tf1(
        "tvars = tf.trainable_variables()\n"
        "chosen = tf.contrib.framework.filter_variables(\n"
        "    tvars, include_patterns=['head'])"),
    "filter_variables_exclude": _tf1(
        "tvars = tf.trainable_variables()\n"
        "chosen = tf.contrib.framework.filter_variables(\n"
        "    tvars, exclude_patterns=['body'])"),
    "contrib_get_trainable_variables": _tf1(
        "chosen = tf.contrib.framework.get_trainable_variables('head')"),
    "slim_get_variables": _slim("chosen = slim.get_variables('head')"),
    "slim_get_model_variables": _slim(
        "chosen = slim.get_model_variables('head')"),
    "slim_get_trainable_variables": _slim(
        "chosen = slim.get_trainable_variables(scope='head')"),
    "slim_get_variables_to_restore_as_train_list": _slim(
        "chosen = slim.get_variables_to_restore(exclude=['body'])"),
    "slim_get_variables_by_name": _slim(
        "chosen = slim.get_variables_by_name('logits')"),
    "slim_get_variables_by_suffix": _slim(
        "chosen = slim.get_variables_by_suffix('weights', scope='head')"),
    "slim_trainable_scopes": _slim(
        "chosen = []\n"
        "for scope in ['head', 'body/conv']:\n"
        "  chosen.extend(\n"
        "      tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))"),
    "optimize_loss_variables": _slim(
        "chosen = tf.trainable_variables('head')", _OPTIMIZE_LOSS),
    # Python's filters over the whole list.
    "filter_lambda_name": _tf1(
        "tvars = tf.trainable_variables()\n"
        "chosen = list(filter(lambda v: 'head' in v.name, tvars))"),
    "comprehension_re_match": _tf1(
        "import re\n"
        "tvars = tf.trainable_variables()\n"
        "chosen = [v for v in tvars if re.match(r'^head/', v.name)]"),
    "comprehension_not_startswith": _tf1(
        "tvars = tf.trainable_variables()\n"
        "chosen = [v for v in tvars if not v.name.startswith('body')]"),
    "comprehension_any_scopes": _tf1(
        "scopes = ['head', 'body/dense_1']\n"
        "tvars = tf.trainable_variables()\n"
        "chosen = [v for v in tvars if any(s in v.name for s in scopes)]"),
    "slice_tail": _tf1(
        "tvars = tf.trainable_variables()\n"
        "chosen = tvars[-2:]"),
    "set_difference": _tf1(
        "all_vars = tf.trainable_variables()\n"
        "frozen = tf.trainable_variables('body')\n"
        "chosen = list(set(all_vars) - set(frozen))"),
    "itertools_filterfalse": _tf1(
        "import itertools\n"
        "tvars = tf.trainable_variables()\n"
        "chosen = list(itertools.filterfalse(\n"
        "    lambda v: v.name.startswith('body'), tvars))"),
    "dict_by_name_items": _tf1(
        "by_name = {v.name: v for v in tf.trainable_variables()}\n"
        "chosen = [v for k, v in by_name.items() if k.startswith('head')]"),
    "dict_filtered_values": _tf1(
        "by_name = {v.name: v for v in tf.trainable_variables()\n"
        "           if 'head' in v.name}\n"
        "chosen = list(by_name.values())"),
    # Keras layers and sub-models.
    "keras_get_layer_weights": _keras(
        "chosen = model.get_layer('head').trainable_weights"),
    "keras_get_layer_variables": _keras(
        "chosen = model.get_layer('head').trainable_variables"),
    "keras_two_layers_joined": _keras(
        "chosen = (model.get_layer('middle').trainable_weights +\n"
        "          model.get_layer('head').trainable_weights)"),
    "keras_last_layer": _keras(
        "chosen = model.layers[-1].trainable_weights"),
    "keras_sum_of_layers": _keras(
        "chosen = sum([l.trainable_weights for l in model.layers[1:]], [])"),
    "keras_nested_comprehension": _keras(
        "chosen = [w for l in model.layers[-2:] for w in l.trainable_weights]"),
    "keras_filter_by_name": _keras(
        "chosen = [v for v in model.trainable_variables if 'head' in v.name]"),
    "keras_slice_tail": _keras(
        "chosen = model.trainable_variables[-2:]"),
    "keras_submodule_head": _SUBMODULE + '''\
  grads = tape.gradient(loss, model.head.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.head.trainable_variables))
  return loss
''',
    "keras3_sub_model": _KERAS3.format(chosen="head.trainable_variables"),
    "keras3_optimizer_apply": _KERAS3.format(
        chosen="head.trainable_variables").replace(
            "optimizer.apply_gradients(zip(grads, head.trainable_variables))",
            "optimizer.apply(grads, head.trainable_variables)"),
    "keras_minimize_of_a_callable": '''
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64),
                             tf.keras.layers.Dense(10)])
opt = tf.keras.optimizers.SGD(0.1)

def step(x, y):
  loss_fn = lambda: tf.reduce_mean(tf.square(model(x) - y))
  opt.minimize(loss_fn, var_list=model.layers[-1].trainable_variables)
''',
    "tf_module_submodule": '''
import tensorflow as tf

class Net(tf.Module):
  def __init__(self):
    super().__init__()
    self.backbone = tf.keras.layers.Dense(64)
    self.head = tf.keras.layers.Dense(10)

  def __call__(self, x):
    return self.head(self.backbone(x))

net = Net()
opt = tf.keras.optimizers.SGD(0.1)

def step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(net(x) - y))
  grads = tape.gradient(loss, net.head.trainable_variables)
  opt.apply_gradients(zip(grads, net.head.trainable_variables))
''',
}

_GAN = '''
import tensorflow as tf

def build(z, real):
  with tf.variable_scope("generator"):
    fake = tf.layers.dense(z, 784)
  with tf.variable_scope("discriminator"):
    d_real = tf.layers.dense(real, 1)
  with tf.variable_scope("discriminator", reuse=True):
    d_fake = tf.layers.dense(fake, 1)
  d_loss = tf.reduce_mean(d_fake - d_real)
  g_loss = -tf.reduce_mean(d_fake)
  tvars = tf.trainable_variables()
  d_vars = [v for v in tvars if v.name.startswith('discriminator')]
  g_vars = [v for v in tvars if v.name.startswith('generator')]
  d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
  g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
  return d_op, g_op
'''

_KERAS_GAN = '''
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(784)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
g_opt = tf.keras.optimizers.Adam(1e-4)
d_opt = tf.keras.optimizers.Adam(1e-4)

@tf.function
def train_step(z, real):
  with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
    fake = generator(z, training=True)
    d_real = discriminator(real, training=True)
    d_fake = discriminator(fake, training=True)
    g_loss = -tf.reduce_mean(d_fake)
    d_loss = tf.reduce_mean(d_fake - d_real)
  g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
  d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
  g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
  d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
'''

# A GAN model class whose `call` runs both halves, each trained apart.
_KERAS_GAN_CLASS = '''
import tensorflow as tf

class GAN(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.generator = tf.keras.Sequential([tf.keras.layers.Dense(784)])
    self.discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])

  def call(self, z):
    return self.discriminator(self.generator(z))

gan = GAN()
g_opt = tf.keras.optimizers.Adam(1e-4)
d_opt = tf.keras.optimizers.Adam(1e-4)

def train_step(z, real):
  with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
    d_fake = gan(z)
    d_real = gan.discriminator(real)
    g_loss = -tf.reduce_mean(d_fake)
    d_loss = tf.reduce_mean(d_fake - d_real)
  g_grads = g_tape.gradient(g_loss, gan.generator.trainable_variables)
  d_grads = d_tape.gradient(d_loss, gan.discriminator.trainable_variables)
  g_opt.apply_gradients(zip(g_grads, gan.generator.trainable_variables))
  d_opt.apply_gradients(zip(d_grads, gan.discriminator.trainable_variables))
'''

_TWO_RATES = '''\
  a = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head_vars)
  b = tf.train.AdamOptimizer(1e-5).minimize(loss, var_list=body_vars)
  return tf.group(a, b)
'''

NEGATIVE = {
    "whole_trainable_variables": _tf1("chosen = tf.trainable_variables()"),
    "whole_compute_then_apply": _tf1(
        "chosen = tf.trainable_variables()", _COMPUTED),
    "whole_keras_model": _keras("chosen = model.trainable_variables"),
    "whole_keras3_model": _KERAS3.format(
        chosen="model.trainable_variables"),
    "saver_of_a_scope": _tf1(
        "restore = tf.trainable_variables(scope='body')\n"
        "saver = tf.train.Saver(var_list=restore)",
        "  return opt.minimize(loss), saver\n"),
    "saver_by_name": _slim(
        "restore = slim.get_variables_by_name('weights')\n"
        "saver = tf.train.Saver(restore)",
        "  return slim.learning.create_train_op(loss, optimizer), saver\n"),
    "restore_filter_variables_exclude": _tf1(
        "tvars = tf.global_variables()\n"
        "restore = tf.contrib.framework.filter_variables(\n"
        "    tvars, exclude_patterns=['head'])\n"
        "saver = tf.train.Saver(var_list=restore)",
        "  return opt.minimize(loss), saver\n"),
    "slim_restore_exclude": _slim(
        "restore = slim.get_variables_to_restore(exclude=['head'])\n"
        "init_fn = slim.assign_from_checkpoint_fn('model.ckpt', restore)",
        "  return slim.learning.create_train_op(loss, optimizer), init_fn\n"),
    "init_from_checkpoint": _tf1(
        "body = tf.trainable_variables(scope='body')\n"
        "tf.train.init_from_checkpoint(\n"
        "    'ckpt', {v.op.name: v for v in body})",
        "  return opt.minimize(loss)\n"),
    "warm_start_collection_ref": _tf1(
        "body = tf.get_collection_ref(\n"
        "    tf.GraphKeys.TRAINABLE_VARIABLES, 'body')\n"
        "tf.train.init_from_checkpoint(\n"
        "    'ckpt', {v.op.name: v for v in body})",
        "  return opt.minimize(loss)\n"),
    "gan_two_optimizers": _GAN,
    "keras_gan_two_models": _KERAS_GAN,
    "keras_gan_class": _KERAS_GAN_CLASS,
    "two_learning_rates_by_name": _tf1(
        "tvars = tf.trainable_variables()\n"
        "head_vars = [v for v in tvars if 'head' in v.name]\n"
        "body_vars = [v for v in tvars if 'head' not in v.name]",
        _TWO_RATES),
    "two_learning_rates_filter_and_filterfalse": _tf1(
        "import itertools\n"
        "tvars = tf.trainable_variables()\n"
        "head_vars = list(filter(lambda v: 'head' in v.name, tvars))\n"
        "body_vars = list(itertools.filterfalse(\n"
        "    lambda v: 'head' in v.name, tvars))",
        _TWO_RATES),
    "keras_two_learning_rates_by_layer": '''
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, name="body"),
                             tf.keras.layers.Dense(10, name="head")])
slow = tf.keras.optimizers.Adam(1e-5)
fast = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
        y, model(x), from_logits=True))
  body = model.get_layer("body").trainable_variables
  head = model.get_layer("head").trainable_variables
  grads = tape.gradient(loss, body + head)
  slow.apply_gradients(zip(grads[:len(body)], body))
  fast.apply_gradients(zip(grads[len(body):], head))
''',
    "keras_submodules_two_learning_rates": _SUBMODULE + '''\
  body_grads, head_grads = tape.gradient(
      loss, [model.backbone.trainable_variables,
             model.head.trainable_variables])
  slow.apply_gradients(zip(body_grads, model.backbone.trainable_variables))
  optimizer.apply_gradients(zip(head_grads, model.head.trainable_variables))
  return loss
''',
    "ema_of_a_scope": _tf1(
        "head_vars = tf.trainable_variables(scope='head')\n"
        "ema = tf.train.ExponentialMovingAverage(0.999)\n"
        "ema_op = ema.apply(head_vars)",
        "  train_op = opt.minimize(loss)\n"
        "  with tf.control_dependencies([train_op]):\n"
        "    return tf.group(ema_op)\n"),
}


@pytest.mark.parametrize("source", list(POSITIVE.values()), ids=list(POSITIVE))
def test_each_api_s_subset_is_found(source):
  assert [idiom for idiom, _ in scanned.found(source)] == ["var-list-filter"]


@pytest.mark.parametrize("source", list(NEGATIVE.values()), ids=list(NEGATIVE))
def test_the_same_apis_leaving_nothing_out_stay_silent(source):
  assert scanned.found(source) == []
