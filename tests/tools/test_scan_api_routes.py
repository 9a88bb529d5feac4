"""`tfpartial scan` on the TensorFlow/Keras API routes to a partial freeze
that code nobody registered takes: a Keras `train_step` override that
trains one part of the model (`self.head.trainable_variables`) run on
another part's output (`self.head(self.backbone(x))`), through a local
name or at `self.optimizer.minimize(loss, variables, tape=tape)`; a
`LambdaCallback(on_batch_end=lambda ...: w.assign(w * mask))`; a
`tf.custom_gradient` masking what flows back to a weight; a callback
writing a variable back from a copy it took under the constructor's
parameter; a sparse gradient rebuilt from the rows a test of its ids
keeps (`tf.gather(g.values, tf.where(g.indices >= n)[:, 0])`). The
look-alikes stay silent: a GAN's `train_step` training
both halves, a distiller training its student beside a teacher, a
backbone set `trainable = False` (frozen whole), a second step training
the whole model, an augmenting function (`self.aug_fn`) feeding the
trained model; an evaluation hook's lambda, a mask recomputed from the
weights, an average; a custom gradient that clips, or one applied to
activations; a whole variable rewound at the end, an average kept by a
callback; a sparse gradient's rows kept where their values are finite. Synthetic sources in the shape of real code."""

import pytest

from tests.tools import scanned

_found = scanned.found

_HEAD_STEP = """\
    class Classifier(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.backbone = tf.keras.applications.ResNet50(include_top=False)
            self.head = tf.keras.layers.Dense(10)
        def call(self, x):
            return self.head(self.backbone(x))
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.compiled_loss(y, self(x, training=True))
            grads = tape.gradient(loss, self.head.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.head.trainable_variables))
            return {"loss": loss}
"""

_TUNER = """\
    class Tuner(tf.keras.Model):
        def __init__(self, base, head):
            super().__init__()
            self.base = base
            self.head = head
        def call(self, x):
            features = self.base(x)
            return self.head(features)
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.compiled_loss(y, self(x, training=True))
            variables = self.head.trainable_weights
            self.optimizer.minimize(loss, variables, tape=tape)
            return {"loss": loss}
"""

_GAN = """\
    class GAN(keras.Model):
        def __init__(self, generator, discriminator):
            super().__init__()
            self.generator = generator
            self.discriminator = discriminator
        def call(self, z):
            return self.discriminator(self.generator(z))
        def train_step(self, real):
            z = tf.random.normal((64, 128))
            with tf.GradientTape() as tape:
                d_loss = self.loss_fn(real, self.discriminator(self.generator(z)))
            grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
            with tf.GradientTape() as tape:
                g_loss = self.loss_fn(real, self.discriminator(self.generator(z)))
            grads = tape.gradient(g_loss, self.generator.trainable_weights)
            self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
            return {"d_loss": d_loss, "g_loss": g_loss}
"""

_DISTILLER = """\
    class Distiller(keras.Model):
        def __init__(self, student, teacher):
            super().__init__()
            self.teacher = teacher
            self.student = student
        def call(self, x):
            return self.student(x)
        def train_step(self, data):
            x, y = data
            teacher_predictions = self.teacher(x, training=False)
            with tf.GradientTape() as tape:
                student_predictions = self.student(x, training=True)
                loss = self.distillation_loss_fn(teacher_predictions, student_predictions)
            grads = tape.gradient(loss, self.student.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.student.trainable_variables))
            return {"loss": loss}
"""

_FROZEN_WHOLE = _HEAD_STEP.replace(
    "self.head = tf.keras.layers.Dense(10)",
    "self.head = tf.keras.layers.Dense(10)\n"
    "        self.backbone.trainable = False")

_SECOND_PHASE = _HEAD_STEP.replace(
    '            return {"loss": loss}',
    '            return {"loss": loss}\n'
    "        def fine_tune_step(self, x, y):\n"
    "            with tf.GradientTape() as tape:\n"
    "                loss = self.compiled_loss(y, self(x))\n"
    "            grads = tape.gradient(loss, self.trainable_variables)\n"
    "            self.optimizer.apply_gradients("
    "zip(grads, self.trainable_variables))")


_AUGMENTED = """\
    class Contrastive(tf.keras.Model):
        def __init__(self, encoder, aug_fn):
            super().__init__()
            self.encoder = encoder
            self.aug_fn = aug_fn
        def train_step(self, images):
            with tf.GradientTape() as tape:
                q = self.encoder(self.aug_fn(images), training=True)
                loss = contrastive_loss(q)
            t_var = self.encoder.trainable_variables
            grads = tape.gradient(loss, t_var)
            self.optimizer.apply_gradients(zip(grads, t_var))
            return {"loss": loss}
"""


@pytest.mark.parametrize("source, expected", [
    (_HEAD_STEP, [("var-list-filter", 12)]),
    (_TUNER, [("var-list-filter", 13)]),
    (_GAN, []),
    (_DISTILLER, []),
    (_FROZEN_WHOLE, []),
    (_SECOND_PHASE, []),
    (_AUGMENTED, []),
], ids=["head-step", "tuner-minimize", "gan", "distiller", "frozen-whole",
        "second-phase", "augmented"])
def test_a_train_step_training_one_part(source, expected):
  assert _found(source) == expected


_LAMBDA_REMASK = """\
    layer = model.get_layer("dense")
    mask = np.load("mask.npy")
    remask = tf.keras.callbacks.LambdaCallback(
        on_batch_end=lambda batch, logs: layer.kernel.assign(layer.kernel * mask))
    model.fit(x, y, epochs=10, callbacks=[remask])
"""

_LAMBDA_EVALUATING = _LAMBDA_REMASK.replace("on_batch_end", "on_test_batch_end")

_LAMBDA_MAGNITUDE = _LAMBDA_REMASK.replace(
    "layer.kernel * mask",
    "layer.kernel * tf.cast(tf.abs(layer.kernel) > 0.01, tf.float32)")

_LAMBDA_AVERAGE = """\
    w = model.get_layer("dense").kernel
    average = tf.Variable(w, trainable=False)
    keep = tf.keras.callbacks.LambdaCallback(
        on_batch_end=lambda batch, logs: average.assign(0.99 * average + 0.01 * w))
    model.fit(x, y, epochs=10, callbacks=[keep])
"""


@pytest.mark.parametrize("source, expected", [
    (_LAMBDA_REMASK, [("weight-remask", 4)]),
    (_LAMBDA_EVALUATING, []),
    (_LAMBDA_MAGNITUDE, []),
    (_LAMBDA_AVERAGE, []),
], ids=["remask", "evaluating", "magnitude", "average"])
def test_a_lambda_given_as_a_training_hook(source, expected):
  assert _found(source) == expected


_CUSTOM_GRADIENT = """\
    def partial_trainable(w, mask):
        @tf.custom_gradient
        def frozen_part(x):
            def grad(dy):
                return dy * mask
            return tf.identity(x), grad
        return frozen_part(w)

    class MaskedDense(tf.keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight("w", shape=(shape[-1], 10))
            self.mask = tf.constant(np.load("trainable_mask.npy"))
        def call(self, x):
            return tf.matmul(x, partial_trainable(self.w, self.mask))
"""

_CUSTOM_GRADIENT_ROWS = """\
    class PartialEmbedding(tf.keras.layers.Layer):
        def __init__(self, vocab, dim, n_frozen):
            super().__init__()
            self.n_frozen = n_frozen
            self.table = self.add_weight("table", shape=(vocab, dim))
        def call(self, ids):
            @tf.custom_gradient
            def frozen_rows(t):
                def grad(dy):
                    return tf.concat([tf.zeros_like(dy[:self.n_frozen]), dy[self.n_frozen:]], 0)
                return tf.identity(t), grad
            return tf.nn.embedding_lookup(frozen_rows(self.table), ids)
"""

_CUSTOM_GRADIENT_CLIPPED = _CUSTOM_GRADIENT.replace(
    "return dy * mask", "return tf.clip_by_norm(dy, 1.0)")

_CUSTOM_GRADIENT_ACTIVATIONS = """\
    @tf.custom_gradient
    def masked_backward(x):
        def grad(dy):
            return dy * keep_mask
        return tf.identity(x), grad

    class Block(tf.keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight("w", shape=(shape[-1], 10))
        def call(self, x):
            h = tf.nn.relu(tf.matmul(x, self.w))
            return masked_backward(h)
"""


@pytest.mark.parametrize("source, expected", [
    (_CUSTOM_GRADIENT, [("grads-mask", 5)]),
    (_CUSTOM_GRADIENT_ROWS, [("grads-mask", 10)]),
    (_CUSTOM_GRADIENT_CLIPPED, []),
    (_CUSTOM_GRADIENT_ACTIVATIONS, []),
], ids=["mask", "rows", "clipped", "activations"])
def test_a_custom_gradient_masking_a_weight(source, expected):
  assert _found(source) == expected


_KEPT_ROWS = """\
    class KeepFrozen(tf.keras.callbacks.Callback):
        def __init__(self, var, frozen):
            super().__init__()
            self.var = var
            self.frozen = frozen
            self.saved = tf.identity(var)
        def on_train_batch_end(self, batch, logs=None):
            self.var.assign(tf.where(self.frozen, self.saved, self.var))

    table = model.get_layer("embedding").embeddings
    model.fit(x, y, callbacks=[KeepFrozen(table, old_rows_mask)])
"""

_REWOUND = """\
    class Rewind(tf.keras.callbacks.Callback):
        def __init__(self, var):
            super().__init__()
            self.var = var
            self.saved = tf.identity(var)
        def on_train_end(self, logs=None):
            self.var.assign(self.saved)

    model.fit(x, y, callbacks=[Rewind(model.layers[0].kernel)])
"""

_AVERAGED = """\
    class Average(tf.keras.callbacks.Callback):
        def __init__(self, var):
            super().__init__()
            self.var = var
            self.average = tf.Variable(tf.identity(var), trainable=False)
        def on_train_batch_end(self, batch, logs=None):
            self.average.assign(0.99 * self.average + 0.01 * self.var)

    model.fit(x, y, callbacks=[Average(model.layers[0].kernel)])
"""


@pytest.mark.parametrize("source, expected", [
    (_KEPT_ROWS, [("shadow-variable", 8)]),
    (_REWOUND, []),
    (_AVERAGED, []),
], ids=["kept-rows", "rewound", "averaged"])
def test_a_copy_taken_under_the_constructors_name(source, expected):
  assert _found(source) == expected


_ROWS_KEPT_BY_ID = """\
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        g = grads[0]
        keep = tf.where(g.indices >= num_pretrained)[:, 0]
        grads[0] = tf.IndexedSlices(tf.gather(g.values, keep), tf.gather(g.indices, keep), g.dense_shape)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

_ROWS_KEPT_FINITE = _ROWS_KEPT_BY_ID.replace(
    "tf.where(g.indices >= num_pretrained)[:, 0]",
    "tf.where(tf.reduce_all(tf.math.is_finite(g.values), axis=1))[:, 0]")


@pytest.mark.parametrize("source, expected", [
    (_ROWS_KEPT_BY_ID, [("grads-mask", 7)]),
    (_ROWS_KEPT_FINITE, []),
], ids=["by-id", "finite"])
def test_a_sparse_gradients_rows_kept_by_id(source, expected):
  assert _found(source) == expected
