"""Part 28's flag that narrows a step's scope (t38-lists): a vendored DQN's
`build_train(..., transfer=...)` that, with the flag set, trains only the
output layers under the Q network's scope, the caller passing the flag
on; beside it, the look-alikes that must stay silent."""

import pytest

import scanned

_BUILD = '''
import tensorflow as tf

def build_train(q_func, obs, obs2, rew, optimizer, transfer=False,
                scope="deepq"):
  with tf.variable_scope(scope):
    q_t = q_func(obs, scope="q_func")
    if transfer:
      q_func_vars = tf.get_collection(
          tf.GraphKeys.GLOBAL_VARIABLES,
          scope=tf.get_variable_scope().name + "/q_func/action_value/transfer"
      ) + tf.get_collection(
          tf.GraphKeys.GLOBAL_VARIABLES,
          scope=tf.get_variable_scope().name + "/q_func/state_value/transfer")
    else:
      q_func_vars = tf.get_collection(
          tf.GraphKeys.GLOBAL_VARIABLES,
          scope=tf.get_variable_scope().name + "/q_func")
    q_tp1 = q_func(obs2, scope="target_q_func")
    target_vars = tf.get_collection(
        tf.GraphKeys.GLOBAL_VARIABLES,
        scope=tf.get_variable_scope().name + "/target_q_func")
    error = tf.reduce_mean(tf.square(rew + q_tp1 - q_t))
    optimize_expr = optimizer.minimize(error, var_list=q_func_vars)
    update = [t.assign(v) for v, t in zip(q_func_vars, target_vars)]
    return optimize_expr, update
'''

_LEARNER = '''
from deepq.build_graph import build_train

class Learner(object):
  def __init__(self, transfer=False):
    self.transfer = transfer

  def learn(self, q_func, obs, obs2, rew, optimizer):
    return build_train(q_func, obs, obs2, rew, optimizer,
                       transfer=self.transfer)

def run():
  Learner(transfer=True).learn(None, None, None, None, None)
'''

# Nobody sets the flag: every call trains the whole Q network.
_LEARNER_UNSET = _LEARNER.replace(
    ",\n                       transfer=self.transfer)", ")")

_LEARNER_FALSE = _LEARNER.replace("transfer=self.transfer",
                                  "transfer=False")

# The two arms choose two networks (an actor's, a critic's), neither
# inside the other.
_BUILD_OTHER_NETWORK = _BUILD.replace(
    '"/q_func/action_value/transfer"', '"/actor"').replace(
        '"/q_func/state_value/transfer"', '"/actor_head"')

# The baselines original: no flag.
_BUILD_PLAIN = '''
import tensorflow as tf

def build_train(q_func, obs, obs2, rew, optimizer, scope="deepq"):
  with tf.variable_scope(scope):
    q_t = q_func(obs, scope="q_func")
    q_func_vars = tf.get_collection(
        tf.GraphKeys.GLOBAL_VARIABLES,
        scope=tf.get_variable_scope().name + "/q_func")
    q_tp1 = q_func(obs2, scope="target_q_func")
    target_vars = tf.get_collection(
        tf.GraphKeys.GLOBAL_VARIABLES,
        scope=tf.get_variable_scope().name + "/target_q_func")
    error = tf.reduce_mean(tf.square(rew + q_tp1 - q_t))
    optimize_expr = optimizer.minimize(error, var_list=q_func_vars)
    update = [t.assign(v) for v, t in zip(q_func_vars, target_vars)]
    return optimize_expr, update
'''


def _project(build, learner):
  return [(idiom, path, line) for idiom, path, line in scanned.in_project(
      {"deepq/build_graph.py": build, "deepq/learner.py": learner})]


CASES = [
    pytest.param(_BUILD, _LEARNER,
                 [("var-list-filter", "deepq/build_graph.py", 9)],
                 id="transfer"),
    pytest.param(_BUILD, _LEARNER_UNSET, [], id="flag-unset"),
    pytest.param(_BUILD, _LEARNER_FALSE, [], id="flag-false"),
    pytest.param(_BUILD_OTHER_NETWORK, _LEARNER, [], id="other-network"),
    pytest.param(_BUILD_PLAIN, _LEARNER_UNSET, [], id="plain-dqn"),
]


@pytest.mark.parametrize("build, learner, expected", CASES)
def test_narrowed_arm(build, learner, expected):
  assert _project(build, learner) == expected
