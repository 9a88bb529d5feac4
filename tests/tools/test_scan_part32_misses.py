"""`tfpartial scan` on the var-list filters part 32 missed, each found by
what the code does, beside its silent twins.

- A decoder trained on a pretrained encoder that its model file restores
  through a `Saver` whose list a name-filter comprehension chooses
  (`v.find('MobilenetV2') != -1`), the builder feeding the encoder's
  output into the decoder's scope (`_restored`, `_filtered_restore`).
  Silent: a teacher restored beside a student that never reads it, a
  restore of the scope the step trains, a restore of everything.
- Two losses of one tracker each fine-tuning the `fc` layers (`'fc' in
  var.name and 'fc6_2' not in var.name`) while the same function builds
  `conv1`..`conv3` (`_shared_part`). Silent: a GAN's and an actor-critic's
  halves, two filters whose shared name every layer holds.
- A head fine-tune beside a whole-model `train_step` that nothing runs
  (its one call sits in a string literal; `_dead_step`). Silent: the same
  `train_step` called by the script or imported by another module.
"""

import pytest
import scanned

_MOBILENET = """\
    import tensorflow as tf

    def mobilenet_base(x, scope='MobilenetV2'):
        with tf.variable_scope(scope, default_name='Mobilenet'):
            net = tf.layers.conv2d(x, 32, 3)
        return net, {}
    """

_UNET = """\
    import tensorflow as tf
    from tensorflow.contrib import slim
    from model import mobilenet_v2

    def build(inputs, n):
        logits, points = mobilenet_v2.mobilenet_base(inputs)
        with tf.variable_scope('UNet'):
            net = slim.conv2d_transpose(logits, n, 3)
        return net

    def load_pretrained(sess):
        to_restore = {v.name.split(":")[0]: v for v in tf.global_variables()}
        to_restore = {v: to_restore[v] for v in to_restore
                      if v.find('%s') != -1}
        saver = tf.train.Saver(var_list=to_restore)
        saver.restore(sess, 'mobilenet_v2_1.0_224.ckpt')
    """

_TRAIN = """\
    import tensorflow as tf
    from model import unet

    sess = tf.Session()
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    y = tf.placeholder(tf.float32, [None, None, None, 2])
    network = unet.build(x, 2)
    to_train = {v.name: v for v in tf.trainable_variables()}
    to_train = {
        v: to_train[v]
        for v in to_train if v.find('UNet') != -1
    }
    loss = tf.reduce_mean(tf.square(network - y))
    opt = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=to_train)
    sess.run(tf.global_variables_initializer())
    unet.load_pretrained(sess)
    """


def _unet(unet):
  return scanned.in_project({"model/mobilenet_v2.py": _MOBILENET,
                             "model/unet.py": unet, "train.py": _TRAIN})


def test_a_decoder_on_a_restored_encoder_is_found():
  assert _unet(_UNET % "MobilenetV2") == [
      ("var-list-filter", "train.py", 9)]


@pytest.mark.parametrize("unet", [
    # The restore resumes the decoder the step trains.
    _UNET % "UNet",
    # Everything restored: a run resumed, no part kept.
    _UNET.replace("saver = tf.train.Saver(var_list=to_restore)",
                  "saver = tf.train.Saver(tf.global_variables())")
    % "MobilenetV2",
], ids=["restores_what_it_trains", "restores_everything"])
def test_a_decoder_without_a_restored_part_is_silent(unet):
  assert _unet(unet) == []


def test_a_teacher_restored_beside_its_student_is_silent():
  teacher = """\
      import tensorflow as tf
      from tensorflow.contrib import slim

      def teacher(x):
          with tf.variable_scope('Teacher'):
              return slim.conv2d(x, 2, 3)

      def student(x):
          with tf.variable_scope('Student'):
              return slim.conv2d(x, 2, 3)

      def load_teacher(sess):
          chosen = {v.name.split(":")[0]: v for v in tf.global_variables()}
          chosen = {v: chosen[v] for v in chosen
                    if v.find('Teacher') != -1}
          saver = tf.train.Saver(var_list=chosen)
          saver.restore(sess, 'teacher.ckpt')
      """
  train = """\
      import tensorflow as tf
      from model import nets

      sess = tf.Session()
      x = tf.placeholder(tf.float32, [None, 8, 8, 3])
      soft = tf.stop_gradient(nets.teacher(x))
      out = nets.student(x)
      loss = tf.reduce_mean(tf.square(out - soft))
      chosen = [v for v in tf.trainable_variables() if 'Student' in v.name]
      opt = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=chosen)
      nets.load_teacher(sess)
      """
  assert scanned.in_project({"model/nets.py": teacher,
                             "train.py": train}) == []


_TRACKER = """\
    import tensorflow as tf
    from tensorflow.contrib import slim

    class Tracker:
        def __init__(self, lr):
            self.optimizer = tf.train.AdamOptimizer(lr)

        def create_network(self, x, label, cls):
            net = slim.convolution(x, 96, [7, 7], 2, scope='%s1')
            net = slim.pool(net, [3, 3], 'MAX', stride=2, scope='pool1')
            net = slim.convolution(net, 256, [5, 5], 2, scope='%s2')
            net = slim.convolution(net, 512, [3, 3], 1, scope='fc4')
            net = slim.dropout(net, 0.5, scope='dropout')
            actions = slim.convolution(net, 11, [1, 1], 1, scope='fc6_1')
            scores = slim.convolution(net, 2, [1, 1], 1, scope='fc6_2')
            self.loss_actions = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=label, logits=actions)
            self.loss_cls = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=cls, logits=scores)
            var_fc = [var for var in tf.trainable_variables()
                      if %s]
            self.var_grads_fc1 = var_fc
            gradients1 = tf.gradients(self.loss_actions, xs=var_fc)
            self.weighted_grads_fc1 = []
            for var, grad in zip(var_fc, gradients1):
                self.weighted_grads_fc1.append(10 * grad)
            var_fc = [var for var in tf.trainable_variables()
                      if %s]
            self.var_grads_fc2 = var_fc
            gradients2 = tf.gradients(self.loss_cls, xs=var_fc)
            self.weighted_grads_fc2 = []
            for var, grad in zip(var_fc, gradients2):
                self.weighted_grads_fc2.append(10 * grad)
            self.op1 = self.optimizer.apply_gradients(
                zip(self.weighted_grads_fc1, self.var_grads_fc1))
            self.op2 = self.optimizer.apply_gradients(
                zip(self.weighted_grads_fc2, self.var_grads_fc2))
    """


def test_two_losses_fine_tuning_the_fc_layers_are_found():
  code = _TRACKER % ("conv", "conv", "'fc' in var.name and 'fc6_2' not in "
                     "var.name", "'fc' in var.name and 'fc6_1' not in "
                     "var.name")
  assert scanned.found(code) == [("var-list-filter", 20),
                                 ("var-list-filter", 27)]


@pytest.mark.parametrize("kept", [
    # A GAN's or an actor-critic's halves: no name both keep.
    ("'conv' in var.name", "'fc' in var.name"),
    ("'actor' in var.name", "'critic' in var.name"),
    # The name both keep is the whole model's: every layer holds it.
    ("'c' in var.name and 'conv' in var.name",
     "'c' in var.name and 'fc' in var.name"),
], ids=["generator_and_discriminator", "actor_and_critic",
        "shared_name_of_every_layer"])
def test_two_losses_training_halves_are_silent(kept):
  assert scanned.found(_TRACKER % (("conv", "conv") + kept)) == []


_I3D = """\
    import tensorflow as tf
    from i3d import InceptionI3d

    def train_step(net, example, optimizer):
        with tf.GradientTape() as tape:
            output, _ = net(example[0], is_training=True)
            loss = tf.reduce_mean(tf.abs(output - example[1]))
        variables = net.trainable_variables
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(gradients, variables))
        return loss

    def session_train(optimizer, x, y, pretrained_dir):
        with tf.variable_scope('Flow'):
            i3d = InceptionI3d(num_classes=11, final_endpoint='Logits')
            logits, _ = i3d(x, is_training=True)
        loss = tf.reduce_mean(tf.abs(tf.nn.softmax(logits) - y))
        keys = tf.GraphKeys.TRAINABLE_VARIABLES
        training_opt = optimizer.minimize(loss, var_list=
            tf.get_collection(keys, scope='Flow/inception_i3d/Logits') +
            tf.get_collection(keys, scope='Flow/inception_i3d/Mixed_5c'))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=pretrained_dir) as sess:
            for epoch in range(10):
                sess.run([loss, training_opt])

    def train_network(x, y):
        opt = tf.train.GradientDescentOptimizer(0.1)
        %s
        session_train(opt, x, y, 'data/checkpoints/flow_imagenet/')

    if __name__ == "__main__":
        train_network(None, None)
    """


def test_a_head_fine_tune_beside_a_step_nothing_runs_is_found():
  off = "'''for example in data: train_step(i3d, example, opt)'''"
  assert scanned.found(_I3D % off) == [("var-list-filter", 20)]


def test_a_head_fine_tune_beside_a_whole_step_that_runs_is_silent():
  assert scanned.found(_I3D % "train_step(None, (x, y), opt)") == []


def test_a_whole_step_another_module_imports_is_silent():
  off = "'''train_step(i3d, example, opt)'''"
  other = """\
      from i3d_train import train_step

      def run(net, data, opt):
          for example in data:
              train_step(net, example, opt)
      """
  assert [f for f in scanned.in_project(
      {"i3d_train.py": _I3D % off, "eager.py": other})
          if f[1] == "i3d_train.py"] == []


def test_two_losses_sharing_the_scope_around_the_model_are_silent():
  code = """\
      import tensorflow as tf
      from tensorflow.contrib import slim

      def build(x, y, z):
          with tf.variable_scope('model'):
              g = slim.conv2d(z, 3, 3, scope='gen_conv1')
              d_real = slim.conv2d(x, 1, 3, scope='disc_conv1')
              d_fake = slim.conv2d(g, 1, 3, scope='disc_conv1', reuse=True)
          d_loss = tf.reduce_mean(d_fake - d_real)
          g_loss = -tf.reduce_mean(d_fake)
          d_vars = [v for v in tf.trainable_variables()
                    if 'model' in v.name and 'disc' in v.name]
          g_vars = [v for v in tf.trainable_variables()
                    if 'model' in v.name and 'gen' in v.name]
          d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
          g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
          return d_op, g_op
      """
  assert scanned.found(code) == []
