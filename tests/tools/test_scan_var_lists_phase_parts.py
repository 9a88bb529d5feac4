"""`tfpartial scan`'s `var-list-filter` on a network appended to a
trained one and pre-trained alone for a part of the run (part
thirty-four's tensor holography: stage one trains the main CNN over
every variable, then for fifty epochs an identity step trains only the
`ddpm` network, whose input is the main CNN's output, then everything
trains again). The class builds the main CNN outside any scope, so the
filter by `ddpm` is not the class's whole object; the two steps of the
filter and its complement run in different parts of the run (an ordered
test of the epoch), so they are no partition trained side by side.
The complement's step, run only where a flag rebinds the `ddpm`
network's output, is found as well: no rule reads what such a flag
rebinds (`_bypassed`, removed, hid real freezes). Silent twins: the
identity step never fetched (no counter test runs the two steps apart),
the two parts trained side by side in one loop (two learning rates) or
alternating by parity (a GAN's halves), and a policy class that builds
every variable in its scope."""

import scanned

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
        if self.params["bypass"]:
            altered = shifted
        return shifted, altered

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
        train_identity_op = opt.minimize(loss=loss_identity, var_list=ddpm_vars) if not self.params["bypass"] else None
        train_full_op = opt.minimize(loss=loss_s2)
        train_main_op = opt.minimize(loss=loss_s2, var_list=main_vars)
        for epoch in range(self.epochs):
            for step in range(100):
"""

_PHASES = """\
                if epoch < self.start:
                    self.sess.run(train_op)
                elif epoch < self.start + 50 and not self.params["bypass"]:
                    self.sess.run(train_identity_op)
                elif not self.params["bypass"]:
                    self.sess.run(train_full_op)
                elif self.params["bypass"]:
                    self.sess.run(train_main_op)
"""

# The line of `ddpm_vars = ...`.
_DDPM = _HOLO.count("\n") - 7


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def test_a_network_pre_trained_alone_for_part_of_the_run_is_found():
  # `main_vars`'s step too: it runs only where the flag rebinds `ddpm`'s
  # output, which scan does not read (a known limit).
  assert _found(_HOLO + _PHASES) == [("var-list-filter", _DDPM - 1),
                                     ("var-list-filter", _DDPM)]


def test_a_filter_and_its_complement_never_run_apart_are_a_partition():
  # The same run without fetching the `ddpm` step: no ordered counter
  # test chooses the two steps apart (`_scheduled.chosen_apart`), so
  # `_partition` reads the filter and its complement as one partition.
  code = _HOLO + _PHASES.replace("self.sess.run(train_identity_op)",
                                 "pass")
  assert _found(code) == []


def test_both_parts_trained_side_by_side_are_silent():
  code = _HOLO + (
      "                self.sess.run(train_identity_op)\n"
      "                self.sess.run(train_main_op)\n")
  assert _found(code) == []


def test_both_parts_alternating_by_parity_are_silent():
  code = _HOLO + (
      "                if step % 2 == 0:\n"
      "                    self.sess.run(train_identity_op)\n"
      "                else:\n"
      "                    self.sess.run(train_main_op)\n")
  assert _found(code) == []


def test_the_main_network_in_a_scope_of_its_own_leaves_the_finding():
  # The class's scopes are then `main` and `ddpm`: the filter by `ddpm`
  # keeps one of two networks, still the pre-training step's finding
  # (and `main_vars`'s, as above).
  code = (_HOLO + _PHASES).replace(
      "        self.model_vars = self._build_vars(4)\n"
      "        return self._build_graph(x, self.model_vars)\n",
      "        with tf.compat.v1.variable_scope('main'):\n"
      "            self.model_vars = self._build_vars(4)\n"
      "            return self._build_graph(x, self.model_vars)\n")
  assert _found(code) == [("var-list-filter", _DDPM),
                          ("var-list-filter", _DDPM + 1)]


_POLICY = """
import tensorflow as tf


class Policy(object):
    def _layer(self, x, n, name):
        w = tf.get_variable(name + '_w', [x.get_shape()[-1], n])
        return tf.matmul(x, w)

    def build(self, obs):
        with tf.variable_scope('policy'):
            h = tf.nn.relu(self._layer(obs, 64, 'h0'))
            self.out = self._layer(h, 4, 'out')

    def train(self, obs, adv):
        self.build(obs)
        loss = -tf.reduce_mean(self.out * adv)
        params = [v for v in tf.trainable_variables() if v.name.startswith('policy')]
        self.op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=params)
        for it in range(10):
            self.sess.run(self.op)
"""


def test_a_policy_whose_helper_makes_variables_only_in_its_scope_is_silent():
  assert _found(_POLICY) == []


def test_the_complement_is_found_where_no_flag_bypasses_the_network():
  # `ddpm` then feeds `loss_s2` in every run: `main_vars`'s step holds it.
  code = (_HOLO + _PHASES).replace(
      '        if self.params["bypass"]:\n'
      '            altered = shifted\n', "")
  assert _found(code) == [("var-list-filter", _DDPM - 3),
                          ("var-list-filter", _DDPM - 2)]
