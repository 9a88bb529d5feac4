"""`tfpartial scan`'s `var-list-filter` on lists part twenty-nine's
negatives showed to be the whole model: the scope object a class opens
around every variable it builds, kept on the object (`with
tf.variable_scope('weights') as param_scope: ...; self.param_scope =
param_scope`) and read back as `self.param_scope.name`
(hiwonjoon/ICML2019-TREX), or its name read inside that block (`self.scope
= tf.get_variable_scope().name`, ice-MineRL2019/gail-ppo-tf-minerl).
Twins that stay findings: the class builds a layer outside that scope,
which the filter leaves out."""

from tests.tools import scanned

_found = scanned.found

_AS_TARGET = """
import tensorflow as tf

class Model(object):
    def __init__(self, ob_dim, ac_dim):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.inp = tf.placeholder(tf.float32, [None, ob_dim])
            self.l = tf.placeholder(tf.float32, [None, ac_dim])
            with tf.variable_scope('weights') as param_scope:
                self.fc1 = tf.layers.Dense(64)
                self.fc2 = tf.layers.Dense(ac_dim)
            self.param_scope = param_scope
            EXTRA
            self.ac = self.fc2(tf.nn.relu(self.fc1(self.inp)))
            self.loss = tf.reduce_mean((self.ac - self.l) ** 2)
            self.optim = tf.train.AdamOptimizer(1e-4)
            self.update_op = self.optim.minimize(
                self.loss, var_list=self.parameters(train=True))
            self.saver = tf.train.Saver(var_list=self.parameters(train=False))

    def parameters(self, train=False):
        if train:
            return tf.trainable_variables(self.param_scope.name)
        else:
            return tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                     self.param_scope.name)
"""


def test_the_scope_opened_around_the_whole_model_kept_on_self_is_silent():
  assert _found(_AS_TARGET.replace("EXTRA", "pass")) == []


def test_a_layer_built_outside_the_kept_scope_is_found():
  code = _AS_TARGET.replace(
      "EXTRA", "self.emb = tf.get_variable('emb', [10, ob_dim])")
  assert _found(code) == [("var-list-filter", 24)]


_READ_INSIDE = """
import tensorflow as tf

class Policy_net:
    def __init__(self, name, obs_dim):
        with tf.variable_scope(name):
            self.obs = tf.placeholder(tf.float32, [None, obs_dim])
            with tf.variable_scope('policy_net'):
                layer_1 = tf.layers.dense(self.obs, 20, activation=tf.tanh)
                self.act_probs = tf.layers.dense(layer_1, 9)
            with tf.variable_scope('value_net'):
                layer_2 = tf.layers.dense(self.obs, 20, activation=tf.tanh)
                self.v_preds = tf.layers.dense(layer_2, 1)
            self.scope = tf.get_variable_scope().name
        EXTRA

    def get_trainable_variables(self):
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, self.scope)


class PPOTrain:
    def __init__(self, policy, old_policy):
        pi_trainable = policy.get_trainable_variables()
        old_pi_trainable = old_policy.get_trainable_variables()
        with tf.variable_scope('assign_op'):
            self.assign_ops = [tf.assign(o, p) for o, p in
                               zip(old_pi_trainable, pi_trainable)]
        loss = tf.reduce_mean(policy.v_preds)
        optimizer = tf.train.AdamOptimizer(1e-4)
        self.train_op = optimizer.minimize(loss, var_list=pi_trainable)
"""


def test_the_scope_name_read_inside_the_models_block_is_silent():
  assert _found(_READ_INSIDE.replace("EXTRA", "pass")) == []


def test_a_layer_built_after_the_models_block_is_found():
  code = _READ_INSIDE.replace(
      "EXTRA", "self.head = tf.layers.dense(self.obs, 3, name='head')")
  assert _found(code) == [("var-list-filter", 18)]


# zht007/tensorflow-practice's notebook: `[w, b]` trained by a loop, and
# the next model's variables made below it.
_LATER_MODEL = """
import numpy as np
import tensorflow as tf

w = tf.Variable(initial_value=0.)
b = tf.Variable(initial_value=0.)
BEFORE
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
for step in range(100):
    x_train, y_train = np.ones(3), np.ones(3)
    with tf.GradientTape() as tape:
        y_pred = w * x_train + b
        loss = tf.reduce_mean(tf.square(y_pred - y_train))
    grads = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(grads_and_vars=zip(grads, [w, b]))
    INSIDE

w_tfe = tf.Variable(np.random.uniform())
b_tfe = tf.Variable(np.random.uniform(1, 10))
"""


def test_variables_made_only_after_the_loop_are_silent():
  code = _LATER_MODEL.replace("BEFORE", "").replace("INSIDE", "")
  assert _found(code) == []


def test_a_variable_made_before_the_loop_and_left_out_is_found():
  code = _LATER_MODEL.replace(
      "BEFORE", "c = tf.Variable(initial_value=1.)").replace("INSIDE", "")
  assert _found(code) == [("var-list-filter", 14)]


def test_a_variable_the_loop_makes_after_the_step_is_found():
  # Its next turn trains `[w, b]` with `extra` made: left out.
  code = _LATER_MODEL.replace("BEFORE", "").replace(
      "INSIDE", "extra = tf.Variable(initial_value=1.)")
  assert _found(code) == [("var-list-filter", 14)]


# TingDang90/AudioCOVID19-FixMatch's model_network.py: a flag's layer
# count cuts the model's list in two, each at its own learning rate (the
# whole model trained at one rate in the other arm); cam-mobsys's
# model_train*.py cut at 18 for the second part: the band between stays.
_UTIL = """
import tensorflow as tf

def find_variables_in_scope(scope_name):
    return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope_name)
"""

_TWO_RATES = """
import tensorflow as tf
import util

FLAGS = {"trained_layers": 12, "is_diff": True, "lr1": 1e-5, "lr2": 1e-3}


def define_model(scope_name, features, labels):
    with tf.variable_scope(scope_name):
        net = tf.layers.dense(features, 128, name="vggish")
        logits = tf.layers.dense(net, 2, name="fc")
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    with tf.variable_scope("train"):
        global_step = tf.train.get_or_create_global_step()
        if FLAGS["is_diff"]:
            var1 = util.find_variables_in_scope(scope_name)[0: FLAGS["trained_layers"]]
            var2 = util.find_variables_in_scope(scope_name)[SECOND:]
            train_op1 = tf.train.AdamOptimizer(FLAGS["lr1"]).minimize(
                loss, var_list=var1, global_step=global_step, name="train_op1")
            train_op2 = tf.train.AdamOptimizer(FLAGS["lr2"]).minimize(
                loss, var_list=var2, global_step=global_step, name="train_op2")
            train_op = tf.group(train_op1, train_op2, name="train_op")
        ELSE
            optimizer = tf.train.AdamOptimizer(FLAGS["lr2"])
            optimizer.minimize(loss, global_step=global_step, name="train_op")
"""


def _two_rates(second, otherwise="else:"):
  code = _TWO_RATES.replace("SECOND", second).replace("ELSE", otherwise)
  return scanned.in_project({"util.py": _UTIL, "model.py": code})


def test_two_slices_meeting_at_a_flags_count_are_silent():
  assert _two_rates('FLAGS["trained_layers"]') == []


def test_two_slices_leaving_a_band_between_are_found():
  assert _two_rates("18") == [("var-list-filter", "model.py", 16)]


def test_slices_beside_a_whole_step_run_with_them_are_found():
  # Not the other arm: the whole model trained after the two rates'.
  code = 'FLAGS["trained_layers"]'
  assert _two_rates(code, "if True:") == [
      ("var-list-filter", "model.py", 16)]



def test_variables_a_subclass_makes_inside_the_bases_scope_are_silent():
  # AI-ON/Few-Shot-Music-Generation: `_build_graph` makes its variables
  # at the top of its body, run inside `with tf.variable_scope(self.name)`.
  code = """
import tensorflow as tf

class TFModel(object):
    def __init__(self, name):
        self.name = name
        with tf.variable_scope(self.name):
            self._global_step = tf.Variable(0, trainable=False)
            self._build_graph()

    def get_vars(self):
        return [v for v in tf.trainable_variables() if self.name in v.name]


class LSTM(TFModel):
    def _build_graph(self):
        self._x = tf.placeholder(tf.float32, [None, 8])
        w = tf.get_variable('w', [8, 1])
        self._loss = tf.reduce_mean(tf.matmul(self._x, w))
        opt = tf.train.AdamOptimizer(1e-3)
        self._train_op = opt.minimize(self._loss, var_list=self.get_vars())
"""
  assert _found(code) == []
