"""`tfpartial scan` on part 28's and 29's last false positives and
misses. A scope a class's own method opens from its parameter, named by
a literal where the class calls it (`self._encoder(x, name='teacher')`),
is a root scope as `with tf.variable_scope('teacher')` is: a step that
trains the two scopes of a distillation teacher trains that whole
model (part 29's prob-kd-tf). The same names given inside a scope of
the model, or to a method that builds one layer (`self.fc(h,
name='fc8')`), stay parts, and training one of them is still found.

prettytensor's `pt.apply_optimizer(optimizer, losses=[loss],
var_list=...)` is a step with a list, as `minimize` is (part 28's
styled-stackgan): a head trained alone on its backbone is found; a
GAN's two halves, an actor and a critic, a target network synced from
the trained one and a distillation teacher trained in its own phase
stay silent.

A helper with a filtered step that the project's own script imports
and never calls (it builds its step with the optimizer instead) builds
no step (part 29's BNN-TensorFlow); the helper called, called through
its module, passed on, imported by no module (a library's) or
re-exported by a package's `__init__.py` is still found. Synthetic
sources in the shape of real code."""

import textwrap

import pytest
import scanned

_found = scanned.found


# A teacher built by two methods of its class, each opening the scope
# its caller names; the teacher's step trains the scopes it names.
_TEACHER = """\
    import tensorflow as tf

    class CNN(object):
      def build_model(self, x, reuse=False):
        {opened}z = self._encoder(x, reuse=reuse, name='teacher')
        {opened}logits = self._classifier(z, reuse=reuse, name='class-teacher')
        self.loss = tf.reduce_mean(logits)
        return logits

      def _classifier(self, z, name="cnn", reuse=False):
        with tf.variable_scope(name, reuse=reuse):
          return tf.layers.dense(z, 5, name='d8')

      def _encoder(self, x, name='encoder', reuse=False):
        with tf.variable_scope(name, reuse=reuse):
          h = tf.layers.conv2d(x, 16, 3, name='c1')
          return tf.layers.dense(h, 8, name='z_mu')

      def _optimizer(self, loss):
        teacher = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                    scope="teacher/")
        head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope="class-teacher/")
        var_list = {var_list}
        opt = tf.train.AdamOptimizer(1e-3)
        grads = opt.compute_gradients(loss, var_list=var_list)
        return opt.apply_gradients(grads)
    """

_INSIDE = "with tf.variable_scope('model'):\n          "


@pytest.mark.parametrize("source, expected", [
    (_TEACHER.format(opened="", var_list="head + teacher"), []),
    (_TEACHER.format(opened="", var_list="teacher + head"), []),
    # The same names given under the model's own scope: parts of it, and
    # the classifier trained alone on the encoder is found.
    (_TEACHER.replace("        {opened}z", "        " + _INSIDE + "z").replace(
        "        {opened}logits", "          logits").format(
            var_list="head"), [("var-list-filter", 23)]),
], ids=["teacher_scopes", "teacher_scopes_reversed", "named_inside_model"])
def test_scopes_named_for_the_class_own_methods(source, expected):
  assert _found(source) == expected


# One layer per call of a method of the class (`fc6`, `fc7`, `fc8`):
# each name a layer, not a model; training the last is fine-tuning.
_LAYERS = """\
    import tensorflow as tf

    class AlexNet(object):
      def create(self, x):
        h = self.fc(x, 4096, name='fc6')
        h = self.fc(h, 4096, name='fc7')
        self.logits = self.fc(h, 10, name='fc8')

      def fc(self, x, units, name):
        with tf.variable_scope(name):
          w = tf.get_variable('w', [4096, units])
          b = tf.get_variable('b', [units])
          return tf.matmul(x, w) + b

      def train(self, loss):
        var_list = [v for v in tf.trainable_variables()
                    if v.name.split('/')[0] in ['fc8']]
        return tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, var_list=var_list)
    """


def test_layers_named_for_the_class_own_method_stay_layers():
  assert _found(_LAYERS) == [("var-list-filter", 16)]


# A backbone and a head under scopes of their own; the step trains
# what `{step}` names.
_FINE_TUNED = """\
    import prettytensor as pt
    import tensorflow as tf

    def build(images, labels):
      with tf.variable_scope('backbone'):
        h = pt.wrap(images).conv2d(3, 16).flatten()
      with tf.variable_scope('head'):
        logits = h.fully_connected(10, activation_fn=None)
      loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
          labels=labels, logits=logits))
      head_vars = [v for v in tf.trainable_variables()
                   if v.name.startswith('head')]
      opt = tf.train.AdamOptimizer(1e-4)
      return {step}
    """

_GAN = """\
    import prettytensor as pt
    import tensorflow as tf

    class Trainer(object):
      def init_opt(self, g_loss, d_loss):
        all_vars = tf.trainable_variables()
        g_vars = [var for var in all_vars if var.name.startswith('g_')]
        d_vars = [var for var in all_vars if var.name.startswith('d_')]
        g_opt = tf.train.AdamOptimizer(2e-4, beta1=0.5)
        self.g_trainer = pt.apply_optimizer(g_opt, losses=[g_loss],
                                            var_list=g_vars)
        d_opt = tf.train.AdamOptimizer(2e-4, beta1=0.5)
        self.d_trainer = pt.apply_optimizer(d_opt, losses=[d_loss],
                                            var_list=d_vars)

      def train(self, sess):
        for _ in range(100):
          sess.run(self.d_trainer)
          sess.run(self.g_trainer)
    """

# The two halves through one helper told the prefix to keep
# (StackGAN's `define_one_trainer`).
_GAN_HELPER = """\
    import prettytensor as pt
    import tensorflow as tf

    class Trainer(object):
      def define_one_trainer(self, loss, learning_rate, key_word):
        all_vars = tf.trainable_variables()
        tarin_vars = [var for var in all_vars
                      if var.name.startswith(key_word)]
        opt = tf.train.AdamOptimizer(learning_rate, beta1=0.5)
        return pt.apply_optimizer(opt, losses=[loss], var_list=tarin_vars)

      def prepare_trainer(self, d_loss, g_loss):
        self.d_trainer = self.define_one_trainer(d_loss, 2e-4, 'd_')
        self.g_trainer = self.define_one_trainer(g_loss, 2e-4, 'g_')

      def train(self, sess):
        for _ in range(100):
          sess.run(self.d_trainer)
          sess.run(self.g_trainer)
    """

_ACTOR_CRITIC = """\
    import prettytensor as pt
    import tensorflow as tf

    def build(actor_loss, critic_loss):
      actor_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     scope='actor')
      critic_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                      scope='critic')
      a_op = pt.apply_optimizer(tf.train.AdamOptimizer(1e-4), [actor_loss],
                                var_list=actor_vars)
      c_op = pt.apply_optimizer(tf.train.AdamOptimizer(1e-3), [critic_loss],
                                var_list=critic_vars)
      return tf.group(a_op, c_op)
    """

_TARGET = """\
    import prettytensor as pt
    import tensorflow as tf

    def q_net(x, scope):
      with tf.variable_scope(scope):
        return pt.wrap(x).fully_connected(64).fully_connected(
            4, activation_fn=None)

    def build(x, x_next, actions, rewards):
      q = q_net(x, 'q')
      q_next = q_net(x_next, 'target_q')
      target = rewards + 0.99 * tf.reduce_max(q_next, 1)
      loss = tf.reduce_mean(tf.square(
          tf.stop_gradient(target) - tf.reduce_sum(q * actions, 1)))
      q_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='q')
      t_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope='target_q')
      train = pt.apply_optimizer(tf.train.AdamOptimizer(1e-4), losses=[loss],
                                 var_list=q_vars)
      sync = tf.group(*[t.assign(s) for s, t in zip(q_vars, t_vars)])
      return train, sync
    """

_TEACHER_FIRST = """\
    import prettytensor as pt
    import tensorflow as tf

    def net(x, scope):
      with tf.variable_scope(scope):
        return pt.wrap(x).fully_connected(64).fully_connected(
            10, activation_fn=None)

    def main(x, y, sess):
      teacher = net(x, 'teacher')
      student = net(x, 'student')
      t_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
          labels=y, logits=teacher))
      s_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
          labels=tf.nn.softmax(tf.stop_gradient(teacher)), logits=student))
      t_vars = [v for v in tf.trainable_variables()
                if v.name.startswith('teacher')]
      s_vars = [v for v in tf.trainable_variables()
                if v.name.startswith('student')]
      t_op = pt.apply_optimizer(tf.train.AdamOptimizer(1e-3),
                                losses=[t_loss], var_list=t_vars)
      s_op = pt.apply_optimizer(tf.train.AdamOptimizer(1e-3),
                                losses=[s_loss], var_list=s_vars)
      for _ in range(1000):
        sess.run(t_op)
      for _ in range(1000):
        sess.run(s_op)
    """


@pytest.mark.parametrize("source, expected", [
    (_FINE_TUNED.format(step="pt.apply_optimizer(opt, losses=[loss], "
                        "var_list=head_vars)"), [("var-list-filter", 11)]),
    (_FINE_TUNED.format(step="pt.apply_optimizer(opt, [loss], "
                        "var_list=head_vars)"), [("var-list-filter", 11)]),
    (_FINE_TUNED.format(step="opt.minimize(loss, var_list=head_vars)"),
     [("var-list-filter", 11)]),
    (_FINE_TUNED.format(step="pt.apply_optimizer(opt, losses=[loss])"), []),
    (_GAN, []),
    (_GAN_HELPER, []),
    (_ACTOR_CRITIC, []),
    (_TARGET, []),
    (_TEACHER_FIRST, []),
], ids=["head_only", "head_only_positional", "head_only_minimize",
        "whole_model", "gan_halves", "gan_halves_by_helper",
        "actor_critic", "target_network",
        "teacher_in_its_own_phase"])
def test_prettytensor_apply_optimizer_is_a_step(source, expected):
  assert _found(source) == expected


_HELPER = """\
    import tensorflow as tf

    def build(x):
      with tf.variable_scope('model'):
        h = tf.layers.dense(x, 8, name='body')
        return tf.layers.dense(h, 2, name='head')

    def train_op(loss, optimizer):
      head = [v for v in tf.trainable_variables()
              if v.name.startswith('model/head')]
      return optimizer.minimize(loss, var_list=head)
    """

_SCRIPT = """\
    import tensorflow as tf
    {imported}

    x = tf.placeholder(tf.float32, [None, 4])
    logits = build(x)
    loss = tf.reduce_mean(logits)
    optimizer = tf.train.AdamOptimizer(1e-3)
    {step}
    """


@pytest.mark.parametrize("imported, step, expected", [
    ("from misc import build, train_op", "op = optimizer.minimize(loss)", []),
    ("from misc import build, train_op", "op = train_op(loss, optimizer)",
     [("var-list-filter", "misc.py", 9)]),
    ("import misc\nfrom misc import build",
     "op = misc.train_op(loss, optimizer)",
     [("var-list-filter", "misc.py", 9)]),
    ("from misc import build, train_op",
     "make = train_op\nop = make(loss, optimizer)",
     [("var-list-filter", "misc.py", 9)]),
    ("from misc import build", "op = optimizer.minimize(loss)",
     [("var-list-filter", "misc.py", 9)]),
], ids=["imported_never_called", "called", "called_through_module",
        "passed_on", "not_imported"])
def test_helper_imported_and_never_called(imported, step, expected):
  script = textwrap.dedent(_SCRIPT).format(
      imported=imported, step=step)
  assert scanned.in_project({"misc.py": _HELPER, "main.py": script}) == (
      expected)


def test_helper_a_package_re_exports_stays_found():
  assert scanned.in_project({
      "pkg/__init__.py": "from pkg.misc import build, train_op\n",
      "pkg/misc.py": _HELPER,
      "main.py": _SCRIPT.format(imported="from pkg.misc import build, "
                                "train_op",
                                step="op = optimizer.minimize(loss)"),
  }) == [("var-list-filter", "pkg/misc.py", 9)]
