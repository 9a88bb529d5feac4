"""`tfpartial scan --diff` on forms seen in part nine of the corpus (issue
30): a (source, expected diff) pair in the shape of a real instance,
look-alikes that must stay "by hand" with a true reason, and a run of the
port."""
import textwrap

import pytest

from tfpartial._tools.scan import _scan
from tests.tools import real_ports
from tests.tools import scanned

# 0xDECAFC0FFEE/stamp2 (src/models/stmp.py, TestModel.py): a subclassed
# Keras model whose `call` sets row 0 (the padding item) of its own
# embedding weight back to zeros, and whose own `train_step` applies the
# gradients of `self.trainable_variables` with the Adam it made. Written
# here in the same shape (no copy of the repository's code).
RESET = ("""\
    import tensorflow as tf


    class Recommender(tf.keras.Model):

        def __init__(self, items, width):
            super().__init__()
            self.optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
            self.table = self.add_weight(
                shape=(items, width),
                initializer=tf.random_normal_initializer(stddev=0.1),
                dtype=tf.float32)
            self.out = tf.keras.layers.Dense(items)

        @tf.function
        def call(self, ids, training=False):
            # the padding item's row stays zero
            self.table[0].assign(tf.zeros(self.table[0].shape))
            mean = tf.reduce_mean(tf.nn.embedding_lookup(self.table, ids), axis=1)
            return self.out(mean)

        @tf.function
        def train_step(self, ids, labels):
            with tf.GradientTape() as tape:
                logits = self.call(ids, training=True)
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            gradients = tape.gradient(loss, self.trainable_variables)
            gradients = [tf.clip_by_norm(g, 100.) for g in gradients]
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            return loss
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,4 +1,5 @@
     import tensorflow as tf
    +import tfpartial


     class Recommender(tf.keras.Model):
    @@ -10,6 +11,7 @@
                 shape=(items, width),
                 initializer=tf.random_normal_initializer(stddev=0.1),
                 dtype=tf.float32)
    +        self.tfpartial_spec = tfpartial.freeze(self.table, 0)
             self.out = tf.keras.layers.Dense(items)

         @tf.function
    @@ -27,5 +29,5 @@
                     tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
             gradients = tape.gradient(loss, self.trainable_variables)
             gradients = [tf.clip_by_norm(g, 100.) for g in gradients]
    -        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
    +        self.tfpartial_spec.apply_gradients(self.optimizer, zip(gradients, self.trainable_variables))
             return loss
    """)


def _with(source, old, new):
  assert source.count(old) == 1, old
  return source.replace(old, new)


def test_a_padding_row_reset_in_call_is_ported_to_the_models_own_apply():
  source, expected = RESET
  finding, diff = scanned.finding_and_diff(source, "weight-remask")
  assert finding.edits, finding.by_hand
  # (`dedent` empties the context lines of blank lines.)
  assert [line.rstrip() for line in diff.splitlines()] == textwrap.dedent(
      expected).splitlines()


SOURCE = textwrap.dedent(RESET[0])


@pytest.mark.parametrize("source, reason", [
    # A second apply in the class (a warm-up step, another optimizer).
    (_with(SOURCE, "        return loss\n",
           "        return loss\n\n"
           "    def warm_up(self, gradients):\n"
           "        self.optimizer.apply_gradients(\n"
           "            zip(gradients, self.trainable_variables))\n"),
     "one `apply_gradients` of this class"),
    # The apply trains a list of its own, not the model's variables.
    (_with(SOURCE, "zip(gradients, self.trainable_variables))",
           "zip(gradients, self.chosen))"),
     "over `self.trainable_variables`"),
    # The weight made twice (its row is not plainly one place's).
    (_with(SOURCE, "        self.out = tf.keras.layers.Dense(items)\n",
           "        self.out = tf.keras.layers.Dense(items)\n"
           "        self.table = tf.Variable(tf.zeros((items, width)))\n"),
     "is not made once in this class"),
])
def test_resets_that_are_not_this_form_stay_by_hand_with_a_reason(
    source, reason):
  finding, diff = scanned.finding_and_diff(source, "weight-remask")
  assert not finding.edits and not diff
  assert finding.by_hand and reason in finding.by_hand, finding.by_hand


def test_a_reset_whose_row_is_chosen_at_run_time_is_not_ported():
  source = _with(SOURCE, "self.table[0].assign(tf.zeros(self.table[0].shape))",
                 "self.table[self.pad].assign(tf.zeros(self.table[0].shape))")
  findings = [f for f in _scan.scan_text("m.py", textwrap.dedent(source))
              if f.idiom == "weight-remask"]
  assert all(not f.edits for f in findings), findings


RUN = '''\
import importlib.util
import os

if importlib.util.find_spec("tf_keras") is not None:
  # `table[0].assign` is Keras 2's: TF >= 2.16 gets it from tf_keras (TF
  # 2.15's own tf.keras is Keras 2).
  os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow as tf


''' + real_ports.LOAD + '''

def run(module):
  tf.keras.utils.set_random_seed(0)
  model = module.Recommender(12, 4)
  rng = np.random.RandomState(0)
  ids = tf.constant(rng.randint(0, 12, size=(8, 5)))
  labels = tf.constant(rng.randint(0, 12, size=(8,)))
  model.call(ids)
  before = [model.table.numpy(), model.out.kernel.numpy()]
  for _ in range(4):
    model.train_step(ids, labels)
  model.call(ids)  # The original's reset after its last step.
  after = [model.table.numpy(), model.out.kernel.numpy()]
  frozen = [np.zeros((12, 4), bool), np.zeros((4, 12), bool)]
  frozen[0][0] = True
  return list(zip(before, after, frozen))


compare(load("m_original.py"), load("m.py"))
'''


def test_the_reset_port_runs_and_holds_the_row(tmp_path):
  program = textwrap.dedent(SOURCE)
  for name in ("m.py", "m_original.py"):
    (tmp_path / name).write_text(program)
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "m.py", by_hand=["m.py:18"]))
  ported = (tmp_path / "m.py").read_text()
  assert "self.tfpartial_spec.apply_gradients(self.optimizer," in ported
  real_ports.run_and_compare(tmp_path, RUN)


# 3outeille/DSD-training (src/dsd.py): a model's `train_step` calls a
# helper of the same class that multiplies each gradient by a mask from a
# list the class recomputes from the weights' magnitudes each epoch: the
# mask is read where the helper applies it, not in the caller.
DSD = """\
import tensorflow as tf


class Sparse(tf.keras.Model):

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.masks = [tf.ones_like(w) for w in model.trainable_variables]

    def update_masks(self):
        for i, w in enumerate(self.model.trainable_variables):
            self.masks[i] = tf.cast(tf.abs(w) > 0.1, tf.float32)

    def apply_masks(self, variables, gradients):
        for i, (w, grad, mask) in enumerate(zip(variables, gradients, self.masks)):
            gradients[i] = tf.multiply(grad, mask)
        return gradients

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self.model(x, training=True))
        variables = self.model.trainable_variables
        gradients = tape.gradient(loss, variables)
        gradients = self.apply_masks(variables, gradients)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return {}
"""


def test_a_mask_applied_in_a_helper_of_the_class_is_read_there():
  finding, diff = scanned.finding_and_diff(DSD, "grads-mask")
  assert not diff
  assert "the mask `mask` is not a constant" in finding.by_hand, (
      finding.by_hand)


# nmasse/Meta-Networks (AdamOpt.py): a hand-written Adam (no optimizer
# subclass) whose own `compute_gradients` masks the raw gradients by
# variable name, then keeps the moments and `assign_add`s the step.
ADAM = """\
import numpy as np
import tensorflow as tf
from parameters import par


class AdamOpt:

    def __init__(self, variables, learning_rate=0.001):
        self.variables = variables
        self.learning_rate = learning_rate
        self.plain = tf.train.GradientDescentOptimizer(learning_rate)
        self.m, self.v, self.delta = {}, {}, {}
        for v in variables:
            for slots in (self.m, self.v, self.delta):
                slots[v.op.name] = tf.Variable(tf.zeros(v.shape),
                                               trainable=False)

    def compute_gradients(self, loss, apply=True):
        self.gradients = self.plain.compute_gradients(
            loss, var_list=self.variables)
        self.ops = []
        for (grads, _), var in zip(self.gradients, self.variables):
            if 'w_rnn' in var.name:
                grads *= par['w_rnn_mask']
            grads = tf.clip_by_norm(grads, 1.0)
            new_m = 0.9 * self.m[var.op.name] + 0.1 * grads
            new_v = 0.999 * self.v[var.op.name] + 0.001 * grads * grads
            delta = -self.learning_rate * new_m / (tf.sqrt(new_v) + 1e-8)
            delta = tf.clip_by_norm(delta, 1)
            self.ops.append(tf.assign(self.m[var.op.name], new_m))
            self.ops.append(tf.assign(self.v[var.op.name], new_v))
            self.ops.append(tf.assign(self.delta[var.op.name], delta))
            if apply:
                self.ops.append(tf.assign_add(var, delta))
        return tf.group(*self.ops)
"""


def test_a_mask_in_a_hand_written_adams_compute_gradients_says_so():
  finding, diff = scanned.finding_and_diff(ADAM, "grads-mask")
  assert not diff
  assert finding.by_hand.startswith("a hand-written update"), (
      finding.by_hand)


# garion9013/impl-pruning-TF and its copies (`apply_prune_on_grads`): a
# helper of the module multiplies the gradient of each variable a pruning
# dict names by that round's mask, the gradient the second factor.
PRUNE = """\
import numpy as np
import tensorflow as tf


def apply_prune_on_grads(grads_and_vars, dict_nzidx):
    for key, nzidx in dict_nzidx.items():
        count = 0
        for grad, var in grads_and_vars:
            if var.name == key + ":0":
                nzidx_obj = tf.cast(tf.constant(nzidx), tf.float32)
                grads_and_vars[count] = (tf.multiply(nzidx_obj, grad), var)
            count += 1
    return grads_and_vars


def apply_prune(weights, session):
    dict_nzidx = {}
    for target in weights:
        weight = session.run(weights[target])
        dict_nzidx[target] = np.abs(weight) > 0.1
        session.run(weights[target].assign(weight * dict_nzidx[target]))
    return dict_nzidx


def main():
    w = tf.Variable(tf.ones([4, 4]), name="w")
    loss = tf.reduce_sum(tf.square(w))
    session = tf.Session()
    dict_nzidx = apply_prune({"w": w}, session)
    trainer = tf.train.AdamOptimizer(1e-4)
    grads_and_vars = trainer.compute_gradients(loss)
    grads_and_vars = apply_prune_on_grads(grads_and_vars, dict_nzidx)
    train_step = trainer.apply_gradients(grads_and_vars)
    for _ in range(10):
        session.run(train_step)
"""


def test_the_mask_named_for_a_helper_is_not_its_gradient():
  finding, diff = scanned.finding_and_diff(PRUNE, "grads-mask")
  assert not diff
  assert "the mask `nzidx_obj` is not a constant" in finding.by_hand, (
      finding.by_hand)
