"""`tfpartial scan` on the classes of real code it was measured on: each
(source, expected) pair is synthetic, written in the shape of what the
public files do (docs/guides/scan.md, "How precise it is"): the forms of
hand-made freezing it must find, and the training code around them that
freezes nothing (GANs, actor-critics, TRPO, target networks, scheduled
sampling, straight-through estimators, soft updates, a library's tests).
"""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _found(files):
  if isinstance(files, str):
    files = {"t.py": files}
  sources = [_files.Source(path, textwrap.dedent(text))
             for path, text in files.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.path, f.line) for f in findings]


POSITIVE = {
    # Variables gathered from the project's own collections (adapters and
    # a head): the body stays at its pretrained values.
    "var-list-filter: custom collections": ("""\
        def create_optimizer(loss, optimizer):
          tvars = []
          for collection in ["adapters", "layer_norm", "head"]:
            tvars += tf.get_collection(collection)
          grads = tf.gradients(loss, tvars)
          return optimizer.apply_gradients(zip(grads, tvars))
        """, [("var-list-filter", "t.py", 4)]),
    # A loop adds the modules of a fixed path to the list under an `if`
    # on a choice table (PathNet), the variables from helpers elsewhere.
    "var-list-filter: a loop that adds under a choice": ("""\
        def train(cross_entropy, weights, biases, out_w, out_b):
          fixed_list = np.ones((L, M), dtype=str)
          var_list_to_learn = [] + out_w + out_b
          for i in range(L):
            for j in range(M):
              if fixed_list[i, j] == '0':
                var_list_to_learn += weights[i, j] + biases[i, j]
          opt = tf.train.GradientDescentOptimizer(0.1)
          return opt.minimize(cross_entropy, var_list=var_list_to_learn)
        """, [("var-list-filter", "t.py", 7)]),
    # A first stage trains the heads chosen by their scope through a local
    # name; a second stage trains everything with the same loss.
    "var-list-filter: two stages of one loss": ("""\
        class YOLO:
          def build(self):
            self.first_stage = []
            for var in tf.trainable_variables():
              parts = str(var.op.name).split('/')
              if parts[0] in ['conv_sbbox', 'conv_mbbox', 'conv_lbbox']:
                self.first_stage.append(var)
            first = tf.train.AdamOptimizer(1e-4).minimize(
                self.loss, var_list=self.first_stage)
            second = tf.train.AdamOptimizer(1e-4).minimize(
                self.loss, var_list=tf.trainable_variables())
            return first, second
        """, [("var-list-filter", "t.py", 7)]),
    # Batch-norm scales left out of every group; the groups are trained at
    # three learning rates from one `tf.gradients`: one finding.
    "var-list-filter: layers at several learning rates": ("""\
        def main(loss):
          all_trainable = [v for v in tf.trainable_variables()
                           if 'beta' not in v.name and 'gamma' not in v.name]
          fc = [v for v in all_trainable if 'fc' in v.name]
          conv = [v for v in all_trainable if 'fc' not in v.name]
          fc_w = [v for v in fc if 'weights' in v.name]
          fc_b = [v for v in fc if 'biases' in v.name]
          grads = tf.gradients(loss, conv + fc_w + fc_b)
          grads_conv = grads[:len(conv)]
          grads_w = grads[len(conv):len(conv) + len(fc_w)]
          grads_b = grads[len(conv) + len(fc_w):]
          ops = [tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
                     zip(grads_conv, conv)),
                 tf.train.MomentumOptimizer(lr * 10, 0.9).apply_gradients(
                     zip(grads_w, fc_w)),
                 tf.train.MomentumOptimizer(lr * 20, 0.9).apply_gradients(
                     zip(grads_b, fc_b))]
          return tf.group(*ops)
        """, [("var-list-filter", "t.py", 5)]),
    # slim's `--trainable_scopes` helper imported from a sibling module, the
    # list handed to `model_deploy.optimize_clones`.
    "var-list-filter: an imported helper and optimize_clones": ({
        "train/train_utils.py": """\
            def _get_variables_to_train():
              if FLAGS.trainable_scopes is None:
                return tf.trainable_variables()
              scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
              variables_to_train = []
              for scope in scopes:
                variables_to_train.extend(
                    tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
              return variables_to_train
            """,
        "train/train.py": """\
            from train_utils import _get_variables_to_train
            def main(clones, optimizer):
              variables_to_train = _get_variables_to_train()
              total_loss, grads = model_deploy.optimize_clones(
                  clones, optimizer, var_list=variables_to_train)
              return optimizer.apply_gradients(grads)
            """}, [("var-list-filter", "train/train.py", 3)]),
    # A regex from the configuration drops variables in a helper whose
    # flag chooses between keeping and dropping.
    "var-list-filter: a regex from the config in a helper": ("""\
        import re
        def filter_variables(variables, variable_regex, is_whitelist):
          if is_whitelist:
            return [v for v in variables if variable_regex is None or
                    re.match(variable_regex, v.name)]
          return [v for v in variables if variable_regex is None or
                  not re.match(variable_regex, v.name)]

        class Model:
          def __init__(self, params):
            self._frozen_var_prefix = params.frozen_variable_prefix
          def train(self, loss, optimizer):
            train_var_list = filter_variables(
                tf.trainable_variables(), self._frozen_var_prefix, False)
            grads_and_vars = optimizer.compute_gradients(loss, train_var_list)
            return optimizer.apply_gradients(grads_and_vars)
        """, [("var-list-filter", "t.py", 13)]),
    # tfmot-style: the pruning object's weights, masked and assigned back
    # through a compat `assign`, in a method a wrapper calls each step.
    "weight-remask: a pruning object's assign": ("""\
        class Pruning(object):
          def __init__(self, pruning_vars):
            self._pruning_vars = pruning_vars
          def _weight_assign_objs(self):
            assign_objs = []
            for weight, mask, _ in self._pruning_vars:
              masked_weight = tf.dtypes.cast(
                  tf.math.multiply(weight, mask), dtype=weight.dtype)
              assign_objs.append(tf_compat.assign(weight, masked_weight))
            return assign_objs
        """, [("weight-remask", "t.py", 9)]),
    # Non-trainable copies of every weight blended back after the
    # optimizer's own step: a shadow copy, not a re-mask.
    "shadow-variable: copies blended back after super()": ("""\
        class PartialTuning(tf.keras.optimizers.Optimizer):
          def __init__(self, model):
            self._weights = list(model.trainable_weights)
            originals = [tf.Variable(tf.cast(w, w.dtype), trainable=False)
                         for w in self._weights]
            masks = [tf.Variable(tf.cast(tf.equal(w, 0.), w.dtype),
                                 trainable=False) for w in self._weights]
            self._vars = list(zip(self._weights, originals, masks))
          def apply_gradients(self, grads_and_vars, name=None):
            result = super().apply_gradients(grads_and_vars, name)
            for weight, original, mask in self._vars:
              weight.assign(original * (1. - mask) + weight * mask)
            return result
        """, [("shadow-variable", "t.py", 12)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_class_of_real_code_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected


NEGATIVE = {
    # Scheduled sampling: a random draw picks between two activations, a
    # straight-through estimator beside it.
    "stop-gradient-mix: scheduled sampling beside straight-through": """\
        def bottleneck(x, bits_pred, p):
          w = tf.get_variable("w", [4, 4])
          b = tf.get_variable("b", [4])
          bits_clean = tf.matmul(x, w) + b
          bits_pred = bits_clean + tf.stop_gradient(bits_pred - bits_clean)
          which = tf.random_uniform(tf.shape(bits_clean))
          return tf.where(which < p, bits_pred, bits_clean)
        """,
    # A `tf.where` whose branches are activations computed from variables,
    # one of them stopped: no variable is rebuilt from its stopped self.
    "stop-gradient-mix: a where over activations": """\
        def layer(self, x, mask):
          w = tf.get_variable("w", [4, 4])
          b = tf.get_variable("b", [4])
          h = tf.matmul(x, w) + b
          return tf.where(mask, h, tf.stop_gradient(h * 2.0))
        """,
    # A2C: the helper's scope is the one the whole model is built under.
    "var-list-filter: the model's root scope through a helper": {
        "utils.py": """\
            def find_trainable_variables(key):
              return tf.trainable_variables(key)
            """,
        "a2c.py": """\
            from utils import find_trainable_variables
            class Model:
              def __init__(self, policy, loss):
                with tf.variable_scope('a2c_model', reuse=tf.AUTO_REUSE):
                  self.model = policy()
                params = find_trainable_variables("a2c_model")
                grads = tf.gradients(loss, params)
                self.train = tf.train.RMSPropOptimizer(7e-4).apply_gradients(
                    list(zip(grads, params)))
            """},
    # DDPG/HER: an actor and a critic filtered by one helper, each with its
    # own loss, and the target network blended from the main one.
    "var-list-filter: an actor and a critic": """\
        class DDPG:
          def _vars(self, scope):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     scope=self.scope + '/' + scope)
          def _build(self):
            q_grads = tf.gradients(self.q_loss, self._vars('main/Q'))
            pi_grads = tf.gradients(self.pi_loss, self._vars('main/pi'))
            self.q_adam = MpiAdam(self._vars('main/Q'))
            self.pi_adam = MpiAdam(self._vars('main/pi'))
            return q_grads, pi_grads
        """,
    # TRPO: the policy's and the value function's variables filtered by
    # name, each differentiated for its own loss through a project helper.
    "var-list-filter: a policy and its value function": {
        "tf_util.py": """\
            def flatgrad(loss, var_list, clip_norm=None):
              grads = tf.gradients(loss, var_list)
              return tf.concat([tf.reshape(g, [-1]) for g in grads], 0)
            """,
        "trpo.py": """\
            import tf_util as U
            def learn(pi, optimgain, vferr, dist):
              all_var_list = pi.get_trainable_variables()
              var_list = [v for v in all_var_list
                          if v.name.startswith("pi/pol")]
              vf_var_list = [v for v in all_var_list
                             if v.name.startswith("pi/vf")]
              klgrads = tf.gradients(dist, var_list)
              g = U.flatgrad(optimgain, var_list)
              vfg = U.flatgrad(vferr, vf_var_list)
              return klgrads, g, vfg
            """},
    # A library's train-op builder, and its test training a subset.
    "var-list-filter: a library exercised by its test": {
        "lib/training.py": """\
            def create_train_op(total_loss, optimizer, variables_to_train=None):
              if variables_to_train is None:
                variables_to_train = tf.trainable_variables()
              grads = optimizer.compute_gradients(total_loss,
                                                  variables_to_train)
              return optimizer.apply_gradients(grads)
            """,
        "lib/training_test.py": """\
            from lib import training
            def test_train_only_the_weights(total_loss, optimizer):
              weights = [v for v in tf.trainable_variables()
                         if 'weights' in v.name]
              return training.create_train_op(
                  total_loss, optimizer, variables_to_train=weights)
            """},
    # DQN: the online network's scope trained, the target's synced.
    "var-list-filter: a target network synced": """\
        def build_train(loss, optimizer):
          q_vars = tf.trainable_variables("q_func")
          target_vars = tf.trainable_variables("target_q_func")
          train = optimizer.minimize(loss, var_list=q_vars)
          update = [t.assign(q) for q, t in zip(sorted(q_vars), sorted(
              target_vars))]
          return train, tf.group(*update)
        """,
    # Biases' gradients doubled under a configuration flag: scaling.
    "var-list-filter: gradients scaled under a config flag": """\
        def train(optimizer, loss):
          gvs = optimizer.compute_gradients(loss)
          if cfg.TRAIN.DOUBLE_BIAS:
            final_gvs = []
            for grad, var in gvs:
              scale = 1.
              if '/biases:' in var.name:
                scale *= 2.
              final_gvs.append((grad * scale, var))
            return optimizer.apply_gradients(final_gvs)
          return optimizer.apply_gradients(gvs)
        """,
    # A soft update whose coefficient is named after trainability.
    "weight-remask: a soft update": """\
        def soft_update(source, target, tau, tau_non_trainable):
          for v_s, v_t in zip(source, target):
            current_tau = tau if v_t.trainable else tau_non_trainable
            v_t.assign((1 - current_tau) * v_t + current_tau * v_s)

        def sync(online, target_network):
          soft_update(online.variables, target_network.variables, 0.005, 1.0)
        """,
    # Lottery ticket: the next round starts from the initial weights,
    # masked; the layer's current weights are only read for their shape.
    "weight-remask: a rewind that reads the layer first": """\
        class Model:
          def __init__(self):
            self._initial = self._trainable_weights()
          def _trainable_weights(self):
            weights = {}
            for name in self._names:
              layer = self._layer(name)
              weights[name] = layer.get_weights()[0]
            return weights
          def set_pruning(self, masks):
            for name in self._names:
              layer = self._layer(name)
              weights = layer.get_weights()
              weights[0] = self._initial[name] * masks[name]
              layer.set_weights(weights)
        """,
    # A notebook cell resets the model to its first weights to train it
    # again another way: a reset, run once.
    "write-back: a reset between two trainings": """\
        initial_weights = model.get_weights()
        model.fit(x, y, epochs=1)
        model.set_weights(initial_weights)
        model.compile(optimizer="adam", loss="mse")
        """,
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_class_of_training_code_is_not_reported(name):
  assert _found(NEGATIVE[name]) == []
