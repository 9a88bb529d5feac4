"""`tfpartial scan`: a variable made after every train step of its graph
that trains the default list is trained by none of them (TF1's
`minimize(loss)` takes `tf.trainable_variables()` when it is built).
Setting it back to zeros freezes no weight: a beam search's saved output
and state, made in the notebook cell after the optimizer and reset before
each generated text. The same reset of a variable a step does train
stays a `weight-remask`."""

import pytest

import scanned

BEAM = """\
    graph = tf.Graph()
    with graph.as_default():
      x = tf.placeholder(tf.float32, [None, 8])
      {before}
      loss = tf.reduce_sum(tf.matmul(x, w))
      optimizer = tf.train.AdamOptimizer(0.001).minimize(loss)
      {after}
      reset_state = tf.group(
          *[saved_output[vi].assign(tf.zeros([1, 4])) for vi in range(5)])
      {again}

    with tf.Session(graph=graph) as session:
      for step in range(100):
        session.run(optimizer, feed_dict={{x: data()}})
        session.run(reset_state)
    """
_MADE = "saved_output = [tf.Variable(tf.zeros([1, 4])) for _ in range(5)]"
_W = "w = tf.Variable(tf.zeros([8, 4]))"
_SECOND = "second = tf.train.AdamOptimizer(0.01).minimize(loss)"


def _remasks(before, after, again=""):
  code = BEAM.format(before=before, after=after, again=again)
  return scanned.in_text(code, "weight-remask")


def test_state_made_after_the_only_step_is_not_a_remask():
  assert _remasks(_W, _MADE) == []


def test_lists_of_lists_made_after_an_apply_are_not_a_remask():
  code = BEAM.format(before=_W, after=_MADE, again="").replace(
      "minimize(loss)", "apply_gradients(gvs)").replace(
          "for _ in range(5)]", "for _ in range(5)] for n in (4, 4)]").replace(
              "saved_output = [", "saved_output = [[").replace(
                  "saved_output[vi]", "saved_output[0][vi]")
  assert "[[tf.Variable" in code and "apply_gradients" in code
  assert scanned.in_text(code, "weight-remask") == []


def test_a_step_built_in_a_loop_is_not_before_anything():
  # An eager loop builds its step each round: a variable made after the
  # call in the text is there at the next round's call.
  code = BEAM.format(before=_W, after=_MADE, again="").replace(
      "  optimizer = tf.train", "  for _ in range(3): optimizer = tf.train")
  assert scanned.in_text(code, "weight-remask") == [("weight-remask", 9)]


@pytest.mark.parametrize("where", ["made before the step",
                                   "a later step trains every variable"])
def test_the_same_reset_of_a_trained_variable_is_found(where):
  before, after, again = {
      "made before the step": (f"{_W}; {_MADE}", "pass", ""),
      "a later step trains every variable": (_W, _MADE, _SECOND),
  }[where]
  assert _remasks(before, after, again) == [("weight-remask", 9)]
