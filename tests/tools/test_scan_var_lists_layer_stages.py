"""`tfpartial scan`'s `var-list-filter` on stage-wise training of an
unrolled network: a loop over a table of stages, each `(name, output,
new_vars)`, whose step trains the stage's new variables while a step of
the same loss trains every variable after it (part twenty-five's LISTA /
LAMP layer-wise training: the earlier layers held while the new one
learns); beside twins where each group of a loop has its own loss and no
whole step (an ensemble, a GAN's halves), or the whole step minimises
another loss, silent."""

from tests.tools import scanned

_STAGES = """
import tensorflow as tf


def build_lista(x, y, layers):
    stages = []
    xhat = tf.zeros_like(y)
    for t in range(layers):
        lam = tf.Variable(0.1, name='lam_%d' % t)
        xhat = tf.nn.relu(xhat + tf.matmul(x, tf.ones([4, 4])) - lam)
        stages.append(('LISTA T=%d' % t, xhat, (lam,)))
    return stages


def setup_training(stages, y, rate, refinements=(0.5, 0.1)):
    training = []
    for name, xhat, var_list in stages:
        loss = tf.nn.l2_loss(xhat - y)
        if var_list is not None:
            train = tf.train.AdamOptimizer(rate).minimize(loss, var_list=var_list)
            training.append((name, loss, train))
        for fm in refinements:
            train2 = tf.train.AdamOptimizer(rate * fm).minimize(loss)
            training.append((name + ' refine', loss, train2))
    return training
"""


def _found(code):
  return [(idiom, path, line) for idiom, path, line
          in scanned.in_project({"train.py": code})
          if idiom == "var-list-filter"]


def test_a_stage_step_beside_a_whole_step_of_its_loss_is_found():
  assert _found(_STAGES) == [("var-list-filter", "train.py", 20)]


def test_the_last_stage_alone_is_found():
  # Shown where the loop picks the stage.
  code = _STAGES.replace("for name, xhat, var_list in stages:",
                         "for name, xhat, var_list in [stages[-1]]:")
  assert _found(code) == [("var-list-filter", "train.py", 17)]


def test_stages_from_a_builder_call_are_found():
  code = _STAGES.replace("for name, xhat, var_list in stages:",
                         "for name, xhat, var_list in build_lista(x, y, 4):")
  code = code.replace("def setup_training(stages, y,",
                      "def setup_training(x, y,")
  assert _found(code) == [("var-list-filter", "train.py", 20)]


def test_groups_each_trained_by_their_own_loss_are_silent():
  # An ensemble: one loss per member, each trained over its own list.
  code = _STAGES.replace(
      "        for fm in refinements:\n"
      "            train2 = tf.train.AdamOptimizer(rate * fm).minimize(loss)\n"
      "            training.append((name + ' refine', loss, train2))\n", "")
  assert _found(code) == []


def test_a_whole_step_of_another_loss_is_silent():
  code = _STAGES.replace("minimize(loss)\n", "minimize(total_loss)\n")
  assert _found(code) == []
