"""`tfpartial scan`'s `var-list-filter` where the scopes a helper opens
only convolve with kernels made elsewhere (`tf.nn.conv2d(x, psfs)`):
such a scope builds no layer, so the filters that leave it out leave
no variable out. Each source is synthetic."""

import scanned

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
