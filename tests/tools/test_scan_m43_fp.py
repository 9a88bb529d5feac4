"""The mend of part thirty-seven's silencings (t60-fp), each case failing
on that branch.

- A re-mask from `on_train_end` stays reported, in a plain trainer that
  runs it after each step and in a Keras callback alike (the final read
  of the round took the silencing back: `fit` called again in a loop
  trains the masked weights on), as does a helper run from `on_test_end`.
- A gradient is only shown when the call showing it is a statement of
  its own that returns nothing usable (`print`, `tf.print`, a
  `tf.summary` op): `tf.Print` returns its input, which may be applied.
- The per-scope step helper's calls are read as before part
  thirty-seven: a head-only step called from a script that names no sink
  stays found, whether or not another call trains another head, and a
  call of another object's `train` through a name bound by `global`
  counts for nothing.
- A scope filter returned by a helper given `self.scope` is a scope
  filter, whatever the function opens that scope around: a network built
  through the project's own builder beside a bare variable stays found.
"""

import pytest

import scanned
from test_scan_t60_fp import _CALLBACK, _LOOKED_AT, _remasks


# A trainer (no Keras callback) whose method `on_train_end` zeroes a
# fixed mask of each kernel through a helper; its loop of steps calls it after each step.
_TRAINER = '''
import numpy as np
import tensorflow as tf

class Loop(object):
    def __init__(self, net, keep):
        self.net = net
        self.keep = keep
        self.opt = tf.keras.optimizers.SGD(0.1)

    def cut(self, weight):
        weight.assign(weight.read_value() * self.keep)

    def on_train_end(self):
        for layer in self.net.layers:
            self.cut(layer.kernel)

    def go(self, x, y):
        for _ in range(50):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(self.net(x) - y))
            variables = self.net.trainable_variables
            self.opt.apply_gradients(zip(tape.gradient(loss, variables),
                                         variables))
            self.on_train_end()

net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
keep = np.ones((2, 2), np.float32)
keep[1, 0] = 0.0
Loop(net, keep).go(np.ones((4, 2), np.float32), np.ones((4, 2), np.float32))
'''


def test_a_plain_trainers_on_train_end_run_after_each_step_stays_found():
  assert _remasks(_TRAINER) != []


def test_a_callbacks_on_train_end_the_project_calls_in_its_loop_stays_found():
  code = _CALLBACK.replace("HOOK", "on_train_end") + '''
masker = Masker(keep)
masker.set_model(model)
for epoch in range(3):
    model.train_on_batch(x, y)
    masker.on_train_end()
'''
  assert _remasks(code) != []


def test_a_helper_run_from_on_test_end_stays_found():
  code = _CALLBACK.replace("HOOK", "on_test_end").replace(
      "epochs=3,", "epochs=3, validation_data=(x, y),")
  assert _remasks(code) == [12]


@pytest.mark.parametrize("base, imports", [
    ("tf.keras.callbacks.Callback", ""),
    ("Callback", "from tensorflow.keras.callbacks import Callback\n"),
    ("callbacks.Callback", "from tensorflow.keras import callbacks\n")])
def test_a_keras_callbacks_on_train_end_through_a_project_base_is_found(
    base, imports):
  code = imports + _CALLBACK.replace("HOOK", "on_train_end").replace(
      "class Masker(tf.keras.callbacks.Callback):",
      f"class Quiet({base}):\n    pass\n\nclass Masker(Quiet):")
  assert _remasks(code) != []


def _filters(code):
  return [line for idiom, line in scanned.found(code)
          if idiom == "var-list-filter"]


def test_a_gradient_through_tf_print_bound_and_applied_stays_found():
  look = ("grads = tf.Print(tape.gradient(loss, [a, b]), [loss])\n"
          "for g, v in zip(grads, [a, b]):\n"
          "    v.assign_sub(0.1 * g)")
  assert _filters(_LOOKED_AT.replace("LOOK", look)) != []


# A module of helpers: a trunk and two heads under scopes, and a step
# training the scope it is given for the loss it is given.
_PARTS = '''
import tensorflow as tf

def net(x):
    t = tf.layers.dense(x, 4, name="trunk/d")
    return (tf.layers.dense(t, 1, name="left/d"),
            tf.layers.dense(t, 1, name="right/d"))

def step(loss, counter, part):
    chosen = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, part)
    return tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=counter, var_list=chosen)
'''

# A script that restores the trunk and trains the heads, each by a loss
# of its own; it names no sink.
_HEADS = '''
import tensorflow as tf
import parts as p

def main():
    x = tf.placeholder(tf.float32, [None, 3])
    counter = tf.train.get_or_create_global_step()
    l, r = p.net(x)
    one = p.step(tf.reduce_mean(l), counter, "left")
    two = p.step(tf.reduce_mean(r ** 2), counter, "right")
    restore = tf.train.Saver(tf.get_collection(
        tf.GraphKeys.GLOBAL_VARIABLES, "trunk"))
    with tf.train.MonitoredTrainingSession() as sess:
        restore.restore(sess, "trunk.ckpt")
        while not sess.should_stop():
            sess.run([one, two])

main()
'''


def test_heads_trained_per_scope_on_a_restored_trunk_stay_found():
  assert [(i, p) for i, p, _ in scanned.in_project(
      {"parts.py": _PARTS, "heads.py": _HEADS})
          if i == "var-list-filter"] == [("var-list-filter", "parts.py")]


def test_another_objects_train_through_a_global_name_counts_for_nothing():
  one_head = _HEADS.replace(
      '    two = p.step(tf.reduce_mean(r ** 2), counter, "right")\n', "")
  one_head = one_head.replace("sess.run([one, two])", "sess.run(one)")
  other = '''
def setup(build):
    global learner
    learner = build()

def again(cost, n):
    learner.step(cost, n, "policy")
'''
  assert [(i, p) for i, p, _ in scanned.in_project(
      {"parts.py": _PARTS, "heads.py": one_head, "other.py": other})
          if i == "var-list-filter"] == [("var-list-filter", "parts.py")]


# A helper returning a scope's variables, and a class opening its own
# scope around a bare variable, then running a network the project's
# builder makes on it, and training only that scope.
_SCOPE_VARS = '''
import tensorflow as tf

def within(scope):
    return tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope=scope)
'''

_PREFIXED = '''
import tensorflow as tf
import scopes

def body(x):
    return tf.layers.dense(tf.layers.dense(x, 4, name="b0"), 1, name="b1")

class Prefix(object):
    def __init__(self, scope="prefix"):
        self.scope = scope
        self.x = tf.placeholder(tf.float32, [None, 4])
        with tf.variable_scope(self.scope):
            shift = tf.get_variable("shift", [1, 4])
        self.loss = tf.reduce_mean(body(self.x + shift))
        self.op = tf.train.AdamOptimizer(0.1).minimize(
            self.loss, var_list=scopes.within(self.scope))

    def run(self, sess):
        for _ in range(10):
            sess.run(self.op)

Prefix().run(tf.Session())
'''


def test_a_network_built_through_the_projects_builder_stays_found():
  assert [(i, p) for i, p, _ in scanned.in_project(
      {"scopes.py": _SCOPE_VARS, "prefixed.py": _PREFIXED})
          if i == "var-list-filter"] == [("var-list-filter", "scopes.py")]
