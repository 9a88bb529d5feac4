"""`tfpartial scan`: parts of a variable or of its gradient followed through
what splits and joins them: a table split in two and joined back with one
part stopped (chenghuige/wenzheng's `--num_finetune_words`), towers'
gradients averaged through `concat(axis=0, values=grads)` then masked
(ZetaRing/Pruning-on-CNN), a nil-row helper called in two loops of which
one is applied, from two files (zmtkeke/IRN); and the look-alikes that stay
silent: an activation split and joined, towers averaged with no mask, the
loop whose list nothing applies."""

import pytest

import scanned

POSITIVE = {
    "a table split and joined back with its tail stopped": ("""\
        table = tf.get_variable("word_embeddings", [vocab, 64])
        head, tail = tf.split(table, [n, vocab - n], 0)
        table = tf.concat([head, tf.stop_gradient(tail)], 0)
        out = tf.nn.embedding_lookup(table, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(out))
        """, [("stop-gradient-mix", 3)]),
    "towers' gradients averaged by concat(values=) then masked": ("""\
        def average_gradients(tower_grads):
          average_grads = []
          for grad_and_vars in zip(*tower_grads):
            grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
            grad = tf.concat(axis=0, values=grads)
            grad = tf.reduce_mean(grad, 0)
            v = grad_and_vars[0][1]
            mask = tf.get_variable(v.op.name + "_mask", v.get_shape(),
                                   initializer=tf.ones_initializer(),
                                   trainable=False)
            average_grads.append((tf.multiply(grad, mask), v))
          return average_grads

        tower_grads = []
        for i in range(2):
          with tf.device("/gpu:%d" % i):
            tower_grads.append(opt.compute_gradients(tower_loss(i)))
        train_op = opt.apply_gradients(average_gradients(tower_grads))
        """, [("grads-mask", 11)]),
}

NEGATIVE = {
    "an activation split and joined with a part stopped": """\
        w = tf.get_variable("w", [64, 64])
        h = tf.matmul(x, w)
        left, right = tf.split(h, 2, axis=-1)
        h = tf.concat([left, tf.stop_gradient(right)], -1)
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    "towers' gradients averaged with no mask": """\
        def average_gradients(tower_grads):
          average_grads = []
          for grad_and_vars in zip(*tower_grads):
            grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
            grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)
            average_grads.append((grad, grad_and_vars[0][1]))
          return average_grads

        tower_grads = [opt.compute_gradients(tower_loss(i)) for i in range(2)]
        train_op = opt.apply_gradients(average_gradients(tower_grads))
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_part_followed_through_a_split_or_join_is_found(name):
  code, expected = POSITIVE[name]
  assert scanned.in_text(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_split_or_join_of_no_kept_part_is_silent(name):
  assert scanned.in_text(NEGATIVE[name]) == []


HELPER = '''\
import tensorflow as tf


def zero_nil_slot(t):
  s = tf.shape(t)[1]
  z = tf.zeros(tf.stack([1, s]))
  return tf.concat(axis=0, values=[z, tf.slice(t, [1, 0], [-1, -1])])
'''

MODEL = '''\
import tensorflow as tf
from utils import zero_nil_slot


class Model:
  def __init__(self, opt):
    kb = opt.compute_gradients(self.kb_loss, [self.EE, self.RE])
    kb_nil = []
    for g, v in kb:
      if v.name in self._nil_vars:
        kb_nil.append((zero_nil_slot(g), v))
      else:
        kb_nil.append((g, v))
    self.kb_op = opt.apply_gradients(kb)
    qa = opt.compute_gradients(self.qa_loss, [self.QE, self.M])
    qa_nil = []
    for g, v in qa:
      if v.name in self._nil_vars:
        qa_nil.append((zero_nil_slot(g), v))
      else:
        qa_nil.append((g, v))
    self.qa_op = opt.apply_gradients(qa_nil)
'''

BASELINE = '''\
import tensorflow as tf
from utils import zero_nil_slot


class Baseline:
  def __init__(self, opt):
    gvs = opt.compute_gradients(self.loss)
    nil = []
    for g, v in gvs:
      if v.name in self._nil_vars:
        nil.append((zero_nil_slot(g), v))
      else:
        nil.append((g, v))
    self.op = opt.apply_gradients(nil)
'''


def test_a_nil_row_helper_is_shown_at_each_callers_applied_loop():
  found = scanned.in_project({"utils.py": HELPER, "model.py": MODEL,
                              "baseline.py": BASELINE})
  assert found == [("grads-mask", "baseline.py", 11),
                   ("grads-mask", "model.py", 19)], found


def test_a_constraint_masking_its_weight_in_place_is_a_remask():
  # TomSchammo/set_framework: `w *= self.mask_var` in a Constraint's
  # `__call__` (a backend variable made from the mask when it was built).
  found = scanned.in_text("""\
      class MaskWeights(Constraint):
        def __init__(self, mask):
          self.mask = mask.astype(np.float32, copy=False)
          self.mask_var = K.variable(self.mask, K.floatx())

        def __call__(self, w):
          w *= self.mask_var
          return w

      model.add(Dense(4000, kernel_constraint=MaskWeights(wm1)))
      model.fit(x, y)
      """)
  assert found == [("weight-remask", 6)], found  # At its `def`.


def test_a_constraint_scaling_in_place_by_its_own_norm_is_silent():
  assert scanned.in_text("""\
      class UnitNorm(Constraint):
        def __call__(self, w):
          w *= 1.0 / (K.epsilon() + K.sqrt(K.sum(K.square(w))))
          return w
      """) == []
