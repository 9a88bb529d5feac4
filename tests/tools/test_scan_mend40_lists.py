"""`tfpartial scan`'s `var-list-filter` after the review of t55-lists
(issue 30):

- the rule that read a flag's rebinding as bypassing the network a
  complement leaves out (`_bypassed`) is removed: a flag that only adds
  dropout to the network's output, an output read before the `if`, or
  an unrelated function opening the same scope under the same flag text
  hid the complement's real freeze;
- a class that makes a variable outside its scopes with
  `trainable=False` (a global step, a learning rate) still has its
  scopes as its whole object, and that question is read once per class;
- a counter test joined by `and` to a test of the counter through `%`
  picks no part of the run: the arms alternate side by side."""

import sys

import scanned

# A network pre-trained alone for part of the run (part thirty-four's
# tensor holography), no flag bypassing it; `SETUP` is the end of
# `_setup_ddpm`, `MORE` more code below the class, `LOOP` the loop body.
_HOLO = """
import tensorflow as tf


class Holo(object):
    def _build_vars(self, n):
        return {i: tf.Variable(tf.random.normal([3, 3, 4, 4])) for i in range(n)}

    def _build_graph(self, x, model_vars):
        for i in model_vars:
            x = tf.nn.relu(tf.nn.conv2d(x, model_vars[i], 1, 'SAME'))
        return x

    def _setup_train(self, x):
        self.model_vars = self._build_vars(4)
        return self._build_graph(x, self.model_vars)

    def _setup_ddpm(self, out):
        shifted = tf.roll(out, 1, 2)
        with tf.compat.v1.variable_scope("ddpm"):
            self.ddpm_vars = self._build_vars(2)
            altered = self._build_graph(shifted, self.ddpm_vars)
SETUP

    def train(self, x, y):
        out = self._setup_train(x)
        loss = tf.reduce_mean(tf.square(out - y))
        shifted, altered = self._setup_ddpm(out)
        loss_s2 = tf.reduce_mean(tf.square(altered - y))
        loss_identity = tf.reduce_mean(tf.square(altered - shifted))
        main_vars = [v for v in tf.compat.v1.global_variables() if not v.name.startswith('ddpm')]
        ddpm_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith('ddpm')]
        opt = tf.compat.v1.train.AdamOptimizer(1e-4)
        train_op = opt.minimize(loss=loss)
        train_identity_op = opt.minimize(loss=loss_identity, var_list=ddpm_vars)
        train_full_op = opt.minimize(loss=loss_s2)
        train_main_op = opt.minimize(loss=loss_s2, var_list=main_vars)
        for epoch in range(self.epochs):
            for step in range(100):
LOOP
MORE
"""

_RETURN = "        return shifted, altered"

_PHASES = """\
                if epoch < self.start:
                    self.sess.run(train_op)
                elif epoch < self.start + 50 and not self.params["bypass"]:
                    self.sess.run(train_identity_op)
                elif not self.params["bypass"]:
                    self.sess.run(train_full_op)
                elif self.params["bypass"]:
                    self.sess.run(train_main_op)"""


def _holo(setup=_RETURN, loop=_PHASES, more=""):
  return _HOLO.replace("SETUP", setup).replace("LOOP", loop).replace(
      "MORE", more)


def _line(code, text):
  return code.splitlines().index(text) + 1


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def _both(code):
  """The two filters' lines: `main_vars`'s step leaves out `ddpm`, which
  its loss reads; `ddpm_vars`'s leaves out the main CNN."""
  lines = [line for line in code.splitlines()
           if line.lstrip().startswith(("main_vars = ", "ddpm_vars = "))]
  return [("var-list-filter", _line(code, line)) for line in lines]


def test_a_flag_that_only_adds_dropout_bypasses_nothing():
  # byp1: the network still feeds `loss_s2` under the flag.
  code = _holo(
      '        if self.params["bypass"]:\n'
      '            altered = tf.nn.dropout(altered, rate=0.1)\n' + _RETURN)
  assert _found(code) == _both(code)


def test_an_output_read_before_the_flag_still_feeds_the_loss():
  # byp3: `aux` holds the network's output before it is rebound.
  code = _holo(
      '        aux = altered * 2.0\n'
      '        if self.params["bypass"]:\n'
      '            altered = shifted\n'
      '        return shifted, altered + aux')
  assert _found(code) == _both(code)


def test_an_unrelated_function_opening_the_scope_bypasses_nothing():
  # byp4: the class has no bypass; another function opens `ddpm` and
  # rebinds its output under the same flag text.
  code = _holo(more=(
      "\n\ndef unrelated(x, params):\n"
      '    with tf.compat.v1.variable_scope("ddpm"):\n'
      "        y = tf.layers.dense(x, 4)\n"
      '    if self.params["bypass"]:\n'
      "        y = x\n"
      "    return y\n"))
  assert _found(code) == _both(code)


def test_the_pre_trained_network_without_a_flag_is_found():
  code = _holo()
  assert _found(code) == _both(code)


# Steps alternating by a counter test joined to a parity test.
_ALTERNATING = """\
                if TEST:
                    self.sess.run(train_identity_op)
                else:
                    self.sess.run(train_main_op)"""


def test_a_counter_test_joined_to_a_parity_test_alternates():
  # par2.
  code = _holo(loop=_ALTERNATING.replace("TEST", "epoch > 0 and step % 2 == 0"))
  assert _found(code) == []


def test_an_always_true_counter_test_joined_to_a_parity_test_alternates():
  # par3.
  code = _holo(loop=_ALTERNATING.replace("TEST", "step >= 0 and step % 2 == 0"))
  assert _found(code) == []


def test_a_critic_schedule_alternates():
  code = _holo(loop=_ALTERNATING.replace(
      "TEST", "it > 0 and it % self.n_critic == 0")).replace(
          "for step in range(100):", "for it in range(100):")
  assert _found(code) == []


def test_a_parity_test_alone_alternates():
  # par1: silent before the round as after.
  code = _holo(loop=_ALTERNATING.replace("TEST", "step % 2 == 0"))
  assert _found(code) == []


# An rllab-style policy whose `get_params_internal` keeps the scopes it
# names for its parts (`EXTRA` one more line in `__init__`, outside them;
# `STEPS` more methods).
_POLICY = {"utils.py": """\
    def add_param(spec, shape, layer_name, name):
      with tf.variable_scope(layer_name):
        return tf.get_variable(name, shape, initializer=spec)

    def make_param_layer(num_units, name='', param=None):
      return add_param(param, (num_units,), layer_name=name, name='param')
    """, "opt.py": """\
    class Optimizer(object):
      def update_opt(self, f, target):
        params = target.get_params(trainable=True)
        return tf.gradients(f, xs=params)
    """, "policy.py": """\
    from utils import make_param_layer

    class Policy(object):
      def __init__(self, obs_dim, action_dim, adaptive_std=False):
        self._cached_params = {}
        self.mean_params = self.create_mlp("mean_network", (obs_dim, 8))
        if adaptive_std:
          raise NotImplementedError("never built")
          self.std = self.create_mlp("std_network", (obs_dim, 8))
        self.std_params = make_param_layer(action_dim, name="output_std")
        EXTRA

      def create_mlp(self, name, sizes):
        with tf.variable_scope(name):
          return [tf.get_variable("W%d" % i, s) for i, s in enumerate(sizes)]

      def get_params(self, **tags):
        key = tuple(sorted(tags.items()))
        if key not in self._cached_params:
          self._cached_params[key] = self.get_params_internal(**tags)
        return self._cached_params[key]

      def get_params_internal(self, **tags):
        params = tf.trainable_variables()
        params = [p for p in params if p.name.startswith('mean_network')
                  or p.name.startswith('output_std')]
        params = [p for p in params if 'Adam' not in p.name]
        return params
    STEPS"""}

# The line of the policy's filter.
_FILTER = 25


def _policy(extra="pass", steps=""):
  return {**_POLICY, "policy.py": _POLICY["policy.py"].replace(
      "EXTRA", extra).replace("STEPS", steps)}


def _in_policy(files):
  return [(idiom, path, line) for idiom, path, line in
          scanned.in_project(files) if idiom == "var-list-filter"]


def test_the_policy_alone_is_silent():
  assert _in_policy(_policy()) == []


def test_a_policy_with_an_untrainable_global_step_is_silent():
  assert _in_policy(_policy(
      'self.global_step = tf.Variable(0, trainable=False, name="global_step")'
  )) == []


def test_a_policy_with_an_untrainable_learning_rate_is_silent():
  assert _in_policy(_policy(
      'self.lr = tf.get_variable("lr", [], trainable=False)')) == []


def test_a_policy_with_a_global_step_given_positionally_is_silent():
  assert _in_policy(_policy("self.step = tf.Variable(0, False)")) == []


def test_a_policy_with_a_trainable_variable_outside_its_scopes_is_found():
  assert _in_policy(_policy(
      "self.temperature = tf.Variable(1.0, name='temperature')")) == [
          ("var-list-filter", "policy.py", _FILTER)]


def _reads(n):
  """How often the policy's methods are read for makers outside its
  scopes, in a scan where `n` steps of another class train its filter."""
  steps = "".join(
      f"\n      def update{i}(self, f, target):\n"
      f"        return tf.train.AdamOptimizer(0.1).minimize("
      f"f, var_list=target.get_params_internal())\n" for i in range(n))
  files = {**_policy(), "opt.py": _POLICY["opt.py"] + steps}
  count = [0]

  def profile(frame, event, arg):
    del arg
    if event == "call" and frame.f_code.co_name == "_self_calls" and (
        frame.f_code.co_filename.endswith("_own_scopes.py")):
      count[0] += 1

  sys.setprofile(profile)
  try:
    scanned.in_project(files)
  finally:
    sys.setprofile(None)
  return count[0]


def test_a_class_is_read_for_unscoped_makers_once_whatever_its_steps():
  small, large = _reads(5), _reads(20)
  assert 0 < small and large <= 2 * small, (small, large)
