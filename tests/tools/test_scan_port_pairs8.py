"""`tfpartial scan --diff` on forms seen in part eight of the corpus (issue
30): each (source, expected diff) pair in the shape of a real instance,
look-alikes that must stay "by hand", and a run of the port."""
import textwrap

import pytest

from tests.tools import real_ports
from tests.tools import scanned

# nmasse/Short-term-plasticity-RNN (model.py) and the Masse lab's other
# RNNs: fixed masks from the parameters module, one per variable chosen by
# name, multiplied into the gradient in place in a loop over the pairs;
# each pair appended (its gradient clipped) to a new list that is applied.
# Written here in the same shape (no copy of the repository's code).
APPENDED = ("""\
    import numpy as np
    import tensorflow as tf
    from parameters import *


    def optimize(loss, learning_rate):
        opt = tf.train.AdamOptimizer(learning_rate=learning_rate)
        grads_and_vars = opt.compute_gradients(loss)

        # Masks on the gradients, then clipping
        capped_gvs = []
        for grad, var in grads_and_vars:
            if 'w_rnn' in var.op.name:
                grad *= par['w_rnn_mask']
            elif 'w_out' in var.op.name:
                grad *= par['w_out_mask']
            capped_gvs.append((tf.clip_by_norm(grad, par['clip_max_grad_val']), var))

        train_op = opt.apply_gradients(capped_gvs)
        return train_op
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,6 +1,7 @@
     import numpy as np
     import tensorflow as tf
     from parameters import *
    +import tfpartial
     
     
     def optimize(loss, learning_rate):
    @@ -9,12 +10,17 @@
     
         # Masks on the gradients, then clipping
         capped_gvs = []
    +    spec = tfpartial.FreezeSpec()
         for grad, var in grads_and_vars:
             if 'w_rnn' in var.op.name:
    +            spec = spec | tfpartial.freeze(
    +                var, np.broadcast_to(tf.get_static_value(tf.convert_to_tensor(par['w_rnn_mask'])) == 0, var.shape.as_list()))
                 grad *= par['w_rnn_mask']
             elif 'w_out' in var.op.name:
    +            spec = spec | tfpartial.freeze(
    +                var, np.broadcast_to(tf.get_static_value(tf.convert_to_tensor(par['w_out_mask'])) == 0, var.shape.as_list()))
                 grad *= par['w_out_mask']
             capped_gvs.append((tf.clip_by_norm(grad, par['clip_max_grad_val']), var))
     
    -    train_op = opt.apply_gradients(capped_gvs)
    +    train_op = spec.apply_gradients(opt, capped_gvs)
         return train_op
    """)

# The same with module-level NumPy masks and the gradient appended as it is.
APPENDED_PLAIN = ("""\
    import numpy as np
    import tensorflow as tf

    W_MASK = np.ones((4, 4), np.float32) - np.eye(4, dtype=np.float32)


    def build(loss, optimizer):
        gvs = optimizer.compute_gradients(loss)
        masked = []
        for g, v in gvs:
            if 'kernel' in v.name:
                g *= 0.5 * W_MASK
            masked.append((g, v))
        return optimizer.apply_gradients(masked)
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,5 +1,6 @@
     import numpy as np
     import tensorflow as tf
    +import tfpartial
     
     W_MASK = np.ones((4, 4), np.float32) - np.eye(4, dtype=np.float32)
     
    @@ -7,8 +8,11 @@
     def build(loss, optimizer):
         gvs = optimizer.compute_gradients(loss)
         masked = []
    +    spec = tfpartial.FreezeSpec()
         for g, v in gvs:
             if 'kernel' in v.name:
    +            spec = spec | tfpartial.freeze(
    +                v, np.broadcast_to(tf.get_static_value(tf.convert_to_tensor(0.5 * W_MASK)) == 0, v.shape.as_list()))
                 g *= 0.5 * W_MASK
             masked.append((g, v))
    -    return optimizer.apply_gradients(masked)
    +    return spec.apply_gradients(optimizer, masked)
    """)


def _diff_of(text):
  """The `grads-mask` finding of `m.py` and its `--diff` as text (a name
  test in the loop may be reported as a var-list filter besides)."""
  return scanned.finding_and_diff(text, "grads-mask")


def _with(source, old, new):
  assert source.count(old) == 1, old
  return source.replace(old, new)


@pytest.mark.parametrize("source, expected", [APPENDED, APPENDED_PLAIN],
                         ids=["appended-clipped", "appended-scaled"])
def test_constant_masks_per_variable_in_a_loop_of_appends_are_ported(
    source, expected):
  finding, diff = _diff_of(source)
  assert finding.edits, finding.by_hand
  # (`dedent` empties the context lines of blank lines.)
  assert [line.rstrip() for line in diff.splitlines()] == textwrap.dedent(
      expected).splitlines()


SOURCE = APPENDED[0]
APPEND = ("            capped_gvs.append((tf.clip_by_norm(grad, "
          "par['clip_max_grad_val']), var))\n")
APPLY = "        train_op = opt.apply_gradients(capped_gvs)\n"


@pytest.mark.parametrize("source, reason", [
    # Magnitude pruning: a mask recomputed from the weight.
    (_with(SOURCE, "grad *= par['w_out_mask']",
           "grad *= tf.cast(tf.abs(var) > 0.1, tf.float32)"),
     "not a constant"),
    # Noise added after the mask: the masked elements move in the original.
    (_with(SOURCE, "(tf.clip_by_norm(grad, par['clip_max_grad_val']), var)",
           "(grad + 1e-3, var)"), ""),
    (_with(SOURCE, APPEND, "            grad = grad + 1e-3\n" + APPEND),
     "changes in the loop other than by a mask"),
    # The list is used between the loop and the apply.
    (_with(SOURCE, APPLY, "        capped_gvs = capped_gvs[1:]\n" + APPLY),
     "not appended to one new list"),
    (_with(SOURCE, APPLY, "        log(capped_gvs)\n" + APPLY),
     "not appended to one new list"),
    # A pair appended with another variable than the loop's.
    (_with(SOURCE, "par['clip_max_grad_val']), var))",
           "par['clip_max_grad_val']), other))"),
     "not appended to one new list"),
])
def test_loops_of_appends_that_would_train_differently_stay_by_hand(
    source, reason):
  finding, diff = _diff_of(source)
  assert not finding.edits and not diff
  assert finding.by_hand and reason in finding.by_hand, finding.by_hand


PARAMETERS = """\
import numpy as np

par = {
    'w_rnn_mask': np.ones((4, 4), np.float32) - np.eye(4, dtype=np.float32),
    'w_out_mask': np.array([[1, 1], [0, 1], [1, 1], [1, 0]], np.float32),
    'clip_max_grad_val': 1.0,
}
"""

RUN = '''\
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
from parameters import par


''' + real_ports.LOAD + '''

def run(module):
  tf.reset_default_graph()
  tf.set_random_seed(0)
  w_rnn = tf.get_variable("w_rnn", [4, 4])
  w_out = tf.get_variable("w_out", [4, 2])
  x = tf.constant(np.random.RandomState(0).rand(8, 4).astype(np.float32))
  h = tf.tanh(tf.matmul(x, w_rnn))
  loss = tf.reduce_sum(tf.square(tf.matmul(h, w_out) - 1.0))
  train_op = module.optimize(loss, 0.01)
  with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    before = session.run([w_rnn, w_out])
    for _ in range(3):
      session.run(train_op)
    after = session.run([w_rnn, w_out])
  frozen = [par['w_rnn_mask'] == 0, par['w_out_mask'] == 0]
  return list(zip(before, after, frozen))


compare(load("m_original.py"), load("m.py"))
'''


def test_the_appended_port_runs_and_holds_the_masked_elements(tmp_path):
  program = textwrap.dedent(SOURCE).replace(
      "import tensorflow as tf", "import tensorflow.compat.v1 as tf")
  for name in ("m.py", "m_original.py"):
    (tmp_path / name).write_text(program)
  (tmp_path / "parameters.py").write_text(PARAMETERS)
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "m.py", by_hand=["m.py:14"]))
  ported = (tmp_path / "m.py").read_text()
  assert "spec.apply_gradients(opt, capped_gvs)" in ported, ported
  real_ports.run_and_compare(tmp_path, RUN)


# nmasse/Chunking, gdgrant/Winner-Take-All (the lab's `AdamOpt`): a
# hand-written Adam whose `compute_gradients` masks each variable's delta
# and adds it (`assign_add`); its `optimize` passes the result on to
# `apply_gradients` too. By hand, for the hand-written update (not for
# "more than one apply").
HAND_WRITTEN = """\
    import numpy as np
    import tensorflow as tf

    W_MASK = np.ones((4, 4), np.float32) - np.eye(4, dtype=np.float32)


    class AdamOpt(tf.train.Optimizer):

        def __init__(self, variables, learning_rate=0.001):
            super(AdamOpt, self).__init__(False, "AdamOpt")
            self.variables = variables
            self.learning_rate = learning_rate
            self.grad_descent = tf.train.GradientDescentOptimizer(1.0)

        def optimize(self, loss):
            grads_and_vars = self.compute_gradients(loss)
            train_op = self.apply_gradients(grads_and_vars)
            return train_op

        def compute_gradients(self, loss):
            self.gradients = self.grad_descent.compute_gradients(
                loss, var_list=self.variables)
            ops = []
            for (grads, _), var in zip(self.gradients, self.variables):
                delta_grad = -self.learning_rate * grads
                if 'W_rnn' in var.op.name:
                    delta_grad *= W_MASK
                ops.append(tf.assign_add(var, delta_grad))
            return tf.group(*ops)
    """


def test_a_masked_delta_of_a_hand_written_adam_says_so():
  finding, diff = _diff_of(HAND_WRITTEN)
  assert not finding.edits and not diff
  assert finding.by_hand.startswith("a hand-written update"), finding.by_hand
