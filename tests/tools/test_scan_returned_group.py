"""`tfpartial scan` reads a group returned as it is built (`return
tf.group(op_head, op_body)`) in a step builder as it reads one bound to
a name first: a list and its complement, each minimised for the same
loss and joined by the group its caller runs, train every variable at
every step, and are silent. The twins whose group is built but not what
runs (the builder returns one op, or runs one op beside the group) leave
the complement untrained and are still found. Synthetic sources in the
shape of real code."""

import textwrap

import pytest
import scanned

_found = scanned.found

_BUILDER = """\
    import tensorflow as tf

    def build_train_op(loss, global_step):
      tvars = tf.trainable_variables()
      head_vars = [v for v in tvars if 'head' in v.name]
      body_vars = [v for v in tvars if v not in head_vars]
      op_head = tf.train.AdamOptimizer(1e-3).minimize(
          loss, var_list=head_vars, global_step=global_step)
      op_body = tf.train.AdamOptimizer(1e-4).minimize(
          loss, var_list=body_vars)
{tail}

    def main():
      loss = build_model()
      step = tf.train.get_or_create_global_step()
      train_op = build_train_op(loss, step)
      with tf.Session() as sess:
        for _ in range(1000):
          sess.run(train_op)
    """


@pytest.mark.parametrize("tail, expected", [
    # The group is what the builder returns: both ops run at every step.
    ("  return tf.group(op_head, op_body)", []),
    ("  return tf.group(op_head, op_body, name='train')", []),
    # Bound to a name first (as before): silent too.
    ("  train_op = tf.group(op_head, op_body)\n  return train_op", []),
    # Built but not returned: only the head's op runs.
    ("  tf.group(op_head, op_body)\n  return op_head",
     [("var-list-filter", 5)]),
    # Returned, but the head's op is also handed out alone.
    ("  tf.summary.scalar('lr', op_head)\n"
     "  return tf.group(op_head, op_body)", [("var-list-filter", 5)]),
    # A group of the head's op and an unrelated update: the body's list
    # is never trained.
    ("  return tf.group(op_head, tf.no_op())", [("var-list-filter", 5)]),
])
def test_a_returned_group_runs_both_halves(tail, expected):
  tail = textwrap.indent(tail, "    ")  # The template's own indent.
  assert _found(_BUILDER.format(tail=tail)) == expected
