"""`tfpartial scan`: each idiom found where it is (positive cases) and
nothing reported on training code that freezes nothing (negative cases)."""

import textwrap

import pytest

from tfpartial._tools.scan import _scan

import scanned


_found = scanned.in_text


POSITIVE = {
    "grads-mask TF1 comprehension": ("""\
        grads_and_vars = optimizer.compute_gradients(loss)
        mask = tf.constant([0.0, 1.0])
        train_op = optimizer.apply_gradients(
            [(g * mask, v) for g, v in grads_and_vars])
        """, [("grads-mask", 4)]),
    "grads-mask tf.where": ("""\
        def step(model, opt, x, frozen_mask):
          with tf.GradientTape() as tape:
            loss = model(x)
          grads = tape.gradient(loss, model.trainable_variables)
          grads = [tf.where(frozen_mask, tf.zeros_like(g), g) for g in grads]
          opt.apply_gradients(zip(grads, model.trainable_variables))
        """, [("grads-mask", 5)]),
    "grads-mask IndexedSlices rows": ("""\
        def train(emb, opt, loss, row_mask):
          (g,) = tf.gradients(loss, [emb])
          g = tf.IndexedSlices(g.values * tf.gather(row_mask, g.indices)[:, None],
                               g.indices, g.dense_shape)
          return opt.apply_gradients([(g, emb)])
        """, [("grads-mask", 3)]),
    "grads-mask in an optimizer subclass": ("""\
        class MaskingSGD(SGD):
          def minimize(self, loss, var_list, tape=None):
            grads_and_vars = self._compute_gradients(loss, var_list=var_list)
            grads_and_vars = [(tf.multiply(grad, mask), var) for mask, (grad, var)
                              in zip(self.masks, grads_and_vars)]
            return self.apply_gradients(grads_and_vars)
        """, [("grads-mask", 4)]),
    "stop-gradient-mix inline": ("""\
        x = tf.Variable([1.0, 2.0])
        mask = tf.constant([0.0, 1.0])
        used = mask * x + (1.0 - mask) * tf.stop_gradient(x)
        """, [("stop-gradient-mix", 3)]),
    "stop-gradient-mix helper": ("""\
        def entry_stop_gradients(target, mask):
          mask_h = tf.abs(mask - 1)
          return tf.stop_gradient(mask_h * target) + mask * target

        class Model:
          def __init__(self):
            self.w = tf.get_variable("w", [3, 3])
            self.out = entry_stop_gradients(self.w, self.mask)
        """, [("stop-gradient-mix", 8)]),
    "shadow-variable under control_dependencies": ("""\
        x = tf.Variable([1.0, 2.0, 3.0])
        shadow = tf.Variable(x.initialized_value()[0], trainable=False)
        train = optimizer.minimize(loss)
        with tf.control_dependencies([train]):
          train_op = tf.scatter_update(x, [0], tf.expand_dims(shadow, 0))
        """, [("shadow-variable", 5)]),
    "write-back fetched beside the train op": ("""\
        emb = tf.get_variable("emb", [100, 8])
        train_op = optimizer.minimize(loss)
        keep_rows = tf.scatter_update(emb, FROZEN_IDS, PRETRAINED_ROWS)
        for _ in range(10):
          sess.run([train_op, keep_rows])
        """, [("write-back", 3)]),
    "write-back after the eager step": ("""\
        x = tf.Variable([1.0, 2.0])
        saved = x.numpy()
        for _ in range(10):
          optimizer.minimize(loss_fn, [x])
          x[0].assign(saved[0])
        """, [("write-back", 5)]),
    "var-list-filter slim scopes": ("""\
        def _get_variables_to_train():
          scopes = [s.strip() for s in FLAGS.trainable_scopes.split(",")]
          variables_to_train = []
          for scope in scopes:
            variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
            variables_to_train.extend(variables)
          return variables_to_train

        def train():
          variables_to_train = _get_variables_to_train()
          grads = optimizer.compute_gradients(loss, variables_to_train)
        """, [("var-list-filter", 5)]),  # Where the helper keeps scopes.
    "var-list-filter by name": ("""\
        var_list = [v for v in tf.trainable_variables() if "dense" in v.name]
        train_op = optimizer.minimize(loss, var_list=var_list)
        """, [("var-list-filter", 1)]),
    "weight-remask callback": ("""\
        class Remask(tf.keras.callbacks.Callback):
          def __init__(self, layer, mask):
            self.layer, self.mask = layer, mask
          def on_epoch_end(self, epoch, logs=None):
            weights = self.layer.get_weights()
            weights[0] *= self.mask
            self.layer.set_weights(weights)
        """, [("weight-remask", 7)]),
    # A re-mask counts where the model trains after it (here: the next
    # epoch's fit), not where it only feeds an evaluation (NEGATIVE).
    "weight-remask assign": ("""\
        for epoch in range(10):
          model.fit(x, y, epochs=1)
          for w, m in zip(model.trainable_weights, masks):
            w.assign(w * m)
        """, [("weight-remask", 4)]),
    "weight-remask constraint": ("""\
        layer = tf.keras.layers.Dense(4, kernel_constraint=lambda w: w * mask)
        """, [("weight-remask", 1)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_an_idiom_is_found_at_its_line(name):
  code, expected = POSITIVE[name]
  assert _found(code) == expected


def test_a_padding_row_zeroed_beside_the_step_is_a_remask():
  """A fixed row set back to zeros keeps nothing saved: a re-mask, said
  as such, with the race of its fetch beside the train op."""
  code = """\
      emb = tf.get_variable("emb", [100, 8])
      train_op = optimizer.minimize(loss)
      clear_pad = tf.scatter_update(emb, [0], tf.zeros([1, 8]))
      for _ in range(10):
        sess.run([train_op, clear_pad])
      """
  findings = _scan.scan_text("t.py", textwrap.dedent(code))
  assert [(f.idiom, f.line) for f in findings] == [("weight-remask", 3)]
  message = findings[0].message
  assert message.startswith("fixed elements of `emb` set back to zeros by "
                            "`scatter_update`, fetched beside the train op")
  assert "weights-re-multiplied-by-a-mask" in message
  assert "a race" in findings[0].drift


NEGATIVE = {
    "DQN target": """\
        q_target = rewards + gamma * tf.stop_gradient(tf.reduce_max(target_q, 1))
        loss = tf.reduce_mean(tf.square(q_target - q))
        train_op = optimizer.minimize(loss, var_list=q_func_vars)
        """,
    "straight-through estimator": """\
        w = tf.Variable(tf.zeros([3]))
        w_q = w + tf.stop_gradient(tf.round(w) - w)
        """,
    "VQ-VAE": """\
        z_q = z_e + tf.stop_gradient(z_q - z_e)
        """,
    "polyak target update": """\
        ops = [t.assign(tau * o + (1 - tau) * t)
               for o, t in zip(online.variables, target.variables)]
        with tf.control_dependencies([train_op]):
          update = tf.group(*ops)
        """,
    "EMA": """\
        ema = tf.train.ExponentialMovingAverage(0.99)
        with tf.control_dependencies([train_op]):
          train_op = ema.apply(tf.trainable_variables())
        """,
    "loss masking with tf.where": """\
        loss = tf.where(mask, per_example, tf.zeros_like(per_example))
        grads = tape.gradient(tf.reduce_sum(loss), model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """,
    "NaN guard": """\
        grads = tape.gradient(loss, variables)
        grads = [tf.where(tf.math.is_nan(g), tf.zeros_like(g), g) for g in grads]
        optimizer.apply_gradients(zip(grads, variables))
        """,
    "clipping": """\
        grads = tf.gradients(loss, tvars)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        train_op = optimizer.apply_gradients(zip(grads, tvars))
        """,
    "a gradient multiplier": """\
        grads = optimizer.compute_gradients(loss)
        grads = [(g * 0.1, v) for g, v in grads]
        train_op = optimizer.apply_gradients(grads)
        """,
    # The scope is the one the whole model is built under (baselines'
    # PPO2): it selects the model, whatever way the string is written.
    "var_list of the model": """\
        with tf.variable_scope("ppo2_model", reuse=tf.AUTO_REUSE):
          train_model = policy(nbatch_train, nsteps, sess)
        train_op = optimizer.minimize(loss, var_list=model.trainable_variables)
        params = tf.trainable_variables("ppo2_model")
        grads = tf.gradients(loss, params)
        """,
    "weight-remask that only feeds an evaluation": """\
        model.fit(x, y, epochs=10)
        for w, m in zip(model.trainable_weights, masks):
          w.assign(w * m)
        print(model.evaluate(x_test, y_test))
        """,
    "lottery-ticket rewind to the initial weights": """\
        initial = [w.numpy() for w in model.trainable_weights]
        def rewind(model, masks):
          for w, w0, m in zip(model.trainable_weights, initial, masks):
            w.assign(w0 * m)
        """,
    "a GAN's split": """\
        t_vars = tf.trainable_variables()
        d_vars = [v for v in t_vars if "d_" in v.name]
        g_vars = [v for v in t_vars if "g_" in v.name]
        d_optim = tf.train.AdamOptimizer(lr).minimize(d_loss, var_list=d_vars)
        g_optim = tf.train.AdamOptimizer(lr).minimize(g_loss, var_list=g_vars)
        """,
    "pretrained embeddings loaded once": """\
        emb = tf.get_variable("emb", [100, 8])
        load = tf.scatter_update(emb, ids, pretrained)
        train_op = optimizer.minimize(loss)
        sess.run(load)
        for _ in range(10):
          sess.run(train_op)
        """,
    "dropout on activations": """\
        h = tf.nn.relu(tf.matmul(x, w)) * dropout_mask
        """,
    # A learning-rate finder: the optimizer's rate read, raised and
    # written back after each batch; no weight is written.
    "a learning rate written back after each batch": """\
        class LRFinder:
          def __init__(self, model):
            self.model = model
            self.lrs = []

          def on_batch_end(self, batch, logs):
            lr = K.get_value(self.model.optimizer.lr)
            self.lrs.append(lr)
            lr *= self.lr_mult
            K.set_value(self.model.optimizer.lr, lr)

          def find(self, x, y):
            K.set_value(self.model.optimizer.lr, 1e-7)
            callback = LambdaCallback(
                on_batch_end=lambda batch, logs: self.on_batch_end(batch, logs))
            self.model.fit(x, y, callbacks=[callback])
        """,
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_code_that_freezes_nothing_is_not_reported(name):
  assert _found(NEGATIVE[name]) == []
