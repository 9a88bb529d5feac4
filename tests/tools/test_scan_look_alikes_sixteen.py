"""`tfpartial scan` on code that looks like a hand-made freeze and is
not, in the families the negatives of parts twelve and thirteen showed:
learning-rate multipliers read by a variable's name, weight decay over
the weights but not the biases, a filter only saved or logged, a
per-tower gradient average, an adversarial perturbation trained alone,
a target network's Polyak average, a mask used in a loss. Beside them
the freezes they resemble stay found. Synthetic sources in the shape of
real code."""

import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


_found = scanned.found


# Each gradient scaled by its variable's learning-rate multiplier, if it
# has one; every pair is kept.
_SCALED = """\
    import tensorflow as tf

    LR_MULT = {{'conv1/weights:0': 0.1}}

    def scaled(grads_and_vars):
      out = []
      for grad, var in grads_and_vars:
        scale = LR_MULT.get(var.name)
        if {test}:
          grad *= scale
        {append}
      return out

    def train(loss, lr):
      opt = tf.train.MomentumOptimizer(lr, 0.9)
      grads = opt.compute_gradients(loss)
      return opt.apply_gradients(scaled(grads))
    """

_KEPT = "out.append((grad, var))"

# Each variable's gradients of the towers averaged, a mask choosing the
# towers (batches) that count: whole towers, not elements of a variable.
_TOWERS = """\
    import tensorflow as tf

    def average_gradients(tower_grads, mask=None):
      average_grads = []
      for grad_and_vars in zip(*tower_grads):
        grads = []
        for g, _ in grad_and_vars:
          grads.append(tf.expand_dims(g, 0))
        grad = {stacked}
        if mask is not None:
          grad = tf.boolean_mask(grad, tf.cast(mask, tf.bool), axis=0)
        grad = tf.reduce_mean(grad, 0)
        average_grads.append((grad, grad_and_vars[0][1]))
      return average_grads

    def train(opt, tower_losses, mask):
      tower_grads = [opt.compute_gradients(l) for l in tower_losses]
      return opt.apply_gradients(average_gradients(tower_grads, mask))
    """

# A greedy attack on a graph: edges flipped one by one where the loss's
# gradient is largest, by writing the object's own perturbation weights;
# no optimizer trains anything.
_ATTACK = """\
    import tensorflow as tf

    class EdgeAttack(Attacker):
      def setup(self, n):
        self.edge_weights = tf.Variable(tf.ones([n]))

      def attack(self, budget):
        for _ in range(budget):
          with tf.GradientTape() as tape:
            loss = self.surrogate(self.edge_weights)
          grad = tape.gradient(loss, self.edge_weights)
          self.flip(tf.argmax(grad))

      def flip(self, index):
        self.edge_weights[index].assign(0.0)
    {more}
    """

# A pruner's TF1 op that re-multiplies a layer by its mask, returned to
# callers that drop it (a graph op built and never run), or run.
_PRUNER = """\
    import numpy as np
    import tensorflow as tf

    class PruneConv2D(object):
      def __init__(self, layer):
        self.layer = layer

      def apply(self, mask_code):
        self.mask = np.array(mask_code, dtype=np.float32)
        return tf.assign(self.layer, self.layer * tf.constant(self.mask))

    def prune(model, masks, sess):
      for layer, mask in zip(model.kernels, masks):
        {use}
    """

# A data set's labels built in a loop over files a test chooses, fed
# beside the train op; beside it, gradients zeroed for the variables a
# test names, fed to the apply's placeholders.
_LABELS = """\
    import os
    import tensorflow as tf

    def read(folder):
      data, labels = [], []
      for file in os.listdir(folder):
        if file.endswith('.txt'):
          data.append(open(file).read())
          labels.append(0)
      return data, labels

    def train(x, y, loss, folder):
      words, labels = read(folder)
      opt = tf.train.AdamOptimizer(0.01).minimize(loss)
      with tf.Session() as session:
        session.run([opt, loss], feed_dict={x: words, y: labels})
    """

POSITIVE = {
    "zeros for the gradients of the variables a test names": (
        """\
        def step(model, opt, x):
          with tf.GradientTape() as tape:
            loss = model(x)
          grads = tape.gradient(loss, model.trainable_variables)
          new_grads = []
          for g, v in zip(grads, model.trainable_variables):
            if v.name.endswith('embeddings:0'):
              new_grads.append(tf.zeros_like(g))
            else:
              new_grads.append(g)
          opt.apply_gradients(zip(new_grads, model.trainable_variables))
        """, [("grads-mask", 8)]),
    "a pruner's re-mask op that is run": (
        _PRUNER.format(use="sess.run(PruneConv2D(layer).apply(mask))"),
        [("weight-remask", 10)]),
    # A layer's own row set back to zeros with each call: a re-mask.
    "a layer's own row set back to zeros": (
        _ATTACK.replace("def attack(", "def call(").format(more=""),
        [("weight-remask", 15)]),
    # One gradient's rows dropped by a mask before the apply.
    "a gradient's own rows dropped by a boolean mask": (
        _TOWERS.format(stacked="grad_and_vars[0][0]"),
        [("grads-mask", 11)]),
    # The pair appended only where the name is chosen: a filter.
    "pairs appended only where the name is chosen": (
        _SCALED.format(test="'conv1' in var.name", append="  " + _KEPT),
        [("var-list-filter", 17)]),
}

NEGATIVE = {
    # An attack's own variables, chosen by their scope, trained alone.
    "an attack's variables, by their scope, trained alone": """\
        import tensorflow as tf

        def attack(model, x, eps, sess):
          with tf.variable_scope('adv'):
            delta = tf.get_variable('delta', x.shape)
          loss = -model.loss(x + delta)
          adv_vars = [v for v in tf.global_variables()
                      if v.name.startswith('adv')]
          train = tf.train.AdamOptimizer(0.01).minimize(
              loss, var_list=adv_vars)
          sess.run(tf.variables_initializer(adv_vars))
          for _ in range(100):
            sess.run(train)
        """,
    # The variables AdamW decays; it trains every variable.
    "the variables an optimizer decays": """\
        import tensorflow as tf

        def train(loss, lr):
          decay_vars = [v for v in tf.trainable_variables()
                        if 'kernel' in v.name]
          opt = tf.contrib.opt.AdamWOptimizer(1e-4, learning_rate=lr)
          return opt.minimize(loss, decay_var_list=decay_vars)
        """,
    # Each gradient scaled by the multipliers its name matches.
    "a learning-rate dict read in a loop over names": """\
        import tensorflow as tf

        LR = {'dense': 0.1}

        def step(model, x, y, opt):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
          grads = tape.gradient(loss, model.trainable_variables)
          scaled = []
          for g, v in zip(grads, model.trainable_variables):
            for key, mult in LR.items():
              if key in v.name:
                g = g * mult
            scaled.append(g)
          opt.apply_gradients(zip(scaled, model.trainable_variables))
        """,
    "a label 0 for the files a test chooses": _LABELS,
    # Weight decay over the weights but not the biases; the step trains
    # every variable.
    "a weight-decay filter for an L2 loss": """\
        import tensorflow as tf

        def train(logits, labels, lr):
          loss = tf.losses.softmax_cross_entropy(labels, logits)
          decayed = [v for v in tf.trainable_variables()
                     if 'bias' not in v.name]
          loss += 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in decayed])
          return tf.train.AdamOptimizer(lr).minimize(loss)
        """,
    # A filter saved or logged only; the step trains everything.
    "a filter only for a Saver and logging": """\
        import tensorflow as tf

        def train(loss, lr):
          encoder = [v for v in tf.global_variables()
                     if v.name.startswith('encoder')]
          saver = tf.train.Saver(var_list=encoder)
          for v in encoder:
            tf.summary.histogram(v.name, v)
          train_op = tf.train.AdamOptimizer(lr).minimize(loss)
          return train_op, saver
        """,
    # A target network's Polyak average, written from the trained one.
    "a target network's Polyak average": """\
        import tensorflow as tf

        def build(q_loss, tau, lr):
          q_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'q')
          target_vars = tf.get_collection(
              tf.GraphKeys.GLOBAL_VARIABLES, 'target_q')
          train_op = tf.train.AdamOptimizer(lr).minimize(
              q_loss, var_list=q_vars)
          update = [t.assign(tau * s + (1 - tau) * t)
                    for s, t in zip(q_vars, target_vars)]
          return train_op, tf.group(*update)
        """,
    # An exponential moving average of the weights, for evaluation.
    "an EMA of the weights": """\
        import tensorflow as tf

        def train(loss, lr, step):
          opt = tf.train.MomentumOptimizer(lr, 0.9)
          train_op = opt.minimize(loss, global_step=step)
          ema = tf.train.ExponentialMovingAverage(0.999, step)
          with tf.control_dependencies([train_op]):
            return ema.apply(tf.trainable_variables())
        """,
    # A padding mask in the loss: positions, not parameters.
    "a mask used for a loss": """\
        import tensorflow as tf

        def train(logits, labels, lengths, lr):
          mask = tf.sequence_mask(lengths, tf.shape(labels)[1],
                                  dtype=tf.float32)
          xent = tf.nn.sparse_softmax_cross_entropy_with_logits(
              labels=labels, logits=logits)
          loss = tf.reduce_sum(xent * mask) / tf.reduce_sum(mask)
          opt = tf.train.AdamOptimizer(lr)
          grads = opt.compute_gradients(loss)
          return opt.apply_gradients(grads)
        """,
    # An adversarial perturbation trained alone: the attack's only
    # variable, the model's weights are not its to train.
    "an adversarial perturbation trained alone": """\
        import tensorflow as tf

        def attack(model, x, y, eps, steps):
          delta = tf.Variable(tf.zeros_like(x))
          opt = tf.keras.optimizers.Adam(0.01)
          for _ in range(steps):
            with tf.GradientTape() as tape:
              loss = -tf.keras.losses.sparse_categorical_crossentropy(
                  y, model(x + delta))
            grads = tape.gradient(loss, [delta])
            opt.apply_gradients(zip(grads, [delta]))
            delta.assign(tf.clip_by_value(delta, -eps, eps))
          return x + delta
        """,
    # Per-layer learning rates: two optimizers over a split of the list
    # that between them train everything.
    "a learning-rate multiplier by two optimizers": """\
        import tensorflow as tf

        def train(loss, lr):
          tvars = tf.trainable_variables()
          head = [v for v in tvars if v.name.startswith('head')]
          body = [v for v in tvars if not v.name.startswith('head')]
          grads = tf.gradients(loss, body + head)
          slow = tf.train.MomentumOptimizer(lr, 0.9)
          fast = tf.train.MomentumOptimizer(lr * 10, 0.9)
          return tf.group(
              slow.apply_gradients(zip(grads[:len(body)], body)),
              fast.apply_gradients(zip(grads[len(body):], head)))
        """,
    "a pruner's re-mask op that every caller drops": _PRUNER.format(
        use="PruneConv2D(layer).apply(mask)"),
    "an attack's own perturbation flipped by hand": _ATTACK.format(
        more=""),
    "towers' gradients concatenated, towers chosen by a mask":
        _TOWERS.format(stacked="tf.concat(grads, 0)"),
    "towers' gradients stacked, towers chosen by a mask": _TOWERS.format(
        stacked="tf.stack(grads)"),
    "a learning-rate multiplier tested with != None": _SCALED.format(
        test="scale != None", append=_KEPT),
    "a learning-rate multiplier tested with is not None": _SCALED.format(
        test="scale is not None", append=_KEPT),
}


# A library's helper returning the variables of the scope it is given,
# called with the scope the caller builds its discriminator under.
_HELPER = """\
    import tensorflow as tf

    def get_variables_in_scope(scope_name):
      return tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope=scope_name)
    """

_CALLER = """\
    import tensorflow as tf
    import tfutil

    def main(x, y, build):
      disc_scope = 'discriminator'
      {opened}
        logits = build(x)
      loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
      disc_vars = tfutil.get_variables_in_scope(disc_scope)
      return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=disc_vars)
    """


def _found_in(caller):
  sources = [_files.Source("tfutil.py", textwrap.dedent(_HELPER)),
             _files.Source("main.py", textwrap.dedent(caller))]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.path, f.line) for f in findings]


def test_a_helper_given_the_scope_the_caller_builds_under_is_silent():
  assert _found_in(_CALLER.format(
      opened="with tf.variable_scope(disc_scope):")) == []


def test_a_helper_given_a_scope_the_caller_does_not_open_is_found():
  assert _found_in(_CALLER.format(opened="if x is not None:")) == [
      ("var-list-filter", "tfutil.py", 4)]


# An RL library's base model: a helper returning the variables of the
# scope it is given; an agent builds its network under a literal scope
# through a builder that opens it, and trains that scope's variables.
_BASE_MODEL = """\
    import tensorflow as tf

    class Model:
      def _trainable_variables(self, scope):
        return tf.trainable_variables(scope=scope)
    """

_AGENT = """\
    import tensorflow as tf
    from model import Model

    class DQN(Model):
      def _nn_model(self, x, scope):
        with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
          return tf.layers.dense(tf.layers.dense(x, 64), 4)

      def build(self, x, a, y):
        q = self._nn_model(x, scope="agent_net")
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(q * a, 1) - y))
        train_vars = self._trainable_variables(scope="{trained}")
        optimizer = tf.train.AdamOptimizer(1e-4)
        grads = optimizer.compute_gradients(loss, var_list=train_vars)
        self.train_op = optimizer.apply_gradients(grads)
    """


@pytest.mark.parametrize("trained, expected", [
    ("agent_net", []),
    ("agent_head", [("var-list-filter", "model.py", 5)])])
def test_a_helper_given_a_scope_the_project_builds_a_network_under(
    trained, expected):
  sources = [_files.Source("model.py", textwrap.dedent(_BASE_MODEL)),
             _files.Source("dqn.py", textwrap.dedent(
                 _AGENT.format(trained=trained)))]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  assert [(f.idiom, f.path, f.line) for f in findings] == expected


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_the_freeze_beside_a_look_alike_is_found(name):
  source, expected = POSITIVE[name]
  assert _found(source) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_stays_silent(name):
  assert _found(NEGATIVE[name]) == []
