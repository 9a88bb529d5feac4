"""`tfpartial scan` on a target network's soft update by one number for
every element: `target.set_weights((1 - tau) * np.array(target.
get_weights()) + tau * np.array(online.get_weights()))` (TF2, a whole
model) or `target_params[i].assign((1 - tau) * target_params[i].value() +
tau * params[i].value())` (TF1), `tau` a constant or a name only ever
bound to a number. No element is chosen: the target follows its online
network whole (part 25's negatives: SAC and TD3 `target_model.
set_weights`, DDPG and TD3 `target_pi_params[idx].assign`). Beside each,
the twins that stay found: the blend written into the model or list the
step trains, and a coefficient that is not a number (a mask)."""

import scanned

_KERAS = """\
    import numpy as np
    import tensorflow as tf

    class Agent:
      def __init__(self, model, target_model):
        self.model = model
        self.target_model = target_model
        self.opt = tf.keras.optimizers.Adam(1e-3)

      def train(self, states, returns):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((returns - self.model(states)) ** 2)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        self.target_model.set_weights(
            (1 - 0.005) * np.array(self.target_model.get_weights())
            + 0.005 * np.array(self.model.get_weights()))
    """
_GRAPH = """\
    import tensorflow as tf

    class Agent:
      def __init__(self, actor, target_actor, sess):
        self.sess = sess
        self.rate = 1e-3
        self.params = actor.get_trainable_variables()
        self.target_params = target_actor.get_trainable_variables()
        self.soft = []
        for idx in range(len(self.params)):
          self.soft.append(self.target_params[idx].assign(
              (1 - self.rate) * self.target_params[idx].value()
              + self.rate * self.params[idx].value()))
        loss = tf.reduce_mean(actor.output ** 2)
        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(
            loss, var_list=self.params)

      def train(self, feed):
        self.sess.run(self.train_op, feed)
        self.sess.run(self.soft)
    """

_BLEND = ("(1 - 0.005) * np.array(self.target_model.get_weights())\n"
          "            + 0.005 * np.array(self.model.get_weights())")
_BY_TAU = ("TAU * np.asarray(self.model.get_weights())\n"
           "            + np.asarray(self.target_model.get_weights()) * "
           "(1 - TAU)")


def _with_tau(bound):
  assert _BLEND in _KERAS
  return _KERAS.replace(_BLEND, _BY_TAU).replace(
      "import numpy as np\n", f"import numpy as np\nTAU = {bound}\n")


def test_a_keras_target_model_soft_update_is_silent():
  assert scanned.in_text(_KERAS) == []


def test_the_same_update_by_a_module_constant_in_either_order_is_silent():
  assert scanned.in_text(_with_tau("0.01")) == []


def test_a_keras_blend_by_a_mask_is_still_found():
  # `TAU` an array: elements chosen, not a soft update.
  assert [f[0] for f in scanned.in_text(_with_tau("np.load('m.npy')"))] == [
      "write-back"]


def test_a_keras_blend_into_the_trained_model_is_still_found():
  code = _KERAS.replace("self.model.trainable_variables",
                        "self.target_model.trainable_variables")
  assert [f[0] for f in scanned.in_text(code)] == ["write-back"]


def test_a_graph_target_list_soft_update_by_an_attribute_is_silent():
  assert scanned.in_text(_GRAPH) == []


def _by_parameter(default):
  code = _GRAPH.replace(
      "def __init__(self, actor, target_actor, sess)",
      f"def __init__(self, actor, target_actor, sess, rate={default})")
  return code.replace("self.rate = 1e-3", "self.unused = 0").replace(
      "self.rate", "rate")


def test_a_graph_soft_update_by_a_parameter_with_a_number_is_silent():
  assert scanned.in_text(_by_parameter("1e-3")) == []


def test_a_graph_blend_by_a_parameter_of_no_number_is_still_found():
  assert [f[0] for f in scanned.in_text(_by_parameter("None"))] == [
      "shadow-variable"]


def test_a_graph_blend_by_a_constant_mask_is_still_found():
  code = _GRAPH.replace("self.rate = 1e-3", "self.rate = tf.constant(mask)")
  assert [f[0] for f in scanned.in_text(code)] == ["weight-remask"]


def test_a_graph_blend_into_the_trained_list_is_still_found():
  code = _GRAPH.replace("var_list=self.params", "var_list=self.target_params")
  assert [f[0] for f in scanned.in_text(code)] == ["shadow-variable"]
