"""`tfpartial scan`'s `var-list-filter` on a second step over some of the
scopes a first step trains, both minimising one loss (part nineteen's
two-phase classifiers: every scope first, then only the head); beside
twins where the two lists name the same scopes or the steps minimise
other losses (a GAN's halves), silent."""

from tests.tools import scanned

_MODEL = """
import tensorflow as tf


def fc(x, num_in, num_out, name):
    with tf.variable_scope(name):
        w = tf.get_variable('w', [num_in, num_out])
        b = tf.get_variable('b', [num_out])
        return tf.nn.relu(tf.matmul(x, w) + b)


class Net(object):
    def __init__(self, x, y):
        h = fc(x, 4096, 256, 'texture')
        h = fc(h, 256, 64, 'texture_fc1')
        logits = fc(h, 64, 7, 'fc2')
        self.loss = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
"""

_RUN = """
import tensorflow as tf
from model import Net

T = tf.GraphKeys.TRAINABLE_VARIABLES


def train(x, y, data, div):
    model = Net(x, y)
    optimizer = tf.train.AdamOptimizer(1e-4)
    first_vars = tf.get_collection(T, "texture") + tf.get_collection(
        T, "texture_fc1") + tf.get_collection(T, "fc2")
    first_op = optimizer.minimize(model.loss, var_list=first_vars)
    second_vars = tf.get_collection(T, "fc2")
    second_op = optimizer.minimize(model.loss, var_list=second_vars)
    with tf.Session() as sess:
        for epoch in range(100):
            op = first_op if epoch < div else second_op
            sess.run(op, feed_dict={x: data[0], y: data[1]})
"""


def _found(run):
  return [(idiom, path, line) for idiom, path, line
          in scanned.in_project({"model.py": _MODEL, "run.py": run})
          if idiom == "var-list-filter"]


def test_a_second_step_over_some_scopes_of_the_loss_is_found():
  assert _found(_RUN) == [("var-list-filter", "run.py", 14)]


def test_a_second_step_over_the_same_scopes_is_silent():
  code = _RUN.replace('second_vars = tf.get_collection(T, "fc2")',
                      "second_vars = first_vars")
  assert _found(code) == []


def test_steps_over_other_losses_are_silent():
  # Each step minimises its own loss: no loss reaches both lists.
  code = _RUN.replace("minimize(model.loss, var_list=second_vars)",
                      "minimize(model.head_loss, var_list=second_vars)")
  assert _found(code) == []


_ADVERSARY = """
import tensorflow as tf


def fit(x, y, z, classifier, adversary):
    with tf.variable_scope("classifier_model"):
        logits = classifier(x)
    with tf.variable_scope("adversary_model"):
        guess = adversary(logits)
    loss = tf.reduce_mean(tf.square(logits - y))
    adv_loss = tf.reduce_mean(tf.square(guess - z))
    opt = tf.train.AdamOptimizer(1e-3)
    adv_opt = tf.train.AdamOptimizer(1e-3)
    classifier_vars = [var for var in tf.trainable_variables()
                       if "classifier_model" in var.name]
    adversary_vars = [var for var in tf.trainable_variables()
                      if "adversary_model" in var.name]
    adv_grads = {var: grad for (grad, var) in adv_opt.compute_gradients(
        adv_loss, var_list=classifier_vars)}
    pairs = []
    for (grad, var) in opt.compute_gradients(loss, var_list=classifier_vars):
        pairs.append((grad - adv_grads[var], var))
    step = opt.apply_gradients(pairs)
    with tf.control_dependencies([step]):
        adv_step = adv_opt.minimize(adv_loss, var_list=adversary_vars)
    with tf.Session() as sess:
        for _ in range(100):
            sess.run([step, adv_step])
"""


def test_a_loop_variable_drawn_from_another_list_names_no_scope():
  # `var` of the comprehension is not the loop's `var` over the
  # classifier's pairs: the adversary's list names only its own scope.
  assert [f for f in scanned.in_project(_ADVERSARY)
          if f[0] == "var-list-filter"] == []


_ATTRIBUTES = """
import tensorflow as tf


class Seq2Seq(object):
    def __init__(self, x, label, class_lr):
        with tf.variable_scope("prediction"):
            with tf.variable_scope("encoder"):
                cells = [tf.nn.rnn_cell.GRUCell(32) for _ in range(3)]
                _, state = tf.nn.dynamic_rnn(cells[0], x, dtype=tf.float32)
            cell = tf.nn.rnn_cell.GRUCell(64)
            with tf.variable_scope("decoder"):
                self.pred, _ = tf.nn.dynamic_rnn(cell, x, initial_state=state)
        self.loss = tf.reduce_mean(tf.abs(self.pred - x))
        opt = tf.train.AdamOptimizer(1e-3)
        gradients, self.pred_vars = zip(*opt.compute_gradients(self.loss))
        self.updates = opt.apply_gradients(zip(gradients, self.pred_vars))
        with tf.variable_scope("classifier"):
            logits = tf.layers.dense(state, 60)
            self.cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
                logits=logits, labels=label))
        optimizer = tf.train.AdamOptimizer(class_lr)
        self.encoder_vars = tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, "prediction/encoder")
        self.classifier_vars = tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, "classifier")
        self.classification_vars = self.encoder_vars + self.classifier_vars
        self.train_finetune = optimizer.minimize(
            self.cost, var_list=self.classification_vars)
        self.train_fixed = optimizer.minimize(
            self.cost, var_list=self.classifier_vars)
"""


def test_lists_kept_on_the_object_name_their_scopes_too():
  # shlizee's Predict-Cluster: `self.train_fixed` trains only the
  # classifier's scope of the cost `self.train_finetune` trains the
  # encoder for too; the lists are attributes of `self`. Another loss's
  # step over every variable (the prediction loss's pairs) and a cost read
  # only from the classifier's scope do not make the head a model of its
  # own: the same cost's wider step reaches the encoder it leaves out. The
  # wider step itself stays silent (its rest is that other loss's). The
  # finding is at the narrower step, where the choice is made, not at the
  # classifier's filter, which both steps read.
  assert [f for f in scanned.in_project(_ATTRIBUTES)
          if f[0] == "var-list-filter"] == [("var-list-filter", "t.py", 30)]


def test_lists_kept_on_the_object_over_the_same_scopes_are_silent():
  code = _ATTRIBUTES.replace("var_list=self.classifier_vars",
                             "var_list=self.classification_vars")
  assert [f for f in scanned.in_project(code)
          if f[0] == "var-list-filter"] == []
