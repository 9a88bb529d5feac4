"""`tfpartial scan` on functions of many stages: what a gate reads of
the whole function for one step (the lists the function's loops fill
and its calls are handed, the names its ops are assigned to and the
blocks running them, the arms of its `if ... else`s) is read once per
function, so a function of many steps costs about the same per step
however many there are; what it finds is unchanged."""

import scanned


def _stages_with_their_rest(n):
  """One function: `n` stages, each a filtered list and its complement
  minimised on one loss and run together in a loop of their own."""
  return ("import tensorflow as tf\n\ndef train(sess, loss, data, X):\n"
          "  tvars = tf.trainable_variables()\n" + "".join(
              f"  vars{i} = [v for v in tvars if 'stage{i}' in v.name]\n"
              f"  rest{i} = [v for v in tvars if v not in vars{i}]\n"
              f"  op{i} = tf.train.AdamOptimizer(1e-3).minimize(loss, "
              f"var_list=vars{i})\n"
              f"  oprest{i} = tf.train.AdamOptimizer(1e-3).minimize(loss, "
              f"var_list=rest{i})\n"
              f"  for x in data:\n"
              f"    sess.run([op{i}, oprest{i}], feed_dict={{X: x}})\n"
              for i in range(n)))


def _stages_of_their_own_loss(n):
  """One function: `n` stages, each minimising a loss of its own over a
  filtered list, run in a loop of its own."""
  return ("import tensorflow as tf\n\ndef train(sess, loss0, data, X):\n"
          "  tvars = tf.trainable_variables()\n" + "".join(
              f"  loss{i + 1} = loss{i} * 2\n" for i in range(n)) + "".join(
              f"  vars{i} = [v for v in tvars if 'stage{i}' in v.name]\n"
              f"  op{i} = tf.train.AdamOptimizer(1e-3).minimize(loss{i}, "
              f"var_list=vars{i})\n"
              f"  for x in data:\n"
              f"    sess.run(op{i}, feed_dict={{X: x}})\n" for i in range(n)))


def _scoped_stages(n):
  """One function: `n` scopes built one on the other, and a step per
  scope training that scope's collection on the last one's output."""
  built = "".join(f"  with tf.variable_scope('stage{i}'):\n"
                  f"    h{i + 1} = tf.layers.dense(h{i}, 4)\n"
                  for i in range(n))
  steps = "".join(
      f"  vars{i} = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
      f"scope='stage{i}')\n"
      f"  op{i} = tf.train.AdamOptimizer(1e-3).minimize("
      f"tf.reduce_mean(h{n}), var_list=vars{i})\n" for i in range(n))
  runs = "".join(f"  sess.run(op{i})\n" for i in range(n))
  return ("import tensorflow as tf\n\ndef train(sess, h0):\n" + built
          + steps + runs)


def _ratio(make, where):
  small, large = (scanned.scan_work(make(n), where) for n in (10, 40))
  return large / max(small, 1), (small, large)


def test_the_lists_set_by_hand_are_read_once_per_function():
  # Was cubic: each step unparsed every call's arguments for each list
  # filtered beside its own (x62 for 4 times the stages at 4097196); what
  # is left is one look-up per list filtered beside the step's (x6.1).
  ratio, work = _ratio(_stages_with_their_rest, "_set_by_hand.py")
  assert ratio <= 8, work


def test_the_ops_run_together_are_read_once_per_function():
  # Was cubic: each pair of steps of one loss walked the function's
  # assignments, and each complementary pair every block of it for its
  # runs (x48 at 4097196); what is left is one look-up per pair (x7).
  ratio, work = _ratio(_stages_with_their_rest, "_run_together.py")
  assert ratio <= 8, work


def test_the_arms_of_a_functions_ifs_are_read_once_per_function():
  # Was cubic: each pair of steps the gates compare walked the function
  # for the `if`s holding each (x63 at 4097196); the pairs are left
  # (x12: quadratic, a few calls each).
  ratio, work = _ratio(_stages_of_their_own_loss, "_same_test.py")
  assert ratio <= 16, work


def test_a_scan_of_many_stages_no_longer_grows_cubically():
  # The whole scan (x36 at 4097196, cubic): what is left is still
  # quadratic, the steps times the function (x12 for 4 times the steps;
  # `_deep_nodes`, `_updated_apart`, `_step_gates` and `_complemented`
  # each walk the function per step, the next costs to take).
  ratio, work = _ratio(_stages_with_their_rest, "")
  assert ratio <= 14, work


def test_the_attributes_a_function_keeps_its_ops_in_are_read_once():
  # Was cubic: each pair of steps walked the function for the attribute
  # its op is kept in (x69 at 4097196); what is left is a look-up per
  # pair the gates ask about (x10).
  ratio, work = _ratio(_scoped_stages, "_run_off.py")
  assert ratio <= 12, work


def test_the_scopes_a_functions_steps_leave_are_read_once():
  # Was cubic: each step gathered what every step of its function is
  # made of and walked the function's scopes anew (x16 at 4097196 here,
  # each step's lists read for each step); now once per function (x5.7
  # at d773085, each step still keyed by its function's steps; x4 keyed
  # by the one list of them).
  ratio, work = _ratio(_scoped_stages, "_scopes_untrained.py")
  assert ratio <= 5, work


def test_what_the_stages_find_is_unchanged():
  assert scanned.found(_stages_with_their_rest(3)) == []
  assert scanned.found(_stages_of_their_own_loss(3)) == []
  assert scanned.found(_scoped_stages(3)) == []


def test_what_a_function_asserts_of_its_lists_is_read_once():
  # Was quadratic: each step walked the function three times for the
  # names its list is bound to and the asserts of them (x16 at 4097196).
  ratio, work = _ratio(_stages_with_their_rest, "_asserted.py")
  assert ratio <= 6, work


def test_what_a_functions_steps_and_gradient_calls_train_is_read_once():
  # Was quadratic: each step walked the function for the names of its
  # steps' lists, its gradient calls and the name bound to its list, and
  # asked every other list whether it complements its own (x15 at
  # 4097196); each list's filter is now read once.
  ratio, work = _ratio(_stages_with_their_rest, "_partition.py")
  assert ratio <= 6, work
