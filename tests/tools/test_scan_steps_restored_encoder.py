"""`tfpartial scan`'s `var-list-filter` on steps that part thirty missed:
a captioner's model file opens its decoder's scope (`with
tf.variable_scope('lstm')`) beside a pretrained encoder it builds outside
that scope and restores from a checkpoint (`saver = tf.train.Saver(
self.encoder_variables)`, `saver.restore` in its `init_fn`), and the
training script trains only the decoder's scope through
`tf.contrib.layers.optimize_loss(..., variables=output_vars)`
(devilztt/Im2txt-densenet-attend): the encoder stays at its pretrained
values. The positional forms of the same family of steps (slim's and
`tf.contrib.training`'s `create_train_op(loss, optimizer, global_step,
update_ops, variables_to_train)`, `optimize_loss`'s tenth argument).
Silent twins: the model without the restore, a step over every variable,
a GAN's and an actor-critic's halves, a distillation teacher restored
beside its student, and a second model trained alone."""

from tests.tools import scanned

_MODEL = """
import tensorflow as tf
import tensorflow.contrib.slim as slim


def encoder(images, trainable=True):
    with tf.variable_scope('densenet161'):
        net = slim.conv2d(images, 32, [3, 3], trainable=trainable)
        return slim.conv2d(net, 64, [3, 3], trainable=trainable)


class CaptionModel(object):
    def __init__(self, config, mode, train_encoder=False):
        self.config = config
        self.mode = mode
        self.train_encoder = train_encoder
        self.encoder_variables = []
        self.init_fn = None

    def build_image_embeddings(self):
        self.features = encoder(self.images, trainable=self.train_encoder)
        self.encoder_variables = tf.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES, scope='densenet161')

    def build_model(self):
        features = self.features
        with tf.variable_scope('lstm'):
            cell = tf.nn.rnn_cell.BasicLSTMCell(512)
            out, _ = tf.nn.dynamic_rnn(cell, self.seq_embeddings,
                                       dtype=tf.float32)
            logits = tf.layers.dense(out + tf.reduce_mean(features), 1000)
        self.total_loss = tf.reduce_mean(logits)

    def setup_encoder_initializer(self):
RESTORE

    def build(self):
        self.images = tf.placeholder(tf.float32, [None, 224, 224, 3])
        self.seq_embeddings = tf.placeholder(tf.float32, [None, 20, 512])
        self.build_image_embeddings()
        self.build_model()
        self.setup_encoder_initializer()
        self.global_step = tf.train.get_or_create_global_step()
"""

_RESTORED = """\
        saver = tf.train.Saver(self.encoder_variables)

        def restore_fn(sess):
            saver.restore(sess, self.config.encoder_checkpoint_file)

        self.init_fn = restore_fn"""

_TRAIN = """
import tensorflow as tf
from im2txt import model as model_lib


def main(unused_argv):
    g = tf.Graph()
    with g.as_default():
        model = model_lib.CaptionModel(config, mode='train')
        model.build()
        output_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                        scope='lstm')
        train_op = tf.contrib.layers.optimize_loss(
            loss=model.total_loss,
            global_step=model.global_step,
            learning_rate=0.1,
            optimizer='SGD',
            clip_gradients=5.0,
            variables=output_vars)
    tf.contrib.slim.learning.train(train_op, '/tmp/train',
                                   init_fn=model.init_fn)
"""


def _captioner(restore=_RESTORED, train=_TRAIN):
  return scanned.in_project({
      "im2txt/__init__.py": "",
      "im2txt/model.py": _MODEL.replace("RESTORE", restore),
      "train.py": train})


def test_a_decoder_scope_trained_beside_a_restored_encoder_is_found():
  assert _captioner() == [("var-list-filter", "train.py", 11)]


def test_the_same_model_without_a_restore_stays_silent():
  assert _captioner(restore="        pass") == []


def test_an_optimize_loss_over_every_variable_stays_silent():
  train = _TRAIN.replace("            variables=output_vars)",
                         "            )")
  assert _captioner(train=train) == []


def test_a_restore_of_the_decoder_itself_stays_silent():
  # Resuming what the step trains restores no other part.
  restore = _RESTORED.replace(
      "tf.train.Saver(self.encoder_variables)",
      "tf.train.Saver(tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "
      "scope='lstm'))")
  assert _captioner(restore=restore) == []


_GAN_MODEL = """
import tensorflow as tf


class Gan(object):
    def build(self, z, x):
        with tf.variable_scope('generator'):
            fake = tf.layers.dense(tf.layers.dense(z, 128), 784)
        with tf.variable_scope('discriminator'):
            d_real = tf.layers.dense(x, 1, name='d')
            d_fake = tf.layers.dense(fake, 1, name='d', reuse=True)
        self.d_loss = tf.reduce_mean(d_fake - d_real)
        self.g_loss = -tf.reduce_mean(d_fake)
        self.g_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                        scope='generator')
        saver = tf.train.Saver(self.g_vars)

        def restore_fn(sess):
            saver.restore(sess, '/tmp/generator.ckpt')

        self.init_fn = restore_fn
"""

_GAN_TRAIN = """
import tensorflow as tf
from gan import model as model_lib


def main(z, x):
    model = model_lib.Gan()
    model.build(z, x)
    step = tf.train.get_or_create_global_step()
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               scope='discriminator')
    g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               scope='generator')
    d_op = tf.contrib.layers.optimize_loss(
        model.d_loss, step, 1e-4, 'Adam', variables=d_vars)
    g_op = tf.contrib.layers.optimize_loss(
        model.g_loss, step, 1e-4, 'Adam', variables=g_vars)
    return d_op, g_op
"""


def test_a_gan_s_halves_through_optimize_loss_beside_a_restore_stay_silent():
  assert scanned.in_project({
      "gan/__init__.py": "", "gan/model.py": _GAN_MODEL,
      "train.py": _GAN_TRAIN}) == []


def test_an_actor_critic_pair_through_optimize_loss_stays_silent():
  model = (_GAN_MODEL.replace("'generator'", "'actor'")
           .replace("'discriminator'", "'critic'"))
  train = (_GAN_TRAIN.replace("'generator'", "'actor'")
           .replace("'discriminator'", "'critic'"))
  assert scanned.in_project({
      "gan/__init__.py": "", "gan/model.py": model,
      "train.py": train}) == []


_DISTILLED_MODEL = """
import tensorflow as tf


class Distiller(object):
    def build(self, x):
        with tf.variable_scope('teacher'):
            self.teacher_logits = tf.layers.dense(
                tf.layers.dense(x, 512), 10)
        with tf.variable_scope('student'):
            self.student_logits = tf.layers.dense(x, 10)
        self.loss = tf.reduce_mean(tf.square(
            self.student_logits - tf.stop_gradient(self.teacher_logits)))
        self.teacher_variables = tf.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES, scope='teacher')
        saver = tf.train.Saver(self.teacher_variables)

        def restore_fn(sess):
            saver.restore(sess, '/tmp/teacher.ckpt')

        self.init_fn = restore_fn
"""

_DISTILLED_TRAIN = """
import tensorflow as tf
from kd import model as model_lib


def main(x):
    model = model_lib.Distiller()
    model.build(x)
    step = tf.train.get_or_create_global_step()
    student_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     scope='student')
    return tf.contrib.layers.optimize_loss(
        model.loss, step, 1e-3, 'Adam', variables=student_vars)
"""


def test_a_distillation_teacher_restored_beside_its_student_stays_silent():
  assert scanned.in_project({
      "kd/__init__.py": "", "kd/model.py": _DISTILLED_MODEL,
      "train.py": _DISTILLED_TRAIN}) == []


def test_a_student_of_several_layers_beside_its_restored_teacher_is_silent():
  model = _DISTILLED_MODEL.replace(
      "            self.student_logits = tf.layers.dense(x, 10)",
      "            hidden = tf.layers.dense(x, 64)\n"
      "            self.student_logits = tf.layers.dense(hidden, 10)")
  assert scanned.in_project({
      "kd/__init__.py": "", "kd/model.py": model,
      "train.py": _DISTILLED_TRAIN}) == []


_SECOND_MODEL = """
import tensorflow as tf


def main(x, y, z):
    with tf.variable_scope('classifier'):
        loss_a = tf.reduce_mean(tf.layers.dense(x, 10) - y)
    with tf.variable_scope('regressor'):
        loss_b = tf.reduce_mean(tf.layers.dense(z, 1))
    step = tf.train.get_or_create_global_step()
    a_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               scope='classifier')
    b_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               scope='regressor')
    op_a = tf.contrib.layers.optimize_loss(loss_a, step, 0.1, 'SGD',
                                           variables=a_vars)
    op_b = tf.contrib.layers.optimize_loss(loss_b, step, 0.1, 'SGD',
                                           variables=b_vars)
    return op_a, op_b
"""


def test_two_models_each_trained_alone_through_optimize_loss_stay_silent():
  assert scanned.found(_SECOND_MODEL) == []


_POSITIONAL = """
import tensorflow as tf
slim = tf.contrib.slim


def build(images, labels):
    with tf.variable_scope('vgg_16'):
        net = slim.conv2d(images, 64, [3, 3], scope='conv1')
    with tf.variable_scope('head'):
        logits = slim.fully_connected(slim.flatten(net), 10, scope='fc')
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    optimizer = tf.train.AdamOptimizer(1e-3)
    head = [v for v in tf.trainable_variables() if v.name.startswith('head')]
    step = tf.train.get_or_create_global_step()
    return STEP
"""


def test_slim_s_create_train_op_given_its_list_by_position_is_found():
  code = _POSITIONAL.replace(
      "STEP", "slim.learning.create_train_op(loss, optimizer, step, None, "
      "head)")
  assert scanned.found(code) == [("var-list-filter", 13)]


def test_contrib_training_create_train_op_by_position_is_found():
  code = _POSITIONAL.replace(
      "STEP", "tf.contrib.training.create_train_op(loss, optimizer, step, "
      "None, head)")
  assert scanned.found(code) == [("var-list-filter", 13)]


def test_create_train_op_s_sixth_argument_is_no_list():
  # `clip_gradient_norm` (slim) or `transform_grads_fn` (contrib): the
  # step trains every variable.
  code = _POSITIONAL.replace(
      "STEP", "slim.learning.create_train_op(loss, optimizer, step, None, "
      "None, head)")
  assert scanned.found(code) == []


def test_optimize_loss_given_its_list_by_position_is_found():
  code = _POSITIONAL.replace(
      "STEP", "tf.contrib.layers.optimize_loss(loss, step, 1e-3, 'Adam', "
      "None, None, None, None, None, head)")
  assert scanned.found(code) == [("var-list-filter", 13)]


def test_optimize_loss_over_every_variable_by_position_stays_silent():
  code = _POSITIONAL.replace(
      "STEP", "tf.contrib.layers.optimize_loss(loss, step, 1e-3, 'Adam', "
      "None, None, 5.0)")
  assert scanned.found(code) == []
