"""`tfpartial scan`: a step's list joined from the values of dicts of
trainable variables (litcoderr's Error Encoding Network: `trainable =
trainable + list(f_weights.values())` for the f and phi dicts, while the
g dict, restored into `tf.Variable`s entry by entry, is handed to the
same model and decodes its output) leaves the other dicts out. What each
dict holds is read from what is stored into it (entries overwritten by
variables count as variables; key names never decide). Silent: every
dict the model is given listed, a dict holding arrays, a dict another
step trains (a GAN's halves) or a whole step beside, a dict given only to
another model whose output meets the trained one in the loss (a teacher,
also one call given both that applies each to the data alone), an anchor
a penalty subtracts from the trained dict, a dict the loss never reads,
variables made untrainable."""

import pytest

import scanned

_SCRIPT = """\
    import numpy as np
    import tensorflow as tf


    class Model(object):
      def __init__(self, x, g_w, f_w, phi_w):
        self.x, self.g_w, self.f_w, self.phi_w = x, g_w, f_w, phi_w

      def feed(self):
        h = tf.matmul(self.x, self.f_w["w1"])
        h = tf.matmul(h, self.phi_w["w1"])
        return tf.matmul(h, self.g_w["w2"])


    g_weights = {{}}
    f_weights = {{}}
    trainable = []
    phi_weights = {{
        "w1": tf.get_variable("P1", shape=[4, 4]),
    }}
    saved = np.load("det.npy", allow_pickle=True).item()
    for i in range(1, 3):
      g_weights["w{{}}".format(i)] = saved["w{{}}".format(i)]
      f_weights["w{{}}".format(i)] = saved["w{{}}".format(i)]
    for i in range(1, 3):
      g_weights["w{{}}".format(i)] = tf.Variable(
          g_weights["w{{}}".format(i)]{g_switch})
      f_weights["w{{}}".format(i)] = tf.Variable(f_weights["w{{}}".format(i)])

    {listed}
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 4])
    {model}
    loss = tf.losses.mean_squared_error(labels=y, predictions={out})
    step = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=trainable)
    {other}
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for _ in range(10):
        sess.run(step, feed_dict={{x: np.ones([1, 4]), y: np.ones([1, 4])}})
    """

_JOINED = """\
trainable = trainable + list(f_weights.values())
    trainable = trainable + list(phi_weights.values())"""

_EXTENDED = """\
trainable.extend(f_weights.values())
    trainable.extend(phi_weights.values())"""

_ALL = _JOINED + """
    trainable = trainable + list(g_weights.values())"""

_MODEL = "model = Model(x, g_weights, f_weights, phi_weights)"


def _script(listed=_JOINED, model=_MODEL, out="model.feed()", other="",
            g_switch=""):
  return _SCRIPT.format(listed=listed, model=model, out=out, other=other,
                        g_switch=g_switch)


_ARRAYS = _script().replace(
    '      g_weights["w{}".format(i)] = tf.Variable(\n'
    '          g_weights["w{}".format(i)])\n', "")

_TEACHER_MODEL = """\
student = Model(x, f_weights, f_weights, phi_weights)
    teacher = Model(x, g_weights, g_weights, g_weights)"""

_UNREAD_MODEL = "model = Model(x, f_weights, f_weights, phi_weights)"

FOUND = {
    "lists joined from dict values, a dict left out": (_script(), 36),
    "lists extended by dict values, a dict left out": (
        _script(listed=_EXTENDED), 36),
}

SILENT = {
    "every dict listed": _script(listed=_ALL),
    "the left-out dict holds arrays": _ARRAYS,
    "another step trains the left-out dict": _script(other=(
        "g_step = tf.train.AdamOptimizer(0.1).minimize(\n"
        "        -loss, var_list=list(g_weights.values()))")),
    "a whole step beside": _script(other=(
        "whole = tf.train.AdamOptimizer(0.1).minimize(loss)")),
    "the left-out dict is a teacher's": _script(
        model=_TEACHER_MODEL,
        out="student.feed() - tf.stop_gradient(teacher.feed())"),
    "the left-out dict is never read": _script(model=_UNREAD_MODEL),
    "the left-out variables are untrainable": _script(
        g_switch=", trainable=False"),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_dict_left_out_of_a_joined_list_is_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_dict_list_leaving_nothing_out_is_silent(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


_OTHER_SCRIPT = """\
    import tensorflow as tf
    import helpers

    w = tf.get_variable("w", [4, 4])
    x = tf.placeholder(tf.float32, [None, 4])
    loss = tf.reduce_sum(helpers.net(x, w))
    step = tf.train.AdamOptimizer(0.1).minimize(loss)
    """

_HELPERS = """\
    import tensorflow as tf


    def net(x, w):
      return tf.matmul(x, w)
    """

_RUNNER = """\
    import tensorflow as tf
    import latent

    whole = tf.train.AdamOptimizer(0.1).minimize(latent.loss)
    """


def _with(**others):
  files = {"latent.py": _script(), "helpers.py": _HELPERS}
  files.update({f"{k}.py": v for k, v in others.items()})
  return files


def test_a_whole_step_of_another_script_leaves_the_finding():
  # Another script (importing only a helper the step's script does not
  # import) runs in its own process: its whole step trains its own model.
  assert [f for f in scanned.in_project(_with(deterministic=_OTHER_SCRIPT))
          if f[0] == "var-list-filter"] == [
              ("var-list-filter", "latent.py", 36)]


def test_a_whole_step_run_with_the_script_is_silent():
  # A module importing the step's script builds a whole step of its loss.
  assert [f for f in scanned.in_project(_with(runner=_RUNNER))
          if f[0] == "var-list-filter"] == []


# The left-out dict given with a listed one to a penalty that pulls the
# trained weights toward it (an anchor of trainable variables,
# `penalty(f_weights, g_weights)`): no entry of it is applied to what the
# trained dict computes, so no model holds both.
_ANCHOR = _script(
    model=("model = Model(x, f_weights, f_weights, phi_weights)\n"
           "    pen = penalty(f_weights, g_weights)"),
    out="model.feed() + pen").replace(
        "class Model(object):",
        "def penalty(a, b):\n"
        "  return sum(tf.reduce_sum((a[k] - b[k]) ** 2) for k in a)\n\n\n"
        "class Model(object):")


def test_an_anchor_given_with_the_trained_dict_is_silent():
  assert scanned.in_text(_ANCHOR, "var-list-filter") == []


# One call of the project given both dicts that applies each to the data
# alone and compares the outputs (a distillation loss): a teacher.
_DISTILL = _script(
    model="model = Model(x, f_weights, f_weights, phi_weights)",
    out="distill(x, f_weights, g_weights)").replace(
        "class Model(object):",
        "def distill(x, s, t):\n"
        "  student = tf.matmul(x, s['w1'])\n"
        "  teacher = tf.stop_gradient(tf.matmul(x, t['w1']))\n"
        "  return tf.reduce_sum((student - teacher) ** 2)\n\n\n"
        "class Model(object):")


def test_a_distillation_call_given_both_dicts_is_silent():
  assert scanned.in_text(_DISTILL, "var-list-filter") == []
