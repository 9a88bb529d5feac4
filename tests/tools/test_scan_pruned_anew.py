"""`tfpartial scan`'s `weight-remask` on masks that keep nothing fixed:
made anew from the weights' own magnitude where they are written (one-shot
magnitude pruning before a fine-tune, network slimming, a proximal
shrinkage in an optimizer), and rows zeroed at indices the caller's data
chooses (a recurrent state reset for the episodes that ended); beside
them, the fixed masks that stay reported."""

import pytest

import scanned


def _remasks(code):
  return [f[1] for f in scanned.in_text(code, "weight-remask")]


NEGATIVE = {
    # Pruned once by magnitude (the mask from a percentile of |w| read out
    # here), then the whole model fine-tuned: the zeros train again.
    "one-shot magnitude pruning of weights read out": """\
        def magnitude_prune(model, sparsity_level):
          layer_idx = 0
          for layer in model.layers:
            weights = layer.get_weights()
            threshold = np.percentile(np.abs(weights[0]), sparsity_level)
            mask = np.where(np.abs(weights[0]) >= threshold, 1, 0)
            pruned_weights = np.copy(weights)
            pruned_weights[0] *= mask
            model.layers[layer_idx].set_weights(
                [pruned_weights[0], layer.get_weights()[1]])
            layer_idx += 1
          return model

        model = magnitude_prune(model, 50)
        model.fit(x, y, epochs=50)
        """,
    # Network slimming: channels ranked by their L1 norm, the weakest zeroed.
    "channels ranked by their norm and zeroed once": """\
        def network_slimming(model, sparsity_level):
          for i, layer in enumerate(model.layers):
            weights = model.layers[i].get_weights()
            scores = np.abs(model.layers[i].get_weights()[0]).sum(axis=0)
            pruned = np.argsort(scores)[:int(sparsity_level * len(scores))]
            mask = np.ones(weights[0].shape)
            mask[:, pruned] = 0
            pruned_weights = np.copy(weights)
            pruned_weights[0] *= mask
            model.layers[i].set_weights(pruned_weights)
          return model

        model = network_slimming(model, 0.5)
        model.fit(x, y, epochs=10)
        """,
    # A proximal step in an optimizer: each update shrinks the variable by
    # a factor made from its own magnitude (group lasso).
    "a proximal shrinkage from the variable's own magnitude": """\
        class ProximalGD(tf.train.Optimizer):
          def _apply_dense(self, grad, var):
            update = training_ops.apply_gradient_descent(var, self._lr, grad)
            with ops.control_dependencies([update]):
              norm = math_ops.maximum(math_ops.abs(var), 1e-16)
              mask = math_ops.maximum(1.0 - (self._threshold / norm), 0.)
              return state_ops.assign(var, math_ops.multiply(var, mask))
        """,
    # Dynamic loss scaling: counters reset by a condition computed from
    # their own ratio in the same update (nothing fixed chooses them).
    "counters reset by a condition on their own values": """\
        class LossScale:
          def __init__(self):
            self._steps = tf.Variable(0, dtype=tf.int64, trainable=False)
            self._overflows = tf.Variable(0, dtype=tf.int64, trainable=False)

          def update(self, grads):
            isfinite = tf.cast(tf.math.is_finite(tf.linalg.global_norm(grads)),
                               tf.int64)
            steps = self._steps.assign_add(1)
            overflows = self._overflows.assign_add(1 - isfinite)
            ratio = tf.cast(overflows, tf.float32) / tf.cast(steps, tf.float32)
            dec_cond = tf.cast(tf.math.greater(ratio, 0.05), tf.int64)
            overflows = overflows.assign(overflows * (1 - dec_cond))
            steps = steps.assign(steps * (1 - dec_cond))
            return overflows, steps

        class Optimizer(tf.train.Optimizer):
          def apply_gradients(self, grads_and_vars):
            self.loss_scale.update([g for g, _ in grads_and_vars])
        """,
    # A recurrent state zeroed at the batch indices whose episodes ended,
    # the indices passed in from the data.
    "a state zeroed at indices the caller passes": """\
        def reinit_nested_vars(variables, indices=None):
          if isinstance(variables, (tuple, list)):
            return tf.group(*[reinit_nested_vars(v, indices) for v in variables])
          if indices is None:
            return variables.assign(tf.zeros_like(variables))
          zeros = tf.zeros([tf.shape(indices)[0]] + variables.shape[1:].as_list())
          return tf.scatter_update(variables, indices, zeros)

        class Agent:
          def begin_episode(self, agent_indices):
            return reinit_nested_vars(self._last_state, agent_indices)

          def update(self, loss):
            return self._optimizer.minimize(loss)
        """,
}

POSITIVE = {
    # A mask kept from before, put back after each step.
    "a kept mask re-applied after each step": ("""\
        masks = [np.load("mask_%d.npy" % i) for i in range(3)]
        for epoch in range(10):
          model.fit(x, y, epochs=1)
          for layer, mask in zip(model.layers, masks):
            w = layer.get_weights()
            w[0] = w[0] * mask
            layer.set_weights(w)
        """, 7),
    # The padding row of a table zeroed at a constant index with each step.
    "a padding row zeroed at a constant index": ("""\
        table = tf.get_variable("table", [1000, 64])
        train_op = tf.train.AdamOptimizer().minimize(loss)
        with tf.control_dependencies([train_op]):
          clear = tf.scatter_update(table, [0], tf.zeros([1, 64]))
        """, 4),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_mask_made_anew_or_chosen_by_the_data_is_silent(name):
  assert _remasks(NEGATIVE[name]) == []


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_kept_mask_is_found(name):
  code, line = POSITIVE[name]
  assert _remasks(code) == [line]


def test_a_metric_state_in_a_dict_reset_whole_is_not_a_remask():
  # A running mean's states, kept in a dict of variables by name: each
  # entry is a whole variable, zeroed whole at reset (not rows of one).
  code = """\
      class DictMean:
        def __init__(self, state_shape):
          self._states = {}
          for key in state_shape:
            self._states[key] = {
                'sum': tf.Variable(tf.zeros(state_shape[key])),
                'count': tf.Variable(tf.zeros([]))}

        def reset_states(self):
          for key in self._states:
            self._states[key]['sum'].assign(
                tf.zeros(tf.shape(self._states[key]['sum'])))
            self._states[key]['count'].assign(0.)

        def update_state(self, state):
          for key in state:
            self._states[key]['sum'].assign_add(tf.reduce_sum(state[key], 0))
            self._states[key]['count'].assign_add(1.)

      metric = DictMean({"loss": []})
      for epoch in range(10):
        for x, y in ds:
          with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
          variables = model.trainable_variables
          opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
          metric.update_state({"loss": loss})
        metric.reset_states()
      """
  assert _remasks(code) == []
  # Rows of one variable (an integer index) zeroed with each step stay.
  rows = """\
      table = tf.get_variable("table", [1000, 64])
      train_op = tf.train.AdamOptimizer().minimize(loss)
      with tf.control_dependencies([train_op]):
        clear = table[0].assign(tf.zeros([64]))
      """
  assert _remasks(rows) == [4]
