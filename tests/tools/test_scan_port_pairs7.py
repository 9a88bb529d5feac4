"""`tfpartial scan --diff` on forms seen in part seven of the corpus (issue
30): each (source, expected diff) pair in the shape of a real instance,
and look-alikes that must stay "by hand"."""
import textwrap

import pytest

from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan
from tests.tools import real_ports

# bryankim96/stux-DNN (mnist/train_sparse_update.py): a top-k mask made once
# per weight, fetched in a session, made a `tf.constant`, and written back
# into the list of pairs in a loop over `enumerate`; the list is applied
# after the loop.
ENUMERATED = ("""\
    import numpy as np
    import tensorflow as tf


    def build(loss, weight_diff_vars, fraction, learning_rate):
        step = tf.Variable(0, dtype=tf.int64, name='global_step', trainable=False)
        optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
        gradients = optimizer.compute_gradients(loss)
        masks = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i, (grad, var) in enumerate(gradients):
                if var.name in weight_diff_vars:
                    shape = grad.get_shape().as_list()
                    k = max(int(sess.run(tf.size(grad)) * fraction), 1)
                    values, indices = tf.nn.top_k(tf.reshape(grad, [-1]), k=k)
                    indices = sess.run(indices)
                    mask = np.zeros(int(np.prod(shape)), dtype=np.float32)
                    mask[indices] = 1.0
                    mask = mask.reshape(shape)
                    mask = tf.constant(mask)
                    masks.append(mask)
                    gradients[i] = (tf.multiply(grad, mask),gradients[i][1])

        train_op = optimizer.apply_gradients(gradients, global_step=step)
        return train_op
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,5 +1,6 @@
     import numpy as np
     import tensorflow as tf
    +import tfpartial
     
     
     def build(loss, weight_diff_vars, fraction, learning_rate):
    @@ -9,6 +10,7 @@
         masks = []
         with tf.Session() as sess:
             sess.run(tf.global_variables_initializer())
    +        spec = tfpartial.FreezeSpec()
             for i, (grad, var) in enumerate(gradients):
                 if var.name in weight_diff_vars:
                     shape = grad.get_shape().as_list()
    @@ -20,7 +22,9 @@
                     mask = mask.reshape(shape)
                     mask = tf.constant(mask)
                     masks.append(mask)
    -                gradients[i] = (tf.multiply(grad, mask),gradients[i][1])
    +                spec = spec | tfpartial.freeze(
    +                    gradients[i][1], np.broadcast_to(tf.get_static_value(tf.convert_to_tensor(mask)) == 0, gradients[i][1].shape.as_list()))
    +                gradients[i] = (grad,gradients[i][1])
     
    -    train_op = optimizer.apply_gradients(gradients, global_step=step)
    +    train_op = spec.apply_gradients(optimizer, gradients, global_step=step)
         return train_op
    """)

# The same with the pair unpacked whole (`for i, gv in enumerate(gvs)`), a
# mask written out, and `*`.
ENUMERATED_PAIR = ("""\
    import numpy as np
    import tensorflow as tf


    def build(loss, optimizer):
        gvs = optimizer.compute_gradients(loss)
        for i, gv in enumerate(gvs):
            if 'kernel' in gv[1].name:
                mask = tf.constant(np.tril(np.ones(gv[1].shape.as_list(), np.float32)))
                gvs[i] = (gv[0] * mask, gv[1])
        return optimizer.apply_gradients(gvs)
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,11 +1,15 @@
     import numpy as np
     import tensorflow as tf
    +import tfpartial
     
     
     def build(loss, optimizer):
         gvs = optimizer.compute_gradients(loss)
    +    spec = tfpartial.FreezeSpec()
         for i, gv in enumerate(gvs):
             if 'kernel' in gv[1].name:
                 mask = tf.constant(np.tril(np.ones(gv[1].shape.as_list(), np.float32)))
    -            gvs[i] = (gv[0] * mask, gv[1])
    -    return optimizer.apply_gradients(gvs)
    +            spec = spec | tfpartial.freeze(
    +                gv[1], np.broadcast_to(tf.get_static_value(tf.convert_to_tensor(mask)) == 0, gv[1].shape.as_list()))
    +            gvs[i] = (gv[0], gv[1])
    +    return spec.apply_gradients(optimizer, gvs)
    """)


def _diff_of(text):
  text = textwrap.dedent(text)
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["grads-mask"], findings
  data, _ = _diff.diff(findings, {"m.py": _files.Source("m.py", text)})
  return findings[0], data.decode()


@pytest.mark.parametrize("source, expected", [ENUMERATED, ENUMERATED_PAIR],
                         ids=["enumerated", "enumerated-pair"])
def test_a_constant_mask_per_pair_in_a_loop_is_ported(source, expected):
  finding, diff = _diff_of(source)
  assert finding.edits, finding.by_hand
  # (`dedent` empties the context lines of blank lines.)
  assert [line.rstrip() for line in diff.splitlines()] == textwrap.dedent(
      expected).splitlines()


@pytest.mark.parametrize("source, reason", [
    # Magnitude pruning: the mask is recomputed from the weight at every
    # step (a tensor of the graph, not a constant).
    (ENUMERATED[0].replace(
        "mask = tf.constant(mask)",
        "mask = tf.cast(tf.abs(var) > 0.1, tf.float32)"),
     "not a constant"),
    # The list is rebuilt after the loop: the apply is not of its pairs.
    (ENUMERATED[0].replace(
        "\n        train_op = optimizer.apply_gradients(",
        "\n        gradients = [(g * 0.5, v) for g, v in gradients]"
        "\n        train_op = optimizer.apply_gradients("),
     "the list the loop writes changes before the apply"),
    # The mask is a variable the program assigns (a dynamic mask).
    (ENUMERATED_PAIR[0].replace(
        "tf.constant(np.tril(", "tf.Variable(np.tril("),
     "not a constant"),
])
def test_a_mask_per_pair_that_is_not_fixed_stays_by_hand(source, reason):
  finding, diff = _diff_of(source)
  assert not finding.edits and not diff
  assert reason in finding.by_hand, finding.by_hand


# The enumerated form as a TF1 program (`tensorflow.compat.v1`), run: the
# original and the port trained a few steps from one seed hold the elements
# the top-k mask leaves out bit for bit, train the others, and end alike.
PROGRAM = ENUMERATED[0].replace(
    "import tensorflow as tf", "import tensorflow.compat.v1 as tf")

RUN = '''\
import importlib.util

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def load(path):
  spec = importlib.util.spec_from_file_location(path[:-3], path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def run(module):
  tf.reset_default_graph()
  tf.set_random_seed(0)
  w = tf.get_variable("w", [4, 5])
  w_diff = tf.Variable(tf.zeros([4, 5]), name="w_diff")
  x = tf.constant(np.random.RandomState(0).rand(8, 4).astype(np.float32))
  loss = tf.reduce_sum(tf.square(tf.matmul(x, w + w_diff) - 1.0))
  grad = tf.gradients(loss, w_diff)[0]
  train_op = module.build(loss, ["w_diff:0"], 0.25, 0.01)
  with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    first = session.run(grad).ravel()
    top = np.zeros(first.size, bool)
    top[np.argsort(-first, kind="stable")[:5]] = True
    before = session.run([w, w_diff])
    for _ in range(3):
      session.run(train_op)
    after = session.run([w, w_diff])
  frozen = [np.zeros([4, 5], bool), ~top.reshape(4, 5)]
  return list(zip(before, after, frozen))


compare(load("m_original.py"), load("m.py"))
'''


def test_the_enumerated_port_runs_and_holds_the_masked_out_elements(
    tmp_path):
  for name in ("m.py", "m_original.py"):
    (tmp_path / name).write_text(textwrap.dedent(PROGRAM))
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "m.py", by_hand=["m.py:23"]))
  ported = (tmp_path / "m.py").read_text()
  assert "gradients[i] = (grad,gradients[i][1])" in ported, ported
  real_ports.run_and_compare(tmp_path, RUN)
