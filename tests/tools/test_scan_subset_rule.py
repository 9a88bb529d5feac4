"""One rule for a strict subset of one model's variables reaching a step.

The model's own accessor (a method or a property, in the module of the
step or another, TF1 or TF2) returns fewer of the model's variables on
some path: a flag choosing between returns (`if self.train: return
[self.f, self.b]` / `else: return []`, or a conditional expression), the
model's whole list cut by position or by a test, or a container model
gathering its parts' accessors, one of which is such a subset. Each form
is written here as a different team might write it; beside each, its
silent twin: the same shape that trains everything (an accessor that
returns the same on every path, a model not built yet), or that is not a
freeze at all (a GAN's two halves each with its own step, a target
network's copy, an EMA's shadow weights, a saver's list).
"""

import scanned

# A layer library in a module of its own: each block returns its
# variables only when it was built to train (TF2, hand-written layers).
_LAYERS = '''
import tensorflow as tf

class Block:
  def __init__(self, size, train=True):
    self.trainable = train
    self.w = tf.Variable(tf.zeros([size, size]))
    self.b = tf.Variable(tf.zeros([size]))

  def forward(self, x):
    return tf.matmul(x, self.w) + self.b

  def params(self):
    if self.trainable:
      return [self.w, self.b]
    return []


class Net:
  def __init__(self, blocks):
    self.blocks = blocks

  def forward(self, x):
    for block in self.blocks:
      x = block.forward(x)
    return x

  def params(self):
    out = []
    for block in self.blocks:
      out.extend(block.params())
    return out
'''

_TRAIN = '''
import tensorflow as tf
from layers import Block, Net

net = Net([Block(8, train=False), Block(8)])
params = net.params()
opt = tf.keras.optimizers.Adam(1e-3)

@tf.function
def step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((net.forward(x) - y) ** 2)
  grads = tape.gradient(loss, params)
  opt.apply_gradients(zip(grads, params))
'''


def _var_list_paths(found):
  return {(path, line) for idiom, path, line in found
          if idiom == "var-list-filter"}


def test_a_container_gathering_blocks_that_return_nothing_under_a_flag():
  found = scanned.in_project({"layers.py": _LAYERS, "train.py": _TRAIN})
  assert _var_list_paths(found), found


def test_blocks_that_always_return_their_variables_are_silent():
  always = _LAYERS.replace(
      "    if self.trainable:\n      return [self.w, self.b]\n    return []",
      "    return [self.w, self.b]")
  assert "return []" not in always
  found = scanned.in_project({"layers.py": always, "train.py": _TRAIN})
  assert not _var_list_paths(found), found


def test_a_block_not_built_yet_returning_nothing_is_silent():
  unbuilt = _LAYERS.replace("if self.trainable:", "if self.built:")
  found = scanned.in_project({"layers.py": unbuilt, "train.py": _TRAIN})
  assert not _var_list_paths(found), found


# TF1: a model class whose method chooses its list by a flag given to
# its constructor, in a conditional expression.
_TF1_MODEL = '''
import tensorflow as tf

class Regressor(object):
  def __init__(self, x, y, freeze_base=False):
    self.freeze_base = freeze_base
    self.w1 = tf.get_variable("w1", [4, 4])
    self.w2 = tf.get_variable("w2", [4, 1])
    hidden = tf.nn.relu(tf.matmul(x, self.w1))
    self.loss = tf.reduce_mean((tf.matmul(hidden, self.w2) - y) ** 2)

  def get_train_vars(self):
    return [self.w2] if self.freeze_base else [self.w1, self.w2]
'''

_TF1_TRAIN = '''
import tensorflow as tf
from model import Regressor

def main(x, y):
  model = Regressor(x, y, freeze_base=True)
  opt = tf.train.AdamOptimizer(1e-3)
  train_op = opt.minimize(model.loss, var_list=model.get_train_vars())
  return train_op
'''


def test_tf1_method_choosing_fewer_variables_by_a_constructor_flag():
  found = scanned.in_project({"model.py": _TF1_MODEL,
                              "train.py": _TF1_TRAIN})
  assert _var_list_paths(found), found


def test_tf1_method_returning_the_same_on_both_arms_is_silent():
  same = _TF1_MODEL.replace(
      "[self.w2] if self.freeze_base else [self.w1, self.w2]",
      "[self.w1, self.w2] if self.freeze_base else [self.w2, self.w1]")
  found = scanned.in_project({"model.py": same, "train.py": _TF1_TRAIN})
  assert not _var_list_paths(found), found


def test_a_saver_given_the_chosen_list_is_silent():
  saved = _TF1_TRAIN.replace(
      "train_op = opt.minimize(model.loss, var_list=model.get_train_vars())",
      "saver = tf.train.Saver(var_list=model.get_train_vars())\n"
      "  train_op = opt.minimize(model.loss)")
  found = scanned.in_project({"model.py": _TF1_MODEL, "train.py": saved})
  assert not _var_list_paths(found), found


# A property of a Keras model that cuts its own whole list by position.
_KERAS_TOP = '''
import tensorflow as tf

class Classifier(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.body = tf.keras.layers.Dense(32)
    self.head = tf.keras.layers.Dense(10)

  def call(self, x):
    return self.head(self.body(x))

  @property
  def top_variables(self):
    return self.trainable_variables[-2:]

model = Classifier()
opt = tf.keras.optimizers.SGD(0.1)

def train_step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
        y, model(x), from_logits=True))
  chosen = model.top_variables
  grads = tape.gradient(loss, chosen)
  opt.apply_gradients(zip(grads, chosen))
'''


def test_a_property_cutting_the_models_own_list_by_position():
  found = scanned.in_project({"t.py": _KERAS_TOP})
  assert _var_list_paths(found), found


def test_a_property_returning_the_models_whole_list_is_silent():
  whole = _KERAS_TOP.replace("self.trainable_variables[-2:]",
                             "self.trainable_variables")
  found = scanned.in_project({"t.py": whole})
  assert not _var_list_paths(found), found


# A GAN written as one class: each half's accessor returns its own
# variables, and each has its own step: between them they train all.
_GAN = '''
import tensorflow as tf

class GAN(object):
  def __init__(self, z, x, separate=True):
    self.separate = separate
    self.g_w = tf.get_variable("g_w", [8, 8])
    self.d_w = tf.get_variable("d_w", [8, 1])
    fake = tf.matmul(z, self.g_w)
    self.d_loss = -tf.reduce_mean(tf.matmul(x, self.d_w)) + tf.reduce_mean(
        tf.matmul(fake, self.d_w))
    self.g_loss = -tf.reduce_mean(tf.matmul(fake, self.d_w))

  def g_vars(self):
    if self.separate:
      return [self.g_w]
    return [self.g_w, self.d_w]

  def d_vars(self):
    if self.separate:
      return [self.d_w]
    return [self.g_w, self.d_w]

def build(z, x):
  gan = GAN(z, x)
  d_op = tf.train.AdamOptimizer(1e-4).minimize(gan.d_loss,
                                               var_list=gan.d_vars())
  g_op = tf.train.AdamOptimizer(1e-4).minimize(gan.g_loss,
                                               var_list=gan.g_vars())
  return d_op, g_op
'''


def test_a_gans_two_accessors_each_with_its_own_step_are_silent():
  found = scanned.in_project({"t.py": _GAN})
  assert not _var_list_paths(found), found


def test_one_half_of_the_gan_trained_alone_is_found():
  one = _GAN.replace(
      "  d_op = tf.train.AdamOptimizer(1e-4).minimize(gan.d_loss,\n"
      "                                               var_list=gan.d_vars())\n",
      "  d_op = None\n")
  found = scanned.in_project({"t.py": one})
  assert _var_list_paths(found), found


# A Q-network whose accessor returns all its variables, trained while a
# target network of the same class is only assigned from it.
_TARGET = '''
import tensorflow as tf

class QNet(object):
  def __init__(self, name, x):
    with tf.variable_scope(name):
      self.w = tf.get_variable("w", [4, 2])
      self.b = tf.get_variable("b", [2])
    self.q = tf.matmul(x, self.w) + self.b

  def params(self):
    return [self.w, self.b]

def build(x, y):
  online = QNet("online", x)
  target = QNet("target", x)
  loss = tf.reduce_mean((online.q - y) ** 2)
  train_op = tf.train.AdamOptimizer(1e-3).minimize(
      loss, var_list=online.params())
  sync = [t.assign(o) for t, o in zip(target.params(), online.params())]
  return train_op, sync
'''


def test_a_target_network_of_the_same_class_is_silent():
  found = scanned.in_project({"t.py": _TARGET})
  assert not _var_list_paths(found), found


# An EMA's shadow weights live beside the trained ones; the accessor
# returns the trained ones on every path.
_EMA = '''
import tensorflow as tf

class Model(tf.Module):
  def __init__(self):
    self.w = tf.Variable(tf.zeros([4, 1]))
    self.ema_w = tf.Variable(tf.zeros([4, 1]), trainable=False)

  def __call__(self, x):
    return tf.matmul(x, self.w)

  def evaluate(self, x):
    return tf.matmul(x, self.ema_w)

  def params(self):
    return [self.w]

model = Model()
opt = tf.keras.optimizers.Adam()

def step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x) - y) ** 2)
  grads = tape.gradient(loss, model.params())
  opt.apply_gradients(zip(grads, model.params()))
  model.ema_w.assign(0.99 * model.ema_w + 0.01 * model.w)
'''


def test_an_ema_copy_beside_the_trained_weights_is_silent():
  found = scanned.in_project({"t.py": _EMA})
  assert not _var_list_paths(found), found


# The step is a method of the model itself (TF1), its list the model's
# own accessor, which grows the list by a flag (an `if` with no `else`).
_SELF_STEP = '''
import tensorflow as tf

class Tagger(object):
  def __init__(self, x, y, tune_embeddings=False):
    self.tune_embeddings = tune_embeddings
    self.emb = tf.get_variable("emb", [1000, 64])
    self.w = tf.get_variable("w", [64, 5])
    logits = tf.matmul(tf.nn.embedding_lookup(self.emb, x), self.w)
    self.loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                       logits=logits))
    self.train_op = self.build_train_op()

  def trained(self):
    chosen = [self.w]
    if self.tune_embeddings:
      chosen.append(self.emb)
    return chosen

  def build_train_op(self):
    return tf.train.AdagradOptimizer(0.1).minimize(
        self.loss, var_list=self.trained())
'''


def test_the_models_own_step_reading_a_list_a_flag_grows():
  found = scanned.in_project({"tagger.py": _SELF_STEP})
  assert _var_list_paths(found), found


def test_a_flag_that_also_decides_whether_the_variable_is_made_is_silent():
  made = _SELF_STEP.replace(
      '    self.emb = tf.get_variable("emb", [1000, 64])\n',
      '    if self.tune_embeddings:\n'
      '      self.emb = tf.get_variable("emb", [1000, 64])\n'
      '    else:\n'
      '      self.emb = tf.constant(0., shape=[1000, 64])\n')
  found = scanned.in_project({"tagger.py": made})
  assert not _var_list_paths(found), found


# A Keras model's method that takes the head's variables out of its own
# list: a set difference, or `remove` on a copy.
_KERAS_REST = '''
import tensorflow as tf

class Siamese(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.encoder = tf.keras.layers.Dense(16)
    self.head = tf.keras.layers.Dense(1)

  def call(self, x):
    return self.head(self.encoder(x))

  def body_variables(self):
    return list(set(self.trainable_variables) - set(self.head.weights))

model = Siamese()
opt = tf.keras.optimizers.Adam()

def step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x) - y) ** 2)
  variables = model.body_variables()
  opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
'''


def test_a_method_taking_a_part_out_of_the_models_own_list():
  found = scanned.in_project({"t.py": _KERAS_REST})
  assert _var_list_paths(found), found


def test_a_method_removing_an_entry_from_a_copy_of_the_list():
  removed = _KERAS_REST.replace(
      "    return list(set(self.trainable_variables) - set(self.head.weights))",
      "    out = list(self.trainable_variables)\n"
      "    out.remove(self.head.kernel)\n"
      "    return out")
  found = scanned.in_project({"t.py": removed})
  assert _var_list_paths(found), found


def test_a_method_keeping_the_trainable_entries_of_its_list_is_silent():
  kept = _KERAS_REST.replace(
      "    return list(set(self.trainable_variables) - set(self.head.weights))",
      "    out = []\n"
      "    for v in self.weights:\n"
      "      if v.trainable:\n"
      "        out.append(v)\n"
      "    return out")
  found = scanned.in_project({"t.py": kept})
  assert not _var_list_paths(found), found


def test_a_method_keeping_its_entries_by_shape_in_a_loop():
  kept = _KERAS_REST.replace(
      "    return list(set(self.trainable_variables) - set(self.head.weights))",
      "    out = []\n"
      "    for v in self.weights:\n"
      "      if len(v.shape) > 1:\n"
      "        out.append(v)\n"
      "    return out")
  found = scanned.in_project({"t.py": kept})
  assert _var_list_paths(found), found


# Var lists made per stage from a table of scopes, one step per list of
# one loss, and a value chosen at run time picks the step that runs (an
# Estimator's stage): the decoder alone first, the encoder kept fixed.
_STAGES = '''
import tensorflow as tf

SCOPES = {"warmup": ["decoder"], "full": ["encoder", "decoder"]}

def var_lists():
  out = []
  for key in SCOPES:
    chosen = []
    for scope in SCOPES[key]:
      chosen += tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                  scope=scope)
    out.append(chosen)
  return out

def model_fn(features, labels, mode, params):
  with tf.variable_scope("encoder"):
    h = tf.layers.dense(features, 8)
  with tf.variable_scope("decoder"):
    y = tf.layers.dense(h, 1)
  loss = tf.losses.mean_squared_error(labels, y)
  opt = tf.train.AdamOptimizer(1e-3)
  ops = [opt.minimize(loss, var_list=v) for v in var_lists()]
  return tf.estimator.EstimatorSpec(mode, loss=loss,
                                    train_op=ops[params["stage"]])
'''


def test_one_of_the_steps_per_stage_picked_by_a_run_time_value():
  found = scanned.in_project({"t.py": _STAGES})
  assert _var_list_paths(found), found


def test_the_steps_per_stage_taken_back_by_a_caller_that_picks_one():
  helper = _STAGES.replace(
      "  ops = [opt.minimize(loss, var_list=v) for v in var_lists()]\n"
      "  return tf.estimator.EstimatorSpec(mode, loss=loss,\n"
      "                                    train_op=ops[params[\"stage\"]])\n",
      "  train_ops, active = make_ops(opt, loss)\n"
      "  return tf.estimator.EstimatorSpec(\n"
      "      mode, loss=loss, train_op=train_ops[active.index(True)])\n"
      "\n"
      "def make_ops(opt, loss):\n"
      "  train_ops = []\n"
      "  for v in var_lists():\n"
      "    train_ops.append(opt.minimize(loss, var_list=v))\n"
      "  return train_ops, [True, False]\n")
  assert "make_ops" in helper
  found = scanned.in_project({"t.py": helper})
  assert _var_list_paths(found), found


def test_steps_per_stage_all_run_together_are_silent():
  grouped = _STAGES.replace('train_op=ops[params["stage"]]',
                            "train_op=tf.group(*ops)")
  found = scanned.in_project({"t.py": grouped})
  assert not _var_list_paths(found), found


# Two halves of one loss taking turns by the step's parity (block
# coordinate descent): every variable trains.
_TURNS = '''
import tensorflow as tf

def train(x, y, steps):
  with tf.variable_scope("a"):
    h = tf.layers.dense(x, 8)
  with tf.variable_scope("b"):
    out = tf.layers.dense(h, 1)
  loss = tf.reduce_mean((out - y) ** 2)
  groups = [tf.trainable_variables("a"), tf.trainable_variables("b")]
  ops = [tf.train.AdamOptimizer().minimize(loss, var_list=g) for g in groups]
  with tf.Session() as sess:
    for i in range(steps):
      sess.run(ops[i % 2])
'''


def test_halves_of_one_loss_taking_turns_are_silent():
  found = scanned.in_project({"t.py": _TURNS})
  assert not _var_list_paths(found), found


# A GAN's halves made in one loop, each with its own loss, one picked
# per run by a flag: between the runs both train.
_GAN_LOOP = '''
import tensorflow as tf

def build(z, x, which):
  with tf.variable_scope("gen"):
    fake = tf.layers.dense(z, 8)
  with tf.variable_scope("disc"):
    d_real = tf.layers.dense(x, 1)
  with tf.variable_scope("disc", reuse=True):
    d_fake = tf.layers.dense(fake, 1)
  d_loss = tf.reduce_mean(d_fake - d_real)
  g_loss = -tf.reduce_mean(d_fake)
  pairs = [(d_loss, tf.trainable_variables("disc")),
           (g_loss, tf.trainable_variables("gen"))]
  ops = [tf.train.RMSPropOptimizer(5e-5).minimize(l, var_list=v)
         for l, v in pairs]
  return ops[which]
'''


def test_a_gans_halves_each_with_its_loss_picked_per_run_are_silent():
  found = scanned.in_project({"t.py": _GAN_LOOP})
  assert not _var_list_paths(found), found


# A class attribute for the flag, set by a subclass; the accessor lives
# in the base class, in another module.
_BASE_MODEL = '''
import tensorflow as tf

class Base(object):
  freeze_encoder = False

  def __init__(self, x, y):
    self.enc_w = tf.get_variable("enc_w", [4, 4])
    self.dec_w = tf.get_variable("dec_w", [4, 1])
    h = tf.matmul(x, self.enc_w)
    self.loss = tf.reduce_mean((tf.matmul(h, self.dec_w) - y) ** 2)

  def trainable(self):
    if self.freeze_encoder:
      return [self.dec_w]
    return [self.enc_w, self.dec_w]
'''

_SUBCLASS = '''
import tensorflow as tf
from base import Base

class FineTuned(Base):
  freeze_encoder = True

def build(x, y):
  model = FineTuned(x, y)
  return tf.train.GradientDescentOptimizer(0.1).minimize(
      model.loss, var_list=model.trainable())
'''


def test_a_base_class_accessor_narrowed_by_a_class_attribute():
  found = scanned.in_project({"base.py": _BASE_MODEL, "train.py": _SUBCLASS})
  assert _var_list_paths(found), found


# TF2: a Keras model's own `train_step` applying its gradients to a
# property that a constructor flag narrows.
_TRAIN_STEP = '''
import tensorflow as tf

class Tuned(tf.keras.Model):
  def __init__(self, linear_probe=True):
    super().__init__()
    self.linear_probe = linear_probe
    self.backbone = tf.keras.layers.Dense(64)
    self.head = tf.keras.layers.Dense(10)

  def call(self, x):
    return self.head(self.backbone(x))

  @property
  def tuned_variables(self):
    if self.linear_probe:
      return self.head.trainable_variables
    return self.backbone.trainable_variables + self.head.trainable_variables

  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      loss = self.compiled_loss(y, self(x, training=True))
    grads = tape.gradient(loss, self.tuned_variables)
    self.optimizer.apply_gradients(zip(grads, self.tuned_variables))
    return {"loss": loss}
'''


def test_a_keras_train_step_on_its_own_property_narrowed_by_a_flag():
  found = scanned.in_project({"t.py": _TRAIN_STEP})
  assert _var_list_paths(found), found


def test_a_train_step_on_its_whole_property_is_silent():
  whole = _TRAIN_STEP.replace(
      "    if self.linear_probe:\n"
      "      return self.head.trainable_variables\n", "")
  found = scanned.in_project({"t.py": whole})
  assert not _var_list_paths(found), found


# The whole model's list empty in a mode that builds no real step
# (evaluation): nothing trains, nothing is left out; only a part gathered
# empty by a container leaves something out.
_MODE = '''
import tensorflow as tf

class Model(tf.Module):
  def __init__(self, training=True):
    self.training = training
    self.w = tf.Variable(tf.zeros([4, 1]))
    self.b = tf.Variable(tf.zeros([1]))

  def __call__(self, x):
    return tf.matmul(x, self.w) + self.b

  def params(self):
    if self.training:
      return [self.w, self.b]
    return []

model = Model()
opt = tf.keras.optimizers.Adam()

def step(x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x) - y) ** 2)
  grads = tape.gradient(loss, model.params())
  opt.apply_gradients(zip(grads, model.params()))
'''


def test_a_models_whole_list_empty_in_a_mode_that_trains_nothing_is_silent():
  found = scanned.in_project({"t.py": _MODE})
  assert not _var_list_paths(found), found


def test_the_same_mode_keeping_only_the_weights_is_found():
  kept = _MODE.replace("    return []\n", "    return [self.w]\n")
  found = scanned.in_project({"t.py": kept})
  assert _var_list_paths(found), found


# A student trained under a teacher of another class: the student's
# accessor returns all it has; the teacher only feeds the loss.
_TEACHER = '''
import tensorflow as tf

class Teacher(tf.Module):
  def __init__(self):
    self.w = tf.Variable(tf.ones([4, 1]))

  def __call__(self, x):
    return tf.matmul(x, self.w)

class Student(tf.Module):
  def __init__(self):
    self.w = tf.Variable(tf.zeros([4, 1]))
    self.b = tf.Variable(tf.zeros([1]))

  def __call__(self, x):
    return tf.matmul(x, self.w) + self.b

  def params(self):
    return [self.w, self.b]

teacher, student = Teacher(), Student()
opt = tf.keras.optimizers.Adam()

def distill(x):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((student(x) - teacher(x)) ** 2)
  grads = tape.gradient(loss, student.params())
  opt.apply_gradients(zip(grads, student.params()))
'''


def test_a_student_under_a_teacher_is_silent():
  found = scanned.in_project({"t.py": _TEACHER})
  assert not _var_list_paths(found), found
