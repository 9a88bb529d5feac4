"""`tfpartial scan` after the review of t43-steps: a restored part counts
as feeding the trained scope only through what it outputs (a teacher
beside its student that share an input, a list that `__init__` starts
empty beside a read of `self.config`, stay silent); a `Saver` restored in
another class restores nothing here; a cut before a split counts only for
a list of trainable variables left fixed (not a target network synced by
hand, nor moving averages); and the restore rule reads a model file once,
however many steps ask of it."""

import sys

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan
from tests.tools import scanned
from tests.tools import test_scan_steps_cut_before_split as cut
from tests.tools import test_scan_steps_restored_encoder as restored

_TEACHER_AND_STUDENT = """
import tensorflow as tf


class Distiller(object):
    def __init__(self, config):
        self.config = config
        self.teacher_variables = []

    def build(self, x):
        images = tf.image.resize(x, [32, 32])
        with tf.variable_scope('teacher'):
            self.teacher_logits = tf.layers.dense(images, 10)
        with tf.variable_scope('student'):
            self.student_logits = tf.layers.dense(images, STUDENT_UNITS)
        self.loss = tf.reduce_mean(tf.square(
            self.student_logits - tf.stop_gradient(self.teacher_logits)))
        self.teacher_variables = tf.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES, scope='teacher')
        saver = tf.train.Saver(self.teacher_variables)

        def restore_fn(sess):
            saver.restore(sess, '/tmp/teacher.ckpt')

        self.init_fn = restore_fn
"""


def _distilled(model):
  return scanned.in_project({
      "kd/__init__.py": "", "kd/model.py": model,
      "train.py": restored._DISTILLED_TRAIN})


def test_a_student_reading_an_input_it_shares_with_its_teacher_is_silent():
  assert _distilled(_TEACHER_AND_STUDENT.replace(
      "STUDENT_UNITS", "10")) == []


def test_a_student_reading_self_config_beside_an_empty_first_list_is_silent():
  assert _distilled(_TEACHER_AND_STUDENT.replace(
      "STUDENT_UNITS", "self.config.units")) == []


def test_a_student_fed_the_teacher_s_output_is_still_found():
  assert _distilled(_TEACHER_AND_STUDENT.replace(
      "tf.layers.dense(images, STUDENT_UNITS)",
      "tf.layers.dense(self.teacher_logits, 10)")) == [
          ("var-list-filter", "train.py", 10)]


_NAMED_ENCODER = """
import tensorflow as tf


def densenet_161(images):
    return tf.layers.dense(images, 8)
"""


def test_an_encoder_called_by_its_scope_s_name_from_another_file_is_found():
  model = restored._MODEL.replace("RESTORE", restored._RESTORED).replace(
      "encoder(self.images", "embedding.densenet_161(self.images").replace(
          "import tensorflow as tf\n",
          "import tensorflow as tf\nfrom im2txt import embedding\n", 1)
  assert scanned.in_project({
      "im2txt/__init__.py": "", "im2txt/model.py": model,
      "im2txt/embedding.py": _NAMED_ENCODER,
      "train.py": restored._TRAIN}) == [("var-list-filter", "train.py", 11)]


def test_a_saver_restored_only_by_another_class_restores_nothing():
  model = restored._MODEL.replace("RESTORE", (
      "        saver = tf.train.Saver(self.encoder_variables)\n"
      "        self.save_fn = lambda sess: saver.save(sess, '/tmp/m')")).replace(
          "import tensorflow.contrib.slim as slim\n",
          "import tensorflow.contrib.slim as slim\n\n\n"
          "class Loader(object):\n"
          "    def load(self, sess):\n"
          "        saver = tf.train.Saver(tf.global_variables())\n"
          "        saver.restore(sess, '/tmp/m')\n")
  assert scanned.in_project({
      "im2txt/__init__.py": "", "im2txt/model.py": model,
      "train.py": restored._TRAIN}) == []


_DDPG = """
import tensorflow as tf


class Model(object):
    def build(self, obs, ret):
        with tf.variable_scope('actor'):
            pi = tf.layers.dense(obs, 4)
        with tf.variable_scope('critic'):
            q = tf.layers.dense(tf.concat([obs, pi], 1), 1)
        with tf.variable_scope('target'):
            q_targ = tf.layers.dense(tf.concat([obs, pi], 1), 1)
        self.target_variables = tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope='target')
        self.pi_loss = -tf.reduce_mean(q)
        self.q_loss = tf.reduce_mean((q - tf.stop_gradient(ret + q_targ)) ** 2)


def main(obs, ret):
    model = Model()
    model.build(obs, ret)
    online = [v for v in tf.trainable_variables()
              if v not in model.target_variables]
    pi_vars = [v for v in online if 'critic' not in v.name]
    q_vars = [v for v in online if 'critic' in v.name]
    pi_op = tf.train.AdamOptimizer(1e-4).minimize(model.pi_loss, var_list=pi_vars)
    q_op = tf.train.AdamOptimizer(1e-3).minimize(model.q_loss, var_list=q_vars)
    return pi_op, q_op


def soft_update(model, online, tau=0.005):
    return tf.group(*[t.assign((1 - tau) * t + tau * s)
                      for t, s in zip(model.target_variables, online)])
"""


def test_a_cut_of_a_target_network_synced_in_a_helper_stays_silent():
  assert scanned.found(_DDPG) == []


def test_a_cut_of_moving_averages_from_every_variable_stays_silent():
  code = cut._CAPTIONER.replace("EXTRA", "pass").replace(
      "        self.inception_variables = tf.get_collection(\n"
      "            tf.GraphKeys.GLOBAL_VARIABLES, scope='InceptionV3')",
      "        ema = tf.train.ExponentialMovingAverage(0.999)\n"
      "        self.ema_op = ema.apply(tf.trainable_variables())\n"
      "        self.ema_variables = [ema.average(v)\n"
      "                              for v in tf.trainable_variables()]").replace(
          "tf.trainable_variables()\n"
          "                if v not in model.inception_variables",
          "tf.global_variables()\n"
          "                if v not in model.ema_variables")
  assert scanned.found(code) == []


def _calls_made(files):
  """The Python calls a scan of `files` makes in the restore rule's
  modules, or from them (each item `ast.walk` yields them): work, counted,
  not timed."""
  count = [0]
  ends = ("_restored.py", "_warm_started.py")

  def profile(frame, event, arg):
    del arg
    if event == "call" and (frame.f_code.co_filename.endswith(ends) or (
        frame.f_back is not None and frame.f_back.f_code.co_filename.endswith(
            ends))):
      count[0] += 1

  sys.setprofile(profile)
  try:
    _scan.scan_project([_files.Source(p, t) for p, t in files.items()])
  finally:
    sys.setprofile(None)
  return count[0]


def _steps_beside_a_model(n):
  """`n` training scripts of one model file of `5 * n` helper methods."""
  filler = "".join(
      f"\n    def helper_{i}(self, x):\n        y = tf.layers.dense(x, 4)\n"
      f"        self.h_{i} = y\n        return y\n" for i in range(5 * n))
  model = restored._MODEL.replace("RESTORE", restored._RESTORED).replace(
      "    def build(self):", filler + "\n    def build(self):")
  files = {"im2txt/__init__.py": "", "im2txt/model.py": model}
  files.update({f"train_{i}.py": restored._TRAIN for i in range(n)})
  return files


def test_the_restore_rule_reads_a_model_file_once_for_all_its_steps():
  small, large = (_calls_made(_steps_beside_a_model(n)) for n in (3, 12))
  # Linear: 4x the steps and the model, under 4x the work (not 16x).
  assert large < 6 * small, (small, large)


def test_a_cut_whose_list_a_script_of_its_own_pretrains_is_no_cut():
  # The pretraining step alone trains a part: that one is found.
  model = cut._CAPTIONER.replace("EXTRA", "pass")
  pretrain = ("import tensorflow as tf\nfrom cap import model as m\n\n\n"
              "def pretrain(images, seqs):\n"
              "    model = m.Model()\n"
              "    model.build(images, seqs)\n"
              "    return tf.train.AdamOptimizer(1e-3).minimize(\n"
              "        model.nll, var_list=model.inception_variables)\n")
  assert scanned.in_project({
      "cap/__init__.py": "", "cap/model.py": model,
      "pretrain.py": pretrain}) == [("var-list-filter", "pretrain.py", 9)]
