"""`tfpartial scan`'s `var-list-filter` where the one model of a script
is built under the scope its filter names (part thirty-four's homography
and stitching scripts: `with tf.name_scope('dataset'): loader =
DataLoader(...)`, `with tf.variable_scope('generator'): ... =
H_estimator(...)`, then `compute_gradients(g_loss, var_list=
get_collection(TRAINABLE_VARIABLES, scope='generator'))` whose pairs are
clipped and applied). A scope that only reads data builds no layer, and
the apply of a step's own pairs trains no more than that step: the
filter keeps every variable there is. Each source is synthetic."""

import scanned

_ONE_MODEL = """\
    import tensorflow as tf
    from utils import DataLoader
    from models import H_estimator

    with tf.name_scope('dataset'):
        loader = DataLoader('train', 128, 128)
        batch = loader(batch_size=4).make_one_shot_iterator().get_next()
        inputs = batch[..., 0:6]

    with tf.variable_scope('generator', reuse=None):
        warped = H_estimator(inputs)

    with tf.name_scope('training'):
        g_loss = tf.add_n([tf.reduce_mean(tf.abs(warped - inputs))],
                          name='g_loss')
        g_step = tf.Variable(0, dtype=tf.int32, trainable=False, name='g_step')
        g_optimizer = tf.train.AdamOptimizer(1e-4, name='g_optimizer')
        g_vars = tf.get_collection(key=tf.GraphKeys.TRAINABLE_VARIABLES,
                                   scope='generator')
        grads = g_optimizer.compute_gradients(g_loss, var_list=g_vars)
        for i, (g, v) in enumerate(grads):
            if g is not None:
                grads[i] = (tf.clip_by_norm(g, 3), v)
        g_train_op = g_optimizer.apply_gradients(
            grads, global_step=g_step, name='g_train_op')
    """


def test_the_one_model_under_the_filtered_scope_is_silent():
  assert scanned.found(_ONE_MODEL) == []


def test_the_data_scope_alone_is_silent():
  # Without the clipping loop: the apply of the step's own pairs.
  text = _ONE_MODEL.replace(
      "        for i, (g, v) in enumerate(grads):\n"
      "            if g is not None:\n"
      "                grads[i] = (tf.clip_by_norm(g, 3), v)\n", "")
  assert scanned.found(text) == []


def test_a_backbone_built_beside_the_filtered_head_is_found():
  text = _ONE_MODEL.replace(
      "    with tf.variable_scope('generator', reuse=None):\n"
      "        warped = H_estimator(inputs)\n",
      "    with tf.variable_scope('backbone'):\n"
      "        features = ResNet(inputs)\n"
      "    with tf.variable_scope('generator', reuse=None):\n"
      "        warped = H_estimator(features)\n")
  assert scanned.found(text) == [("var-list-filter", 20)]


def test_a_dataset_scope_that_builds_a_layer_is_found():
  # A scope named for data that makes a trainable layer feeding the model.
  text = _ONE_MODEL.replace(
      "        inputs = batch[..., 0:6]\n",
      "        inputs = tf.layers.dense(batch[..., 0:6], 6)\n")
  assert scanned.found(text) == [("var-list-filter", 18)]


def test_a_wider_step_of_the_same_loss_is_found():
  # A second step over the generator and a stem: the first keeps the stem.
  text = _ONE_MODEL.replace(
      "    with tf.variable_scope('generator', reuse=None):\n",
      "    with tf.variable_scope('stem'):\n"
      "        inputs = tf.layers.conv2d(inputs, 6, 3)\n"
      "    with tf.variable_scope('generator', reuse=None):\n").replace(
      "        g_train_op = g_optimizer.apply_gradients(\n",
      "        every = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,"
      " scope='stem') + g_vars\n"
      "        warm_op = g_optimizer.minimize(g_loss, var_list=every)\n"
      "        g_train_op = g_optimizer.apply_gradients(\n")
  assert scanned.found(text) == [("var-list-filter", 20)]


# Part thirty-four's deep-optics script: an optical part (a height map
# under 'PSFs') and a digital one under 'system', whose helper convolves
# each colour by `tf.nn.conv2d` in a scope of its own; each part has its
# own optimizer over one gradient list, the two ops grouped.
_TWO_PARTS = """\
    import tensorflow as tf


    def blur_image(image, psfs):
        with tf.variable_scope("Red"):
            blur_r = tf.nn.conv2d(image, psfs, [1, 1, 1, 1], 'VALID')
        blur = tf.stack([blur_r], axis=3)
        return blur


    def system(psfs, image):
        with tf.variable_scope("system", reuse=tf.AUTO_REUSE):
            blur = blur_image(image, psfs)
            return tf.layers.conv2d(blur, 1, 3)


    with tf.variable_scope("PSFs"):
        a = tf.get_variable("a", [15, 1])
        psfs = tf.reshape(a, [1, 1, 15, 1])

    out = system(psfs, image)
    cost = tf.reduce_mean(tf.square(out - target))
    vars_optical = tf.trainable_variables("PSFs")
    vars_digital = tf.trainable_variables("system")
    grads = tf.gradients(cost, vars_optical + vars_digital)
    grads_optical = grads[:len(vars_optical)]
    grads_digital = grads[len(vars_optical):]
    op_optical = opt_optical.apply_gradients(zip(grads_optical, vars_optical))
    op_digital = opt_digital.apply_gradients(zip(grads_digital, vars_digital))
    train_op = tf.group(op_optical, op_digital)
    """


def test_a_convolution_by_a_made_kernel_builds_no_layer():
  assert scanned.found(_TWO_PARTS) == []


def test_a_convolution_layer_built_outside_both_parts_is_found():
  text = _TWO_PARTS.replace(
      "    out = system(psfs, image)\n",
      "    with tf.variable_scope(\"stem\"):\n"
      "        image = tf.layers.conv2d(image, 3, 3)\n"
      "    out = system(psfs, image)\n")
  assert scanned.found(text) == [("var-list-filter", 30)]
