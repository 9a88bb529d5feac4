"""`tfpartial scan` after the final read of round forty-one: two checks
of the round asked the same question of the whole project again for
every write or every helper (x15.6 and x15.9 for 4 times the code), and
now answer it once per module or per helper."""

import scanned


def _explored_settings(n):
  """`n` population-based-training helpers, each writing into its
  parameter and called once on a hyperparameter no optimizer trains."""
  return ("import tensorflow as tf\n"
          "theta = tf.get_variable('theta', [2])\n"
          "loss = tf.reduce_sum(tf.square(theta))\n"
          "train_step = tf.train.AdamOptimizer(0.1).minimize(loss)\n" +
          "".join(f"h{i} = tf.get_variable('h{i}', [2], trainable=False)\n"
                  f"def explore{i}(h):\n"
                  f"  return h.assign(h + tf.random_normal([2]) * 0.1)\n"
                  f"do{i} = explore{i}(h{i})\n" for i in range(n)) +
          "with tf.Session() as sess:\n  for step in range(50):\n"
          "    sess.run(train_step)\n    sess.run([" +
          ", ".join(f"do{i}" for i in range(n)) + "])\n")


def _kernels_through_a_cycle(n):
  """`n` scoped convolutions whose kernel one helper builds from `n`
  helpers, each reaching a helper that calls itself."""
  helpers = ("def rec(k, n=3):\n  if n:\n"
             "    return rec(tf.reverse(k, [0]), n - 1)\n  return k\n" +
             "".join(f"def f{i}(k):\n  return rec(k) * {i}\n"
                     for i in range(n)) +
             "def flip_all(k):\n  return " +
             " + ".join(f"f{i}(k)" for i in range(n)) + "\n")
  blurs = "".join(f"def blur{i}(image, psfs):\n"
                  f"  with tf.variable_scope('Red{i}'):\n"
                  f"    kernel = flip_all(psfs)\n"
                  f"    return tf.nn.conv2d(image, kernel, [1, 1, 1, 1], "
                  f"'VALID')\n" for i in range(n))
  return ("import tensorflow as tf\n" + helpers + blurs +
          "def system(psfs, image):\n"
          "  with tf.variable_scope('system'):\n"
          "    blur = " + " + ".join(f"blur{i}(image, psfs)"
                                    for i in range(n)) + "\n"
          "    return tf.layers.conv2d(blur, 1, 3)\n"
          "with tf.variable_scope('PSFs'):\n"
          "  psfs = tf.reshape(tf.get_variable('a', [15, 1]), [1, 1, 15, 1])\n"
          "cost = tf.reduce_mean(tf.square(system(psfs, image) - target))\n"
          "optical = tf.trainable_variables('PSFs')\n"
          "digital = tf.trainable_variables('system')\n"
          "grads = tf.gradients(cost, optical + digital)\n"
          "train_op = tf.group(\n"
          "    opt.apply_gradients(zip(grads[:len(optical)], optical)),\n"
          "    opt.apply_gradients(zip(grads[len(optical):], digital)))\n")


def test_names_read_as_values_are_read_once_per_module():
  # Was quadratic: each write into a helper's parameter walked every
  # module holding the helper's name (x15.6 at e15d2211).
  small, large = (scanned.scan_work(_explored_settings(n),
                                    "_passed_untrainable.py")
                  for n in (30, 120))
  assert large <= 6 * small, (small, large)


def test_a_helper_reached_through_a_cycle_is_read_once():
  # Was quadratic: an answer cut by a cycle was never kept, so every
  # call site read every helper again (x15.9 at e15d2211).
  small, large = (scanned.scan_work(_kernels_through_a_cycle(n),
                                    "_helper_makers.py")
                  for n in (20, 80))
  assert large <= 6 * small, (small, large)
