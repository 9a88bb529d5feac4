"""`tfpartial scan` on meta-learning code (part 27): a subclass whose
override of the inner step cuts the list its base trains whole
(`var_list=self.model_variables[-4:]`), found; a one-class meta-learner
that saves every layer, adapts to a validation task, evaluates and puts
every layer back, silent (an evaluation, not a freeze). Beside them the
look-alikes that stay silent: the same override over the whole list, two
halves of a GAN, a target network synced from the trained one, and the
weights restored after each step (found: that one does freeze)."""

import textwrap

import pytest

import scanned

_BASE = """\
    import tensorflow as tf


    class MAML(object):
        def __init__(self, model_cls, lr, meta_lr):
            self.model_cls = model_cls
            self.lr = lr
            self.optimizer = tf.train.GradientDescentOptimizer(lr)
            self.meta_optimizer = tf.train.AdamOptimizer(meta_lr)
            self.inner_train_ops = []

        def build(self, x, y, xv, yv):
            with tf.variable_scope('model', reuse=tf.AUTO_REUSE):
                self.model = self.model_cls(x)
                self.model_variables = tf.get_collection(
                    tf.GraphKeys.GLOBAL_VARIABLES, scope='model')
            loss = tf.losses.softmax_cross_entropy(y, self.model.output)
            grads = self._inner_gradients(loss)
            updated = {}
            for g, v in grads:
                updated[v.name] = v - self.lr * g
                self.inner_train_ops.append(tf.assign(v, updated[v.name]))
            fast = self.model_cls(xv, weights=updated)
            meta_loss = tf.losses.softmax_cross_entropy(yv, fast.output)
            meta_grads = self.meta_optimizer.compute_gradients(
                meta_loss, var_list=self.model_variables)
            self.meta_op = self.meta_optimizer.apply_gradients(meta_grads)

        def _inner_gradients(self, loss):
            return self.optimizer.compute_gradients(
                loss, var_list=self.model_variables)
    {extra}

    class Progressive(MAML):
        def _inner_gradients(self, loss):
            grads = self.optimizer.compute_gradients(
                loss,
                var_list={override})
            return grads
    """

# A new head started from the last layers' values, then trained alone: a
# copy that a step trains, not a target network's sync.
_NEW_HEAD = """\
def learn_new_concept(self, x, y, head_vars, loss):
            op1 = tf.assign(head_vars[0], self.model_variables[-2])
            op2 = tf.assign(head_vars[1], self.model_variables[-1])
            op = self.optimizer.minimize(loss, var_list=head_vars)
            self.sess.run((op1, op2))
            for _ in range(10):
                self.sess.run(op)
    """


def _maml(override, extra=""):
  return _BASE.replace("{override}", override).replace("{extra}", extra)


def _line(code, text):
  """The line of `text` in `code` as the scan reads it (dedented)."""
  lines = textwrap.dedent(code).splitlines()
  return next(i for i, line in enumerate(lines, 1) if text in line)


_CUT = "var_list=self.model_variables["


# The one-class meta-learner's validation: every layer saved, the model
# adapted to a task, evaluated, every layer put back.
_EVALUATED = """\
    import tensorflow as tf


    class OneClassMAML(object):
        def build(self):
            self.finetune_update_op = tf.train.GradientDescentOptimizer(
                self.lr).minimize(self.finetune_loss)

        def val_op(self, x_adapt, y_adapt, x_test, y_test):
            old_vars = []
            for layer_idx in range(0, len(self.layers)):
                old_vars.append(self.layers[layer_idx].get_weights())
            for i in range(self.num_updates):
                self.sess.run(self.finetune_update_op,
                              {self.X: x_adapt, self.Y: y_adapt})
            loss, acc = self.sess.run([self.test_loss, self.acc],
                                      {self.X: x_test, self.Y: y_test})
            for layer_idx in range(0, len(self.layers)):
                self.layers[layer_idx].set_weights(old_vars[layer_idx])
            return loss, acc
    """

# The multi-task baseline's validation: the shared layers and the
# validation task's head saved, fine-tuned with early stopping, put back.
_EVALUATED_PARTS = """\
    import tensorflow as tf


    class MTL(object):
        def build(self, shared_vars, val_task_vars):
            self.val_finetune_op = tf.train.AdamOptimizer(self.lr).minimize(
                self.val_loss, var_list=val_task_vars + shared_vars)

        def val_op(self, x_adapt, y_adapt, x_test, y_test, n):
            old_vars = []
            for layer_idx in range(0, len(self.shared_layers)):
                old_vars.append(self.shared_layers[layer_idx].get_weights())
            for layer_idx in range(0, n):
                old_vars.append(self.task_layers[-2 * n + layer_idx].get_weights())
            best = 1e9
            for epoch in range(self.epochs):
                self.sess.run(self.val_finetune_op, {self.X: x_adapt, self.Y: y_adapt})
                loss = self.val_loss.eval({self.X: x_test, self.Y: y_test})
                if loss >= best:
                    break
                best = loss
            for layer_idx in range(0, len(self.shared_layers)):
                self.shared_layers[layer_idx].set_weights(old_vars[layer_idx])
            n_shared = len(self.shared_layers)
            for layer_idx in range(0, n):
                self.task_layers[-2 * n + layer_idx].set_weights(
                    old_vars[layer_idx + n_shared])
            return best
    """

# The same saved layers put back after each step of training: the first
# two layers stay as they were while the rest train (a freeze).
_EACH_STEP = """\
    import tensorflow as tf


    class Trainer(object):
        def build(self):
            self.train_op = tf.train.AdamOptimizer(self.lr).minimize(self.loss)

        def train(self, batches):
            old_vars = []
            for layer_idx in range(0, 2):
                old_vars.append(self.layers[layer_idx].get_weights())
            for x, y in batches:
                self.sess.run(self.train_op, {self.X: x, self.Y: y})
                for layer_idx in range(0, 2):
                    self.layers[layer_idx].set_weights(old_vars[layer_idx])
    """

# A GAN whose subclass overrides the discriminator's step with its own
# list (not a cut of the generator's): two halves, each trained.
_GAN = """\
    import tensorflow as tf


    class GAN(object):
        def build(self, g_loss, d_loss):
            self.g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='gen')
            self.d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='disc')
            self.g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=self.g_vars)
            self.d_op = self._d_step(d_loss)

        def _d_step(self, d_loss):
            return tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=self.d_vars)


    class WGAN(GAN):
        def _d_step(self, d_loss):
            return tf.train.RMSPropOptimizer(5e-5).minimize(d_loss, var_list=self.d_vars)
    """

# A DQN whose target network is synced from the trained one: the written
# group is trained by no step.
_TARGET = """\
    import tensorflow as tf


    class DQN(object):
        def build(self, loss):
            q_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='q')
            t_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='target')
            self.sync = [tf.assign(t, q) for t, q in zip(t_vars, q_vars)]
            self.sync_first = tf.assign(t_vars[0], q_vars[0])
            self.train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=q_vars)
    """

# ANIL / meta-transfer learning's base learner: the inner loop of each
# episode (a function nested in the one that makes the weight groups)
# adapts the head alone, on the output of the body it leaves as it is.
_HEAD_ONLY = """\
    import tensorflow as tf


    class Maml:
        def construct_model(self):
            weights = self.construct_conv_weights()
            fc_weights = self.construct_fc_weights()
            def task(inp):
                xa, xb, ya, yb = inp
                emb_a = self.forward_conv(xa, weights)
                emb_b = self.forward_conv(xb, weights)
                lossa = self.loss(self.forward_fc(emb_a, fc_weights), ya)
                grads = tf.gradients(lossa, list(fc_weights.values()))
                g = dict(zip(fc_weights.keys(), grads))
                fast = {k: fc_weights[k] - 0.01 * g[k] for k in fc_weights}
                return self.loss(self.forward_fc(emb_b, fast), yb)
            total = tf.reduce_mean(tf.map_fn(task, self.inputs))
            self.op = tf.train.AdamOptimizer(1e-3).minimize(
                total, var_list=list(weights.values()) + list(fc_weights.values()))
    """

# The same with one forward over both groups (`forward(x, weights,
# fc_weights)`), as the scan read it before part 27.
_HEAD_ONLY_ONE_FORWARD = """\
    import tensorflow as tf


    class Maml:
        def construct_model(self):
            weights = self.construct_conv_weights()
            fc_weights = self.construct_fc_weights()
            def task(inp):
                xa, xb, ya, yb = inp
                lossa = self.loss(self.forward(xa, weights, fc_weights), ya)
                grads = tf.gradients(lossa, list(fc_weights.values()))
                g = dict(zip(fc_weights.keys(), grads))
                fast = {k: fc_weights[k] - 0.01 * g[k] for k in fc_weights}
                return self.loss(self.forward(xb, weights, fast), yb)
            total = tf.reduce_mean(tf.map_fn(task, self.inputs))
            self.op = tf.train.AdamOptimizer(1e-3).minimize(
                total, var_list=list(weights.values()) + list(fc_weights.values()))
    """

# MAML proper: the inner loop adapts every group the forward takes.
_EVERY_GROUP = """\
    import tensorflow as tf


    class Maml:
        def construct_model(self):
            weights = self.construct_conv_weights()
            fc_weights = self.construct_fc_weights()
            def task(inp):
                xa, xb, ya, yb = inp
                emb_a = self.forward_conv(xa, weights)
                lossa = self.loss(self.forward_fc(emb_a, fc_weights), ya)
                grads = tf.gradients(lossa, list(weights.values()) + list(fc_weights.values()))
                fast = [w - 0.01 * g for w, g in zip(
                    list(weights.values()) + list(fc_weights.values()), grads)]
                return self.loss(self.forward(xb, fast), yb)
            total = tf.reduce_mean(tf.map_fn(task, self.inputs))
            self.op = tf.train.AdamOptimizer(1e-3).minimize(
                total, var_list=list(weights.values()) + list(fc_weights.values()))
    """

# A GAN's generator and discriminator, each a group the function makes,
# the discriminator run on the generator's output: two halves.
_GAN_GROUPS = """\
    import tensorflow as tf


    class Gan:
        def build(self, z, x):
            g_weights = self.construct_generator_weights()
            d_weights = self.construct_discriminator_weights()
            def losses(inp):
                fake = self.generator(inp, g_weights)
                return self.discriminator(fake, d_weights), self.discriminator(x, d_weights)
            g_loss, d_real = losses(z)
            self.d_op = tf.train.AdamOptimizer(1e-4).minimize(
                -d_real, var_list=list(d_weights.values()))
            self.g_op = tf.train.AdamOptimizer(1e-4).minimize(
                g_loss, var_list=list(g_weights.values()))
    """

_INNER = "grads = tf.gradients(lossa"

# A MAML for segmentation that adapts only layers 10 to 12: their entries
# copied into a dict, its gradients taken, and the weights the network
# runs on merged back from the adapted entries and the others as they are.
_SUBSET = """\
    import tensorflow as tf


    def build_meta_block(input_a, output_a, input_b, inner_lr=0.01, layer_st=10, layer_ed=13):
        inner_output, weights = build_unet(input_a, prefix="first_")
        subset_weights = {}
        for l in range(layer_st, layer_ed):
            subset_weights['w' + str(l)] = weights['w' + str(l)]
            subset_weights['b' + str(l)] = weights['b' + str(l)]
        inner_loss = cross_entropy(inner_output, output_a)
        grads = tf.gradients(inner_loss, list(subset_weights.values()))
        grads = [tf.stop_gradient(g) for g in grads]
        gradients = dict(zip(subset_weights.keys(), grads))
        sub_fast = dict(zip(subset_weights.keys(), [
            subset_weights[key] - inner_lr * gradients[key] for key in subset_weights.keys()]))
        fast_weights = {}
        for k in weights.keys():
            if k in subset_weights:
                fast_weights[k] = sub_fast[k]
            else:
                fast_weights[k] = weights[k]
        return run_unet(input_b, fast_weights)
    """

# MAML over every weight of the dict: no subset, nothing merged back.
_EVERY_ENTRY = """\
    import tensorflow as tf


    def build_meta_block(input_a, output_a, input_b, inner_lr=0.01):
        inner_output, weights = build_unet(input_a, prefix="first_")
        inner_loss = cross_entropy(inner_output, output_a)
        grads = tf.gradients(inner_loss, list(weights.values()))
        gradients = dict(zip(weights.keys(), grads))
        fast_weights = dict(zip(weights.keys(), [
            weights[key] - inner_lr * gradients[key] for key in weights.keys()]))
        return run_unet(input_b, fast_weights)
    """

# A subset adapted, the other entries adapted by a second inner step of
# their own before the merge: every entry moves.
_BOTH_ADAPTED = _SUBSET.replace(
    "                fast_weights[k] = weights[k]",
    "                fast_weights[k] = weights[k] - inner_lr * others[k]")

# A GAN's generator and discriminator entries copied from one dict of
# weights, each half minimised on its own loss; no merge.
_GAN_ENTRIES = """\
    import tensorflow as tf


    def build(z, x, weights):
        g_vars, d_vars = {}, {}
        for l in range(0, 4):
            g_vars['g' + str(l)] = weights['g' + str(l)]
        for l in range(0, 3):
            d_vars['d' + str(l)] = weights['d' + str(l)]
        fake = generator(z, weights)
        d_loss = -tf.reduce_mean(discriminator(x, weights) - discriminator(fake, weights))
        g_loss = -tf.reduce_mean(discriminator(fake, weights))
        d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=list(d_vars.values()))
        g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=list(g_vars.values()))
        return d_op, g_op
    """

FOUND = {
    "an inner loop over some layers' entries, the rest merged back": (
        _SUBSET, [("var-list-filter", _line(
            _SUBSET, "subset_weights['w' + str(l)] = "))]),
    "an episode's inner loop adapting the head on the body's output": (
        _HEAD_ONLY, [("var-list-filter", _line(_HEAD_ONLY, _INNER))]),
    "an episode's inner loop adapting the head in one forward": (
        _HEAD_ONLY_ONE_FORWARD,
        [("var-list-filter", _line(_HEAD_ONLY_ONE_FORWARD, _INNER))]),
    "an override cutting the base's inner list to its tail": (
        _maml("self.model_variables[-4:]"),
        [("var-list-filter", _line(_maml("self.model_variables[-4:]"), _CUT))]),
    "an override cutting the base's inner list between two bounds": (
        _maml("self.model_variables[2:6]"),
        [("var-list-filter", _line(_maml("self.model_variables[2:6]"), _CUT))]),
    "the cut beside a new head started from copied values": (
        _maml("self.model_variables[-4:]", _NEW_HEAD),
        [("var-list-filter", _line(
            _maml("self.model_variables[-4:]", _NEW_HEAD), _CUT))]),
    "saved layers put back after each step": (
        _EACH_STEP, [("write-back", 15)]),
}

SILENT = {
    "an inner loop over every entry of the dict": _EVERY_ENTRY,
    "the entries left out adapted too before the merge": _BOTH_ADAPTED,
    "a GAN's halves copied as entries of one dict": _GAN_ENTRIES,
    "an episode's inner loop adapting every group": _EVERY_GROUP,
    "a GAN's halves made as groups, one run on the other's output":
        _GAN_GROUPS,
    "an override over the base's whole list": _maml("self.model_variables"),
    "every layer put back after an evaluation-only adaptation": _EVALUATED,
    "the adapted parts put back after an evaluation with early stopping":
        _EVALUATED_PARTS,
    "a GAN's subclass overriding one half's step with its own list": _GAN,
    "a target network synced from the trained one": _TARGET,
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found(name):
  code, expected = FOUND[name]
  got = [f for f in scanned.in_text(code) if f[0] in {
      "var-list-filter", "write-back", "weight-remask", "shadow-variable"}]
  assert got == expected


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent(name):
  assert scanned.in_text(SILENT[name]) == []
