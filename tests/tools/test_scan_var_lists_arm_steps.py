"""`tfpartial scan`'s `var-list-filter` where a flag's `if` chooses between
two steps of one loss, one over a filtered group and the other over that
group joined with the rest (part twenty-four's burst low-light trainer:
`if fix_coarse_weights == True: minimize(G_loss, var_list=new_variables)`,
`else: minimize(G_loss, var_list=new_variables + restore_variables)`):
the finding is at the step of the arm that leaves a group out, where a
reader makes the choice, not at the group's filter, which both arms read.
Each source is synthetic."""

import scanned

_TWO_STEPS = """\
    import tensorflow as tf

    fix_coarse_weights = True

    t_vars = tf.trainable_variables()
    new_variables = []
    restore_variables = []
    for t in t_vars:
      if "fine" in t.name:
        new_variables.append(t)
      else:
        restore_variables.append(t)
    variables = new_variables + restore_variables
    lr = tf.placeholder(tf.float32)
    if fix_coarse_weights == True:
      G_opt = tf.train.AdamOptimizer(lr).minimize(G_loss, var_list=new_variables)
    else:
      G_opt = tf.train.AdamOptimizer(lr).minimize(G_loss, var_list=variables)
    """

# The same choice written by another team: a configured attribute, the
# join written in the arm, the narrow step in the `else`.
_TWO_STEPS_ELSE = """\
    import tensorflow as tf


    def build(config, loss):
      head = [v for v in tf.trainable_variables() if v.name.startswith("head")]
      body = [v for v in tf.trainable_variables() if not v.name.startswith("head")]
      opt = tf.train.MomentumOptimizer(config.lr, 0.9)
      if config.train_all:
        train_op = opt.minimize(loss, var_list=head + body)
      else:
        train_op = opt.minimize(loss, var_list=head)
      return train_op
    """


def test_the_step_of_the_arm_leaving_a_group_out_is_the_finding():
  assert scanned.found(_TWO_STEPS) == [("var-list-filter", 16)]


def test_the_narrow_step_in_the_else_is_the_finding():
  assert scanned.found(_TWO_STEPS_ELSE) == [("var-list-filter", 11)]


def test_arms_training_the_same_groups_stay_at_the_filter():
  # No arm leaves a group out: the filter stays the finding's place.
  text = _TWO_STEPS.replace("var_list=variables)", "var_list=new_variables)")
  assert scanned.found(text) == [("var-list-filter", 10)]


def test_arms_of_two_losses_stay_silent():
  # Two losses are two models' steps, not one choice of what to train:
  # between them they train every group.
  text = _TWO_STEPS.replace("minimize(G_loss, var_list=variables)",
                            "minimize(D_loss, var_list=variables)")
  assert scanned.found(text) == []
