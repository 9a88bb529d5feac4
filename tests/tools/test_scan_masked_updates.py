"""`tfpartial scan`: an update or a gradient masked by a fixed connectivity
mask (the neuroscience RNNs of Masse et al. and their descendants: a mask
read from a parameter dict, `par['w_rnn_mask']`; a gradient dict's
`.items()`; a hand-written Adam writing `w - lr * m_hat / (sqrt(v_hat) +
eps) * mask`; the same in a Keras optimizer's `_resource_apply_dense`),
and the look-alikes that freeze nothing: an update gated by a schedule,
a mask drawn at random, an accumulator masked, weight decay."""

import pytest

import scanned


def _found(code, idiom="grads-mask"):
  return scanned.in_text(code, idiom)


POSITIVE = {
    # nmasse/Short-term-plasticity-RNN: the mask is an entry of the
    # parameter dict, the gradient a pair of `compute_gradients`.
    "a gradient times a parameter dict's mask entry": ("""\
        from parameters import par

        opt = tf.train.AdamOptimizer(learning_rate=1e-3)
        grads_and_vars = opt.compute_gradients(loss)
        capped = []
        for grad, var in grads_and_vars:
          if "w_rnn" in var.op.name:
            grad *= par["w_rnn_mask"]
          capped.append((tf.clip_by_norm(grad, 1.0), var))
        train_op = opt.apply_gradients(capped)
        """, [("grads-mask", 8)]),
    # CSNLstudy/det_rnn: the tape's gradients of a dict of variables,
    # read through `.items()` (the key names the variable).
    "a gradient dict read through items()": ("""\
        def train_step(var_dict, hp, optimizer, x, y):
          with tf.GradientTape() as tape:
            loss = model_loss(var_dict, x, y)
          vars_and_grads = tape.gradient(loss, var_dict)
          capped = []
          for name, grad in vars_and_grads.items():
            if "w_rnn" in name:
              grad *= hp["w_rnn_mask"]
            capped.append((grad, var_dict[name]))
          optimizer.apply_gradients(grads_and_vars=capped)
        """, [("grads-mask", 8)]),
    # A hand-written Adam in TF2: the slots read after they are written,
    # the update times a fixed connectivity mask.
    "a hand-written Adam update times a fixed mask": ("""\
        import numpy as np
        n = 50
        w_rnn_mask = np.ones((n, n), np.float32) - np.eye(n, dtype=np.float32)
        w_rnn = tf.Variable(tf.random.normal([n, n]))
        m = tf.Variable(tf.zeros([n, n]), trainable=False)
        v = tf.Variable(tf.zeros([n, n]), trainable=False)

        def train_step(x, y, t):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(x, w_rnn) - y) ** 2)
          grad = tape.gradient(loss, w_rnn)
          m.assign(0.9 * m + 0.1 * grad)
          v.assign(0.999 * v + 0.001 * grad * grad)
          m_hat = m / (1 - 0.9 ** t)
          v_hat = v / (1 - 0.999 ** t)
          w_rnn.assign(w_rnn - 0.01 * m_hat / (tf.sqrt(v_hat) + 1e-8)
                       * w_rnn_mask)

        for t in range(1, 100):
          train_step(xs, ys, t)
        """, [("grads-mask", 16)]),
    # The same update in a Keras optimizer subclass.
    "a Keras optimizer's _resource_apply_dense masking its update": ("""\
        import numpy as np

        class MaskedAdam(tf.keras.optimizers.Adam):
          def __init__(self, masks, **kwargs):
            super().__init__(**kwargs)
            self.masks = masks

          def _resource_apply_dense(self, grad, var, apply_state=None):
            lr = self._decayed_lr(var.dtype.base_dtype)
            m = self.get_slot(var, "m")
            v = self.get_slot(var, "v")
            m_t = m.assign(0.9 * m + 0.1 * grad)
            v_t = v.assign(0.999 * v + 0.001 * grad * grad)
            update = lr * m_t / (tf.sqrt(v_t) + self.epsilon)
            return var.assign_sub(update * self.masks[var.name])

        mask = np.ones((10, 10), np.float32)
        mask[:5] = 0
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        model.compile(MaskedAdam({"dense/kernel:0": mask}), "mse")
        model.fit(x, y)
        """, [("grads-mask", 15)]),
    # nmasse/Chunking: the lab's AdamOpt, the delta masked by variable name
    # before `assign_add`.
    "the lab's AdamOpt masking its delta by the variable's name": ("""\
        import numpy as np
        from parameters import par

        class AdamOpt:
          def __init__(self, variables, learning_rate=0.001):
            self.variables = variables
            self.lr = learning_rate
            self.m = {}
            for var in self.variables:
              self.m[var.op.name] = tf.Variable(tf.zeros(var.get_shape()),
                                                trainable=False)
            self.grad_descent = tf.train.GradientDescentOptimizer(1.0)

          def compute_gradients(self, loss):
            self.gradients = self.grad_descent.compute_gradients(
                loss, var_list=self.variables)
            ops = []
            for (grads, _), var in zip(self.gradients, self.variables):
              new_m = 0.9 * self.m[var.op.name] + 0.1 * grads
              delta_grad = -self.lr * new_m
              ops.append(tf.assign(self.m[var.op.name], new_m))
              if "W_rnn" in var.op.name:
                delta_grad *= par["w_rnn_mask"]
              ops.append(tf.assign_add(var, delta_grad))
            return tf.group(*ops)

        opt = AdamOpt(tf.trainable_variables())
        train_op = opt.compute_gradients(loss)
        """, [("grads-mask", 23)]),
}

# The memory networks' nil-row helper: reported where the model applies
# it to its gradients (the loop over the pairs), not at the helper's
# `concat`, which every model of the file shares.
NIL_SLOT = """\
    def zero_nil_slot(t, name=None):
      with tf.name_scope(name, "zero_nil_slot", [t]) as name:
        t = tf.convert_to_tensor(t, name="t")
        s = tf.shape(t)[1]
        z = tf.zeros(tf.stack([1, s]))
        return tf.concat(axis=0, values=[z, tf.slice(t, [1, 0], [-1, -1])],
                         name=name)

    class MemN2N(object):
      def __init__(self, loss_op, nil_vars):
        self._opt = tf.train.GradientDescentOptimizer(learning_rate=0.01)
        self._nil_vars = set(nil_vars)
        grads_and_vars = self._opt.compute_gradients(loss_op)
        nil_grads_and_vars = []
        for g, v in grads_and_vars:
          if v.name in self._nil_vars:
            nil_grads_and_vars.append((zero_nil_slot(g), v))
          else:
            nil_grads_and_vars.append((g, v))
        self.train_op = self._opt.apply_gradients(nil_grads_and_vars)
    """


def test_the_nil_row_helper_is_reported_where_it_is_used():
  assert _found(NIL_SLOT) == [("grads-mask", 17)]


NEGATIVE = {
    # A warm-up gate on every variable alike: a schedule, not a freeze.
    "an update gated by the step": """\
        w = tf.Variable(tf.zeros([10, 10]))
        step = tf.Variable(0, trainable=False)

        def train_step(x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) - y)
          grad = tape.gradient(loss, w)
          w.assign_sub(0.1 * grad * tf.cast(step > 100, tf.float32))
          step.assign_add(1)

        for _ in range(1000):
          train_step(xs, ys)
        """,
    # A mask drawn anew each step: gradient dropout, every element moves.
    "a random mask drawn each step": """\
        w = tf.Variable(tf.zeros([10, 10]))

        def train_step(x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) - y)
          grad = tape.gradient(loss, w)
          keep_mask = tf.cast(tf.random.uniform([10, 10]) < 0.9, tf.float32)
          w.assign_sub(0.1 * grad * keep_mask)

        for _ in range(1000):
          train_step(xs, ys)
        """,
    # Gradients accumulated into a non-trainable buffer under a mask.
    "an accumulator masked": """\
        import numpy as np
        w = tf.Variable(tf.zeros([10, 10]))
        acc = tf.Variable(tf.zeros([10, 10]), trainable=False)
        valid_mask = np.ones((10, 10), np.float32)

        def accumulate(x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) - y)
          grad = tape.gradient(loss, w)
          acc.assign_add(grad * valid_mask)

        for _ in range(10):
          accumulate(xs, ys)
        """,
    # Decoupled weight decay in an optimizer: the variable, no mask.
    "weight decay in _resource_apply_dense": """\
        class AdamW(tf.keras.optimizers.Adam):
          def _resource_apply_dense(self, grad, var, apply_state=None):
            var.assign_sub(self.lr * self.wd * var)
            return super()._resource_apply_dense(grad, var, apply_state)
        """,
    # A loss scale's guard: non-finite elements zeroed, by a named check.
    "a named finite check in a loss-scaled step": """\
        def train_step(model, opt, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y)) * 1024.0
          grads = tape.gradient(loss, model.trainable_variables)
          new = []
          for g in grads:
            finite = tf.math.is_finite(g)
            new.append(tf.where(finite, g / 1024.0, tf.zeros_like(g)))
          opt.apply_gradients(zip(new, model.trainable_variables))
        """,
    "a list of finite masks zipped with the gradients": """\
        def train_step(model, opt, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y)) * 1024.0
          grads = tape.gradient(loss, model.trainable_variables)
          finite_mask = [tf.math.is_finite(g) for g in grads]
          grads = [tf.where(m, g / 1024.0, tf.zeros_like(g))
                   for m, g in zip(finite_mask, grads)]
          opt.apply_gradients(zip(grads, model.trainable_variables))
        """,
    # A causal (triangular) kernel: the update masked like the forward
    # pass, the shape of the parametrization.
    "a hand-written update under a triangular mask": """\
        class Model(tf.Module):
          def __init__(self):
            self.w = tf.Variable(tf.zeros([8, 8]))
            self.m = tf.Variable(tf.zeros([8, 8]), trainable=False)
            self.causal_mask = tf.linalg.band_part(tf.ones([8, 8]), -1, 0)

          def step(self, x, lr):
            with tf.GradientTape() as tape:
              loss = tf.reduce_sum(tf.matmul(x, self.w * self.causal_mask))
            g = tape.gradient(loss, self.w)
            self.m.assign(0.9 * self.m + 0.1 * g)
            self.w.assign_sub(lr * self.m * self.causal_mask)

        model = Model()
        for x in data:
          model.step(x, 0.1)
        """,
    # Sparse training: the masks re-ranked by magnitude every hundred
    # steps, in the loop that applies the updates.
    "masks re-ranked in the loop of hand-written steps": """\
        class SparseSGD:
          def __init__(self, variables):
            self.masks = [tf.Variable(tf.ones_like(v), trainable=False)
                          for v in variables]

          def apply(self, grads, variables, lr):
            for g, v, mask in zip(grads, variables, self.masks):
              v.assign_sub(lr * g * mask)

          def update_masks(self, variables):
            for v, mask in zip(variables, self.masks):
              score = tf.abs(v)
              threshold = tf.sort(tf.reshape(score, [-1]))[100]
              mask.assign(tf.cast(score > threshold, tf.float32))

        variables = model.trainable_variables
        opt = SparseSGD(variables)
        for step, (x, y) in enumerate(data):
          with tf.GradientTape() as tape:
            loss = loss_fn(model(x), y)
          grads = tape.gradient(loss, variables)
          opt.apply(grads, variables, 0.1)
          if step % 100 == 0:
            opt.update_masks(variables)
        """,
    # An optimizer's own NaN guard: the update of non-finite elements
    # skipped, step by step.
    "an optimizer's update under a finite check": """\
        class SafeAdam(tf.keras.optimizers.Adam):
          def _resource_apply_dense(self, grad, var, apply_state=None):
            m = self.get_slot(var, "m")
            v = self.get_slot(var, "v")
            m_t = m.assign(0.9 * m + 0.1 * grad)
            v_t = v.assign(0.999 * v + 0.001 * tf.square(grad))
            nan_mask = tf.cast(tf.math.is_finite(m_t), var.dtype)
            return var.assign_sub(
                self.lr * m_t / (tf.sqrt(v_t) + 1e-7) * nan_mask)

        model.compile(SafeAdam(), "mse")
        model.fit(x, y)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_masked_update_is_found(name):
  code, expected = POSITIVE[name]
  assert _found(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_is_not_a_masked_update(name):
  assert _found(NEGATIVE[name]) == []
