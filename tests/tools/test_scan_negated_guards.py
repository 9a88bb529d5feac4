"""`tfpartial scan` reads `not g is None` (the `else` of `if acc[j] is
None:`) as the guard it negates, never as a choice of variables: a copy
of OpenAI's memory-saving gradients sums each tower's gradients into a
list under that guard, and the list it returns read as filtered by the
name tests its graph walk makes of ops. A test of a variable's name
negated the same way still chooses. Synthetic sources in the shape of
real code."""

import pytest

import scanned

_found = scanned.found

_SUMMED = """\
    import tensorflow as tf
    from tensorflow.python.ops import gradients as tf_gradients_lib
    tf_gradients = tf_gradients_lib.gradients


    def gradients(ys, xs):
        ops = tf.get_default_graph().get_operations()
        ops = [op for op in ops if '/read' not in op.name]
        checkpoints = [op.outputs[0] for op in ops]
        dv = tf_gradients(ys, checkpoints + xs)
        d_xs = dv[len(checkpoints):]
        for ts in checkpoints:
            dv = tf_gradients(ts, checkpoints + xs)
            d_xs_new = dv[len(checkpoints):]
            for j in range(len(xs)):
                if {test}:
                    d_xs[j] = d_xs_new[j]
                else:
                    d_xs[j] += d_xs_new[j]
        return d_xs


    def train(loss, optimizer):
        grads = gradients(loss, tf.trainable_variables())
        grads_and_vars = list(zip(grads, tf.trainable_variables()))
        return optimizer.apply_gradients(grads_and_vars)
    """

_KEPT = """\
    def train(loss, optimizer):
        kept = []
        for g, v in optimizer.compute_gradients(loss):
            if {test}:
                kept.append((g, v))
        return optimizer.apply_gradients(kept)
    """


@pytest.mark.parametrize("source, expected", [
    (_SUMMED.format(test="d_xs[j] is None"), []),
    (_SUMMED.format(test="d_xs[j] == None"), []),
    (_SUMMED.format(test="isinstance(d_xs[j], type(None))"), []),
    (_KEPT.format(test="not g is None"), []),
    (_KEPT.format(test="not isinstance(g, tf.IndexedSlices)"), []),
    (_KEPT.format(test="not 'head' in v.name"), [("var-list-filter", 5)]),
    (_KEPT.format(test="not ('head' in v.name)"), [("var-list-filter", 5)]),
], ids=["else-of-is-none", "else-of-eq-none", "else-of-isinstance",
        "not-is-none", "not-isinstance", "not-name-test",
        "not-name-test-parenthesised"])
def test_negated_guard(source, expected):
  assert _found(source) == expected
