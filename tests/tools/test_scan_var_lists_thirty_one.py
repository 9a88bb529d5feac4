"""`tfpartial scan` on the var-list look-alikes of part thirty-one: steps
whose lists, read for what the code does, leave nothing out.

- A differentially private GAN whose discriminator trains through its
  optimizer's own `minimize_ours(d_loss_real, d_loss_fake,
  var_list=theta_D)` (gradients paired with the list it is given, then
  applied): that method is a step where it is called, so the generator's
  hand list is one of two halves, silent. Its twins stay found: the same
  method training a classifier's head alone, and the generator's list
  with no discriminator step.
- A Keras layer declaring every weight of its sublayers, each once
  (`if w not in self._trainable_weights: self._trainable_weights.append(
  w)`): nothing left out, silent; a test of names in its place leaves
  weights out, found.
- Gradients computed only to be printed (a course's notebook): applied
  to nothing, silent; the same list applied by an optimizer, found.
- Two losses routed to lists kept by tests of names that between them
  keep every name (a VHRED's `not startswith('Latentpos')` and
  `startswith('Latent')`), applied together or in turn by an epoch's
  parity: silent; tests that leave a name to neither, or two lists a
  flag chooses once, found.
- An attack's images (`var_list=[self.slack]`) written from a
  placeholder fed each batch: inputs, silent; the same variable no
  placeholder writes (a soft prompt), found.
- A helper whose gradients a step computes (BERT's `create_optimizer`:
  `tf.gradients(loss, tvars)`) keeps its findings.
"""

import ast
import textwrap

import scanned
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import var_list_of

_DP_OPTIMIZER = """\
    import tensorflow as tf

    class DPOptimizer(tf.compat.v1.train.GradientDescentOptimizer):

      def sanitized(self, loss, var_list=None, add_noise=True):
        xs = [tf.convert_to_tensor(x) for x in var_list]
        return [clip(g, add_noise) for g in per_example(loss, xs)]

      def minimize_ours(self, d_loss_real, d_loss_fake, global_step=None,
                        var_list=None):
        if var_list is None:
          var_list = tf.compat.v1.trainable_variables()
        f_grads = self.sanitized(d_loss_fake, var_list=var_list,
                                 add_noise=False)
        r_grads = self.sanitized(d_loss_real, var_list=var_list)
        s_grads = [r_grads[i] + f_grads[i] for i in range(len(r_grads))]
        pairs = list(zip(s_grads, var_list))
        return self.apply_gradients(pairs, global_step=global_step)
    """

_DP_GAN = """\
    import tensorflow as tf
    from dp_optimizer import DPOptimizer

    def main():
      X = tf.compat.v1.placeholder(tf.float32, shape=[None, 784])
      Z = tf.compat.v1.placeholder(tf.float32, shape=[None, 100])
      D_W1 = tf.Variable(xavier_init([784, 128]))
      D_b1 = tf.Variable(tf.zeros(shape=[128]))
      D_W2 = tf.Variable(xavier_init([128, 1]))
      D_b2 = tf.Variable(tf.zeros(shape=[1]))
      theta_D = [D_W1, D_W2, D_b1, D_b2]
      G_W1 = tf.Variable(xavier_init([100, 128]))
      G_b1 = tf.Variable(tf.zeros(shape=[128]))
      G_W2 = tf.Variable(xavier_init([128, 784]))
      G_b2 = tf.Variable(tf.zeros(shape=[784]))
      theta_G = [G_W1, G_W2, G_b1, G_b2]
      G_sample = generator(Z, theta_G)
      D_real, D_logit_real = discriminator(X, theta_D)
      D_fake, D_logit_fake = discriminator(G_sample, theta_D)
      D_loss_real = tf.reduce_mean(xent(D_logit_real, 1.))
      D_loss_fake = tf.reduce_mean(xent(D_logit_fake, 0.))
      G_loss = tf.reduce_mean(xent(D_logit_fake, 1.))
      G_solver = tf.compat.v1.train.AdamOptimizer().minimize(
          G_loss, var_list=theta_G)
      D_solver = DPOptimizer(0.1).minimize_ours(
          D_loss_real, D_loss_fake, var_list=theta_D)
      with tf.compat.v1.Session() as sess:
        for it in range(1000):
          sess.run([D_solver, G_solver])
    """

_DP_HEAD = """\
    import tensorflow as tf
    from dp_optimizer import DPOptimizer

    def main():
      X = tf.compat.v1.placeholder(tf.float32, shape=[None, 784])
      W1 = tf.Variable(xavier_init([784, 128]))
      b1 = tf.Variable(tf.zeros(shape=[128]))
      W2 = tf.Variable(xavier_init([128, 10]))
      b2 = tf.Variable(tf.zeros(shape=[10]))
      logits = tf.matmul(tf.nn.relu(tf.matmul(X, W1) + b1), W2) + b2
      loss_real = tf.reduce_mean(xent(logits, 1.))
      loss_fake = tf.reduce_mean(xent(logits, 0.))
      solver = DPOptimizer(0.1).minimize_ours(
          loss_real, loss_fake, var_list=[W2, b2])
      with tf.compat.v1.Session() as sess:
        for it in range(1000):
          sess.run(solver)
    """


def test_a_dp_gans_two_halves_are_silent():
  assert scanned.in_project({"dp_optimizer.py": _DP_OPTIMIZER,
                             "main.py": _DP_GAN}) == []


def test_a_dp_gans_generator_alone_is_found():
  text = _DP_GAN.replace(
      "      D_solver = DPOptimizer(0.1).minimize_ours(\n"
      "          D_loss_real, D_loss_fake, var_list=theta_D)\n", "").replace(
          "[D_solver, G_solver]", "G_solver")
  assert scanned.in_project({"dp_optimizer.py": _DP_OPTIMIZER,
                             "main.py": text}) == [
      ("var-list-filter", "main.py", 16)]


def test_a_dp_optimizers_own_step_on_a_head_alone_is_found():
  assert scanned.in_project({"dp_optimizer.py": _DP_OPTIMIZER,
                             "main.py": _DP_HEAD}) == [
      ("var-list-filter", "main.py", 14)]


_DECLARED = """\
    import tensorflow as tf

    class MultiHeadAttention(tf.keras.layers.Layer):

      def __init__(self, d_model):
        super().__init__()
        self.d_model = d_model

      def build(self, input_shape):
        self.wq = tf.keras.layers.Dense(self.d_model)
        self.wk = tf.keras.layers.Dense(self.d_model)
        self.dense = tf.keras.layers.Dense(self.d_model)
        for i in [self.wq, self.wk, self.dense]:
          i.build(input_shape)
          for weight in i.trainable_weights:
            if weight not in self._trainable_weights:
              self._trainable_weights.append(weight)
          for weight in i.non_trainable_weights:
            if weight not in self._non_trainable_weights:
              self._non_trainable_weights.append(weight)
        super().build(input_shape)

      def call(self, q):
        return self.dense(self.wq(q) * self.wk(q))
    """


def test_weights_declared_once_each_are_silent():
  assert scanned.found(_DECLARED) == []


def test_weights_declared_by_a_test_of_names_are_found():
  text = _DECLARED.replace("if weight not in self._trainable_weights:",
                           "if 'kernel' in weight.name:", 1)
  assert scanned.found(text) == [("var-list-filter", 17)]


def test_weights_declared_once_and_by_name_are_found():
  text = _DECLARED.replace(
      "if weight not in self._trainable_weights:",
      "if weight not in self._trainable_weights and 'bias' not in "
      "weight.name:", 1)
  assert scanned.found(text) == [("var-list-filter", 17)]


_PRINTED = """\
    import tensorflow as tf

    x = tf.Variable(-2.)
    y = tf.Variable(5.)
    z = tf.Variable(-4.)

    with tf.GradientTape() as tape:
      res = 0
      for i in range(3):
        res += (x + y) * z
      print(tape.gradient(res, [z]))
    """


def test_gradients_only_printed_are_silent():
  assert scanned.found(_PRINTED) == []


def test_the_same_gradients_applied_are_found():
  text = _PRINTED.replace(
      "  print(tape.gradient(res, [z]))\n",
      "grads = tape.gradient(res, [z])\n"
      "tf.keras.optimizers.SGD(0.1).apply_gradients(zip(grads, [z]))\n")
  assert scanned.found(text) == [("var-list-filter", 11)]


_ROUTED = """\
    import tensorflow as tf

    class VHRED:

      def optimise(self):
        optim = tf.compat.v1.train.AdamOptimizer(self.learning_rate)
        grads1 = optim.compute_gradients(self.cost[0] + self.cost[1])
        grads2 = optim.compute_gradients(self.cost[1] + self.cost[2])
        grads1 = [(tf.clip_by_value(g, -5., 5.), v) for g, v in grads1
                  if not v.name.startswith('Latentpos') and g is not None]
        grads2 = [(tf.clip_by_value(g, -5., 5.), v) for g, v in grads2
                  if v.name.startswith('Latent')]
        grads = grads1 + grads2
        return optim.apply_gradients(grads, global_step=self.global_step)
    """

_ALTERNATED = """\
        if self.epoch % 2 == 1:
          grads = grads1
        else:
          grads = grads2
"""


def test_two_losses_routed_to_lists_that_keep_every_name_are_silent():
  assert scanned.found(_ROUTED) == []


def test_two_losses_applied_in_turn_keeping_every_name_are_silent():
  text = _ROUTED.replace("        grads = grads1 + grads2\n", _ALTERNATED)
  assert scanned.found(text) == []


def test_two_losses_routed_to_lists_that_leave_a_name_out_are_found():
  text = _ROUTED.replace("v.name.startswith('Latent')",
                         "v.name.startswith('Decoder')")
  assert scanned.found(text) == [("var-list-filter", 9)]


def test_two_lists_chosen_once_by_a_flag_are_found():
  text = _ROUTED.replace("        grads = grads1 + grads2\n",
                         _ALTERNATED.replace("self.epoch % 2 == 1",
                                             "self.fine_tune"))
  assert scanned.found(text) == [("var-list-filter", 11)]


_CREATE_OPTIMIZER = """\
    import tensorflow as tf

    def create_optimizer(loss, init_lr, tvars=None):
      if tvars is None:
        tvars = tf.compat.v1.trainable_variables()
      grads = tf.gradients(loss, tvars)
      optimizer = tf.compat.v1.train.AdamOptimizer(init_lr)
      return optimizer.apply_gradients(zip(grads, tvars))
    """

_ADAPTERS = """\
    import tensorflow as tf
    import optimization

    def get_variables_with_name(name):
      return [v for v in tf.compat.v1.trainable_variables() if name in v.name]

    class Adapter:

      def pretrain(self):
        loss = self.masked_lm_loss()
        tvars = get_variables_with_name('adapter_layers')
        return optimization.create_optimizer(loss=loss, init_lr=5e-6,
                                             tvars=tvars)

      def finetune(self):
        loss = self.span_loss()
        pvars = get_variables_with_name('prediction_layers')
        return optimization.create_optimizer(loss=loss, init_lr=5e-6,
                                             tvars=pvars)
    """


def test_a_helper_whose_gradients_a_step_computes_keeps_its_findings():
  # Its loss is the step's (`tf.gradients(loss, tvars)`), as before: two
  # methods fine-tuning two named parts are not a GAN's two halves. Each
  # is reported where its call names the part (test_scan_named_at_call).
  assert scanned.in_project({"optimization.py": _CREATE_OPTIMIZER,
                             "adapter.py": _ADAPTERS}) == [
      ("var-list-filter", "adapter.py", 11),
      ("var-list-filter", "adapter.py", 17)]


_ATTACK = """\
    import numpy as np
    import tensorflow as tf

    class EAD:

      def __init__(self, sess, model, shape):
        self.sess = sess
        self.timg = tf.Variable(np.zeros(shape), dtype=tf.float32)
        self.slack = tf.Variable(np.zeros(shape), dtype=tf.float32)
        self.assign_timg = tf.compat.v1.placeholder(tf.float32, shape)
        self.assign_slack = tf.compat.v1.placeholder(tf.float32, shape)
        self.setter = tf.compat.v1.assign(self.slack, self.assign_slack)
        self.setup = [self.timg.assign(self.assign_timg)]
        self.output = model.get_logits(self.slack)
        self.loss = tf.reduce_sum(self.output) + tf.reduce_sum(
            tf.square(self.slack - self.timg))
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
        self.train = optimizer.minimize(self.loss, var_list=[self.slack])

      def attack(self, batch):
        self.sess.run(self.setup, {self.assign_timg: batch})
        self.sess.run(self.setter, {self.assign_slack: batch})
        for _ in range(1000):
          self.sess.run(self.train)
    """


def test_an_attacks_images_set_from_a_batch_are_silent():
  assert scanned.found(_ATTACK) == []


def test_a_prompt_no_batch_writes_is_found():
  text = _ATTACK.replace(
      "        self.setter = tf.compat.v1.assign(self.slack, "
      "self.assign_slack)\n", "").replace(
          "        self.sess.run(self.setter, {self.assign_slack: batch})\n",
          "")
  assert scanned.found(text) == [("var-list-filter", 17)]




def _keeps_every_name(text):
  """`_covering_tests.keeps_every_name` of the list the one
  `apply_gradients` of function `f` in `text` trains."""
  from tfpartial._tools.scan.idioms._wholes import _covering_tests
  tree = ast.parse(textwrap.dedent(text))
  scope = _scopes.collect(tree).children[0]
  call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
              and getattr(n.func, "attr", "") == "apply_gradients")
  return _covering_tests.keeps_every_name(var_list_of(call), scope)


def test_routed_pairs_keep_every_name():
  assert _keeps_every_name("""\
      def f(opt, a, b):
        a = [(g, v) for g, v in a if not v.name.startswith('Latentpos')]
        b = [(g, v) for g, v in b if v.name.startswith('Latent')]
        return opt.apply_gradients(a + b)
      """)


def test_variables_listed_beside_none_gradients_are_not_routed_pairs():
  # Every name is listed, but the teacher's gradients are `None`
  # (mobilebert's distillation): lists of variables, not of a loss's pairs.
  assert not _keeps_every_name("""\
      def f(loss, opt):
        tvars = [v for v in tf.compat.v1.trainable_variables()
                 if not v.name.startswith("teacher")]
        grads = tf.gradients(loss, tvars)
        ntvars = [v for v in tf.compat.v1.trainable_variables()
                  if v.name.startswith("teacher")]
        ngrads = [None for v in ntvars]
        return opt.apply_gradients(zip(grads + ngrads, tvars + ntvars))
      """)
