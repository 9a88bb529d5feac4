"""Part sixteen's hand-made lists (t16-c): each form with the findings it
must give, and beside it a look-alike that must stay silent."""

import pytest

import scanned

_found = scanned.found
_in_project = scanned.in_project

# One arm applies some of the pairs the other applies (`finetune_all`).
_FEWER_PAIRS = '''
import tensorflow as tf

class Hash:
  def __init__(self, finetune_all):
    self.finetune_all = finetune_all
    self.layers = [tf.Variable(tf.zeros([3])), tf.Variable(tf.zeros([3]))]
    self.last = [tf.Variable(tf.zeros([3])), tf.Variable(tf.zeros([3]))]

  def train_op(self, loss):
    opt = tf.train.MomentumOptimizer(learning_rate=0.1, momentum=0.9)
    gv = opt.compute_gradients(loss, self.layers + self.last)
    fcgrad, _ = gv[-2]
    fbgrad, _ = gv[-1]
    if self.finetune_all:
      return opt.apply_gradients([(gv[0][0], self.layers[0]),
                                  (gv[1][0] * 2, self.layers[1]),
                                  (fcgrad * 10, self.last[0]),
                                  (fbgrad * 20, self.last[1])])
    else:
      return opt.apply_gradients([(fcgrad * 10, self.last[0]),
                                  (fbgrad * 20, self.last[1])])
'''

# Each arm applies every variable (the last layer at ten times the rate).
_SAME_PAIRS = _FEWER_PAIRS.replace(
    "      return opt.apply_gradients([(fcgrad * 10, self.last[0]),\n"
    "                                  (fbgrad * 20, self.last[1])])\n",
    "      return opt.apply_gradients([(gv[0][0], self.layers[0]),\n"
    "                                  (gv[1][0], self.layers[1]),\n"
    "                                  (fcgrad, self.last[0]),\n"
    "                                  (fbgrad, self.last[1])])\n")

# The options choose which modules' gradients are applied.
_GATHERED = '''
import tensorflow as tf

class Pipeline:
  def build_optim(self, config, losses, params):
    optim = tf.train.AdamOptimizer(1e-3)
    gv_kp = optim.compute_gradients(losses["joint"], var_list=params["kp"])
    gv_ori = optim.compute_gradients(losses["ori"], var_list=params["ori"])
    gv_desc = optim.compute_gradients(losses["joint"],
                                      var_list=params["desc"])
    grads_and_vars = []
    if 'kp' in config.finetune.split('+'):
      grads_and_vars += gv_kp
    if 'ori' in config.finetune.split('+'):
      grads_and_vars += gv_ori
    if 'desc' in config.finetune.split('+'):
      grads_and_vars += gv_desc
    self.optim = optim.apply_gradients(grads_and_vars)
'''

# Parts added where they exist: every part there trains.
_GATHERED_PRESENT = _GATHERED.replace(
    "'kp' in config.finetune.split('+')", "gv_kp is not None").replace(
        "'ori' in config.finetune.split('+')", "gv_ori is not None").replace(
            "'desc' in config.finetune.split('+')", "gv_desc is not None")

# A stack trained layer by layer: the newest layer alone, then all.
_NEWEST_FIRST = '''
import tensorflow as tf

def setup_training(model, x_, xhs_, init_lr, lrs):
  stages = []
  train_vars = []
  for t in range(model.T):
    loss_ = tf.nn.l2_loss(xhs_[t + 1] - x_)
    var_list = tuple([var for var in model.vars_in_layer[t]
                      if var not in train_vars])
    op_ = tf.train.AdamOptimizer(init_lr).minimize(loss_, var_list=var_list)
    stages.append((loss_, op_))
    for var in var_list:
      train_vars.append(var)
    for lr in lrs:
      op_ = tf.train.AdamOptimizer(lr).minimize(loss_, var_list=train_vars)
      stages.append((loss_, op_))
  return stages
'''

# Each agent trains its own list for its own loss: nothing gathered.
_EACH_OWN = '''
import tensorflow as tf

def setup_training(agents, losses, init_lr):
  ops = []
  for t in range(len(agents)):
    loss_ = losses[t]
    var_list = tuple([var for var in agents[t].variables])
    ops.append(tf.train.AdamOptimizer(init_lr).minimize(
        loss_, var_list=var_list))
  return ops
'''

# Variables looked up by name in a reuse scope: the head alone trains.
_LOOKED_UP = '''
import tensorflow as tf

def build_model(x):
  with tf.variable_scope('model'):
    h = tf.layers.dense(x, 10, name='fc1')
    h = tf.layers.dense(h, 10, name='fc2')
    return tf.layers.dense(h, 10, name='fc3')

def train(x, y):
  out = build_model(x)
  loss = tf.reduce_mean((out - y) ** 2)
  optimizer = tf.train.AdamOptimizer(0.1)
  with tf.variable_scope(tf.get_variable_scope(), reuse=True):
    train_vars = [tf.get_variable('model/fc3/kernel'),
                  tf.get_variable('model/fc3/bias')]
  grads = optimizer.compute_gradients(loss, var_list=train_vars)
  return optimizer.apply_gradients(grads)
'''

# Variables created where they are listed: the list is the model.
_CREATED = _LOOKED_UP.replace(
    "[tf.get_variable('model/fc3/kernel'),",
    "[tf.get_variable('model/fc3/kernel', shape=[10, 10]),").replace(
        "tf.get_variable('model/fc3/bias')]",
        "tf.get_variable('model/fc3/bias', shape=[10])]")

# A model module's `get_train_vars()`, called through the module chosen.
_MODEL_MODULE = '''
import tensorflow as tf

def get_train_vars():
  with tf.variable_scope(tf.get_variable_scope(), reuse=True):
    train_vars = [tf.get_variable('model/fc3/weights'),
                  tf.get_variable('model/fc3/biases')]
  return train_vars

def build_model(x):
  with tf.variable_scope('model'):
    h = tf.layers.dense(x, 10, name='fc1')
    return tf.layers.dense(h, 10, name='fc3')
'''

_WHOLE_MODULE = '''
import tensorflow as tf

def get_train_vars():
  return None

def build_model(x):
  with tf.variable_scope('model'):
    return tf.layers.dense(x, 10, name='fc3')
'''

_MANAGER = '''
import tensorflow as tf
import models.pretrained
import models.whole

models = {'pretrained': models.pretrained, 'whole': models.whole}

class Manager(object):
  def __init__(self, model):
    self.model = models[model]

  def train(self, x, y):
    out = self.model.build_model(x)
    loss = tf.reduce_mean((out - y) ** 2)
    optimizer = tf.train.AdamOptimizer(0.1)
    grads = optimizer.compute_gradients(
        loss, var_list=self.model.get_train_vars())
    return optimizer.apply_gradients(grads)
'''

# The backbone's variables from the first whose name matches on, read
# through an object passed in.
_SLICED = '''
import sonnet as snt
import tensorflow as tf

class Backbone(snt.AbstractModule):
  def __init__(self, config):
    super().__init__(name='backbone')
    self._config = config

  def _build(self, x):
    return tf.layers.dense(tf.layers.dense(x, 10), 10)

  def get_trainable_vars(self):
    all_variables = snt.get_variables_in_module(self)
    fine_tune_from = self._config.get('fine_tune_from')
    if fine_tune_from is None:
      return all_variables
    var_iter = enumerate(v.name for v in all_variables)
    index = next(i for i, name in var_iter if fine_tune_from in name)
    return all_variables[index:]

def train(backbone, x, y):
  out = backbone(x)
  loss = tf.reduce_mean((out - y) ** 2)
  return tf.train.AdamOptimizer(0.1).minimize(
      loss, var_list=backbone.get_trainable_vars())
'''

# Cut in the middle to average two halves: no name chooses the cut.
_SLICED_HALF = _SLICED.replace(
    "    var_iter = enumerate(v.name for v in all_variables)\n"
    "    index = next(i for i, name in var_iter if fine_tune_from in name)\n",
    "    index = len(all_variables) // 2\n")

# slim's `filter_variables` with its list named `var_list=`.
_FILTER_KEYWORD = '''
import tensorflow as tf

class Model:
  def __init__(self, c):
    self._config = c

  def build(self, x, y):
    with tf.variable_scope('Model'):
      out = tf.layers.dense(x, 3)
    loss = tf.reduce_mean((out - y) ** 2)
    tvars = self._get_trainable_vars()
    return tf.contrib.slim.learning.create_train_op(
        loss, tf.train.AdamOptimizer(0.1), variables_to_train=tvars)

  def _get_trainable_vars(self):
    c = self._config
    tvars = tf.trainable_variables()
    if c.freeze_scopes:
      exc_scopes = [sc.strip() for sc in c.freeze_scopes.split(',')]
      tvars = tf.contrib.framework.filter_variables(
          var_list=tvars, include_patterns='Model',
          exclude_patterns=exc_scopes, reg_search=True)
    return tvars
'''

# No patterns: nothing filtered.
_FILTER_NOTHING = _FILTER_KEYWORD.replace(
    "          var_list=tvars, include_patterns='Model',\n"
    "          exclude_patterns=exc_scopes, reg_search=True)\n",
    "          var_list=tvars)\n")

# A `self.` list filled only with the layers a configured list names.
_FILLED_BY_NAME = '''
import tensorflow as tf

class Model:
  def __init__(self, params, layers):
    self.params = params
    self.variables_to_train = []
    h = self.x = tf.placeholder(tf.float32, [None, 4])
    for layer in layers:
      h = self.dense(layer.name, h)
    loss = tf.reduce_mean(h ** 2)
    gradients = tf.gradients(loss, self.variables_to_train)
    opt = tf.train.GradientDescentOptimizer(0.1)
    self.train_op = opt.apply_gradients(zip(gradients, self.variables_to_train))

  def dense(self, name, h):
    W = tf.Variable(tf.zeros([4, 4]), name=name + '_W')
    b = tf.Variable(tf.zeros([4]), name=name + '_b')
    self.add_to_collections(name, W, b)
    return tf.matmul(h, W) + b

  def add_to_collections(self, name, W, b):
    if name in self.params.layers_to_train:
      self.variables_to_train.append(W)
      self.variables_to_train.append(b)
'''

# Every layer's variables are added: the list is the model.
_FILLED_ALL = _FILLED_BY_NAME.replace(
    "    if name in self.params.layers_to_train:\n"
    "      self.variables_to_train.append(W)\n"
    "      self.variables_to_train.append(b)\n",
    "    self.variables_to_train.append(W)\n"
    "    self.variables_to_train.append(b)\n")

CASES = [
    pytest.param(_FEWER_PAIRS, [("var-list-filter", 21)], id="fewer-pairs"),
    pytest.param(_SAME_PAIRS, [], id="same-pairs"),
    pytest.param(_GATHERED, [("var-list-filter", 11)], id="gathered"),
    pytest.param(_GATHERED_PRESENT, [], id="gathered-present"),
    pytest.param(_NEWEST_FIRST, [("var-list-filter", 9)], id="newest-first"),
    pytest.param(_EACH_OWN, [], id="each-own"),
    pytest.param(_LOOKED_UP, [("var-list-filter", 15)], id="looked-up"),
    pytest.param(_CREATED, [], id="created"),
    pytest.param(_SLICED, [("var-list-filter", 20)], id="sliced-at-name"),
    pytest.param(_SLICED_HALF, [], id="sliced-half"),
    pytest.param(_FILLED_BY_NAME, [("var-list-filter", 23)],
                 id="filled-by-name"),
    pytest.param(_FILLED_ALL, [], id="filled-all"),
    pytest.param(_FILTER_KEYWORD, [("var-list-filter", 21)],
                 id="filter-variables-keyword"),
    pytest.param(_FILTER_NOTHING, [], id="filter-variables-nothing"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_lists_sixteen_c(source, expected):
  assert _found(source) == expected


def test_model_module_chosen_by_name():
  """A model module's looked-up list, trained through the module a dict
  chooses, is found in that module; the module returning None is not."""
  found = _in_project({"models/__init__.py": "",
                       "models/pretrained.py": _MODEL_MODULE,
                       "models/whole.py": _WHOLE_MODULE,
                       "manager.py": _MANAGER})
  assert found == [("var-list-filter", "models/pretrained.py", 6)]
