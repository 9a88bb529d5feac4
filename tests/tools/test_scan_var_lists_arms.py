"""`tfpartial scan`'s `var-list-filter` where a flag chooses among joins
of filtered groups the list a step trains (part sixteen's unsupervised
depth and flow trainer: `if FLAGS.mode == "depthflow": pose + depth +
flow`, `elif FLAGS.mode == "depth": pose + depth`): the finding is at the
first arm that leaves a group out, not at a group's filter. Each source is
synthetic."""

import scanned

_MODES = """\
    import tensorflow as tf

    FLAGS = tf.app.flags.FLAGS


    def train():
      opt = tf.train.AdamOptimizer(FLAGS.learning_rate)
      model = Model(images)
      var_pose = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="pose_net")
      var_depth = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="depth_net")
      var_flow = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="flow_net")
      if FLAGS.mode == "depthflow":
        var_train_list = var_pose + var_depth + var_flow
      elif FLAGS.mode == "depth":
        var_train_list = var_pose + var_depth
      else:
        var_train_list = var_flow
      grads = opt.compute_gradients(model.loss, var_list=var_train_list)
      return opt.apply_gradients(grads)
    """

# The same choice, with the group the narrower arm leaves out trained by a
# step of its own on the same loss: between them the steps train all.
_MODES_WITH_THE_REST = """\
    import tensorflow as tf

    FLAGS = tf.app.flags.FLAGS


    def train():
      opt = tf.train.AdamOptimizer(FLAGS.learning_rate)
      flow_opt = tf.train.AdamOptimizer(FLAGS.flow_learning_rate)
      model = Model(images)
      var_pose = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="pose_net")
      var_depth = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="depth_net")
      var_flow = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="flow_net")
      if FLAGS.mode == "depthflow":
        var_train_list = var_pose + var_depth + var_flow
      else:
        var_train_list = var_pose + var_depth
      grads = opt.compute_gradients(model.loss, var_list=var_train_list)
      flow_grads = flow_opt.compute_gradients(model.loss, var_list=var_flow)
      return tf.group(opt.apply_gradients(grads),
                      flow_opt.apply_gradients(flow_grads))
    """


def test_a_flag_s_arm_leaving_a_group_out_is_the_finding():
  assert scanned.found(_MODES) == [("var-list-filter", 15)]


def test_an_arm_whose_groups_are_all_set_out_first_stays_at_its_filter():
  # Without a narrower arm the choice is no choice: the filter stays the
  # finding's place.
  text = _MODES.replace("var_train_list = var_pose + var_depth\n",
                        "var_train_list = var_depth + var_pose + var_flow\n")
  text = text.replace("var_train_list = var_flow\n",
                      "var_train_list = var_flow + var_pose + var_depth\n")
  assert scanned.found(text) == [("var-list-filter", 11)]


def test_the_group_left_out_trained_by_its_own_step_stays_silent():
  assert scanned.found(_MODES_WITH_THE_REST) == []
