"""Weights read out, zeroed at a selection the object keeps, and written
back with each step (part 24's angelocatalani trainer: `weights, biases =
layer.get_weights()`, `weights[zero_ids] = 0` with the ids stored when
the model was pruned, `layer.set_weights([weights, biases])` after each
`apply_gradients`) re-mask the pruned elements: found, by a method the
training loop calls (on a variable's `numpy()` too). Elements chosen
anew where they are zeroed (by the weights' magnitude, by a draw), ids
the caller passes, and a reset run once before the loop or only before
an evaluation are silent."""

import pytest

import scanned

_found = scanned.found

_TRAINER = '''
import numpy as np
import tensorflow as tf


class Trainer:
  def __init__(self, model):
    self.model = model
    self.optimizer = tf.keras.optimizers.SGD(0.1)
    self.pruned = {}

  def prune(self, limit):
    for layer in self.model.layers:
      weights, biases = layer.get_weights()
      self.pruned[layer] = np.abs(weights) < limit
      weights[self.pruned[layer]] = 0
      layer.set_weights([weights, biases])

  def reset(self{params}):
    for layer, zero_ids in self.pruned.items():
      weights, biases = layer.get_weights()
      {zeroing}
      layer.set_weights([weights, biases])

  def train(self, data):
    for x, y in data:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((self.model(x) - y) ** 2)
      variables = self.model.trainable_variables
      grads = tape.gradient(loss, variables)
      self.optimizer.apply_gradients(zip(grads, variables))
      {after}
'''


def _trainer(zeroing="weights[zero_ids] = 0", after="self.reset()",
             params=""):
  return _TRAINER.replace("{zeroing}", zeroing).replace(
      "{after}", after).replace("{params}", params)


def _wrapped(body):
  """The trainer's step moved into a method of its own running `body`."""
  return _trainer().replace(
      "      self.optimizer.apply_gradients(zip(grads, variables))\n",
      "      self._apply(grads, variables)\n") + (
          "\n  def _apply(self, grads, variables):\n    " + body + "\n")


_VARIABLE = '''
import numpy as np
import tensorflow as tf


class Sparse(tf.keras.Model):
  def __init__(self, ids):
    super().__init__()
    self.kernel = tf.Variable(tf.ones([4, 4]))
    self.dead = ids

  def keep_dead(self):
    values = self.kernel.numpy()
    values[{chosen}] = 0.0
    self.kernel.assign(values)

  def steps(self, data, optimizer):
    for x, y in data:
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(x @ self.kernel - y)
      grads = tape.gradient(loss, [self.kernel])
      optimizer.apply_gradients(zip(grads, [self.kernel]))
      self.keep_dead()
'''


CASES = [
    pytest.param(_trainer(), [("weight-remask", 23)],
                 id="stored_ids_after_each_step"),
    pytest.param(_trainer("weights[0][zero_ids] = 0.0"),
                 [("weight-remask", 23)], id="nested_element"),
    pytest.param(_wrapped("self.optimizer.apply_gradients(zip(grads, "
                          "variables))"), [("weight-remask", 23)],
                 id="step_in_own_method"),
    pytest.param(_VARIABLE.format(chosen="self.dead"),
                 [("weight-remask", 15)], id="variable_numpy_assign"),
    # Silent: chosen anew by the weights' own magnitude.
    pytest.param(_trainer("weights[np.abs(weights) < 0.01] = 0"), [],
                 id="magnitude_anew"),
    pytest.param(_trainer("small = np.abs(weights) < zero_ids.mean()\n"
                          "      weights[small] = 0"), [],
                 id="magnitude_anew_named"),
    pytest.param(_VARIABLE.format(chosen="self.dead").replace(
        "    values = self.kernel.numpy()\n",
        "    values = self.kernel.numpy()\n"
        "    self.dead = np.abs(values) < 1e-3\n"), [],
                 id="attribute_set_anew"),
    # Silent: a loop whose method only measures (no step before a reset).
    pytest.param(_wrapped("print(len(grads), len(variables))"), [],
                 id="loop_without_step"),
    # Silent: drawn anew.
    pytest.param(_trainer("weights[np.random.rand(*zero_ids.shape) < 0.1]"
                          " = 0"), [], id="drawn_each_step"),
    # Silent: ids the caller passes (the data chooses).
    pytest.param(_trainer("weights[ids] = 0", params=", ids",
                          after="self.reset(x.numpy() > 0)"), [],
                 id="ids_passed_in"),
    # Silent: a reset run once before training, or only to evaluate.
    pytest.param(_trainer(after="pass").replace(
        "  def train(self, data):\n",
        "  def train(self, data):\n    self.reset()\n"), [],
                 id="reset_once_before_loop"),
    pytest.param(_trainer(after="pass").replace(
        "  def train(self, data):\n",
        "  def score(self, data):\n    self.reset()\n"
        "    return self.model.evaluate(data)\n\n"
        "  def train(self, data):\n"), [],
                 id="reset_once_evaluated"),
]


@pytest.mark.parametrize("code, expected", CASES)
def test_kept_zeros(code, expected):
  # Only the re-masks: a copy written back is the write-back rule's.
  assert [f for f in _found(code) if f[0] == "weight-remask"] == expected
