"""`tfpartial scan`'s `var-list-filter` on steps built one per element
of a comprehension, the element's arm chosen by its own index (`[opt.
minimize(loss, var_list=scale_offset) if i != 0 else opt.minimize(loss)
for i, loss in enumerate(losses)]`), as in part thirty-two's
multi-style feed-forward network: every element's step is built, and
the first one's trains every variable, so no variable is left out of
training; silent. A flag choosing between the two steps (one built,
the filtered one while it holds) and a comprehension whose every step
is filtered are still found. Each source is synthetic."""

import scanned


_SOURCE = """\
    import tensorflow as tf

    def scale_offset_vars():
      found = []
      for layer in range(1, 4):
        found += tf.get_collection(
            tf.GraphKeys.VARIABLES, scope='net/layer%d/norm/scale' % layer)
      return found

    def build(losses, lr, only_scale_offset):
      scale_offset = scale_offset_vars()
      if only_scale_offset:
        steps = [
            tf.train.AdamOptimizer(lr).minimize(loss, var_list=scale_offset)
            if i != 0 else
            tf.train.AdamOptimizer(lr).minimize(loss)
            for i, loss in enumerate(losses)]
      else:
        steps = [tf.train.AdamOptimizer(lr).minimize(loss)
                 for loss in losses]
      return steps
    """


def test_a_filtered_step_beside_a_whole_one_per_element_is_silent():
  assert scanned.found(_SOURCE) == []


def test_a_flag_choosing_the_filtered_step_is_found():
  # One step is built: while the flag holds, only the scales train.
  source = _SOURCE.replace("if i != 0 else", "if only_scale_offset else")
  assert scanned.found(source) == [("var-list-filter", 6)]


def test_a_filtered_step_for_every_element_is_found():
  source = _SOURCE.replace(
      "tf.train.AdamOptimizer(lr).minimize(loss)\n            for i",
      "tf.train.AdamOptimizer(lr).minimize(loss, var_list=scale_offset)\n"
      "            for i")
  assert scanned.found(source) == [("var-list-filter", 6)]
