"""`tfpartial scan`, var-list-filter's readings of a dict-joined list, of
a base class's call reaching an override and of a property read: the
look-alikes an independent read found reported, each now silent, beside
the real case each keeps.

Silent: a distillation loss reusing one local name for the student's pass
and then the teacher's (the name is also bound from the data); an anchor
penalty subtracting entries through `items()`; a base's call in a method
the only subclass overrides itself; a parameter annotated with the base
class while the object passed is a subclass whose own property returns
every variable; a Keras model's property that only drops moving
statistics, read through the object."""

import pytest

import scanned
import test_scan_dispatched_params as dispatched
import test_scan_property_lists as properties

_DISTILL = """\
    import numpy as np
    import tensorflow as tf


    def distill_loss(x, student, teacher):
      h = x
      for k in ("w1", "w2"):
        h = tf.nn.relu(tf.matmul(h, student[k]))
      s_out = h
      {second} = x
      for k in ("w1", "w2"):
        {second} = tf.nn.relu(tf.matmul({second}, teacher[k]))
      return tf.reduce_mean(tf.square(s_out - {second}))


    saved = np.load("teacher.npy", allow_pickle=True).item()
    student = {{"w1": tf.Variable(tf.zeros([4, 4])),
               "w2": tf.Variable(tf.zeros([4, 4]))}}
    teacher = {{}}
    for k in ("w1", "w2"):
      teacher[k] = saved[k]
    for k in ("w1", "w2"):
      teacher[k] = tf.Variable(teacher[k])
    trainable = []
    trainable = trainable + list(student.values())
    x = tf.placeholder(tf.float32, [None, 4])
    loss = distill_loss(x, student, teacher)
    step = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=trainable)
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for _ in range(10):
        sess.run(step, feed_dict={{x: np.ones([1, 4])}})
    """

_ANCHOR = """\
    import numpy as np
    import tensorflow as tf


    def penalised(x, y, f, anchor):
      out = tf.matmul(tf.nn.relu(tf.matmul(x, f["w1"])), f["w2"])
      pen = 0.0
      {loop}
      return tf.reduce_mean(tf.square(out - y)) + 0.01 * pen


    saved = np.load("pre.npy", allow_pickle=True).item()
    f = {{}}
    anchor = {{}}
    for k in ("w1", "w2"):
      f[k] = tf.Variable(saved[k])
      anchor[k] = tf.Variable(saved[k])
    trainable = list(f.values())
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 4])
    loss = penalised(x, y, f, anchor)
    step = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=trainable)
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for _ in range(10):
        sess.run(step, feed_dict={{x: np.ones([1, 4]), y: np.ones([1, 4])}})
    """
_ITEMS = """for name, w in f.items():
        pen += tf.nn.l2_loss(w - anchor[name])"""
_KEYS = """for name in f:
        pen += tf.nn.l2_loss(f[name] - anchor[name])"""


def _prepared():
  """The dispatched-parameters project with the base's call in a public
  `prepare` (the subclass inherits it)."""
  files = dispatched._project()
  files["trainer.py"] = dispatched._BASE.replace(
      "self.__prepare()", "self.prepare()").replace(
          "def __prepare(self):", "def prepare(self):").format(
              call=dispatched._CALL, hook=dispatched._HOOK)
  return files


_OWN_PREPARE = """
      def prepare(self):
        self.loss = tf.reduce_mean((self.model.out - self.y) ** 2)
        self.step = self._create_optimizer(self.loss,
                                           tf.trainable_variables())
    """

_WHOLE = """\
    import tensorflow as tf
    from network import Network


    class Whole(Network):
      def setup(self):
        h = self.fc(self.x, 8, "conv1")
        self.out = self.fc(h, 2, "fc8")

      @property
      def has_transfer_learning(self):
        return True

      @property
      def trainable_layers(self):
        return ["fc8"]

      @property
      def trainable_variables(self):
        return tf.trainable_variables()
    """


def _whole():
  files = dispatched._project()
  files["alex.py"] = _WHOLE
  files["exp.py"] = dispatched._EXPERIMENT.replace(
      "from alex import AlexNet", "from alex import Whole").replace(
          "AlexNet(x)", "Whole(x)")
  return files


_MOVING = """\
    import tensorflow as tf

    class Net(tf.keras.Model):
      def __init__(self):
        super().__init__()
        self.d1 = tf.keras.layers.Dense(8)
        self.bn = tf.keras.layers.BatchNormalization()
        self.d2 = tf.keras.layers.Dense(2)

      def call(self, x, training=False):
        return self.d2(self.bn(self.d1(x), training=training))

      @property
      def trainable_variables(self):
        return [v for v in super().trainable_variables
                if "moving" not in v.name]
    """

_MOVING_RUN = """\
    import tensorflow as tf
    from models import Net

    model = Net()
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x, y):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply_gradients(zip(grads, model.trainable_variables))
      return loss

    for _ in range(3):
      step(tf.ones([1, 4]), tf.ones([1, 2]))
    """

SILENT = {
    "a distillation loss reusing one local name for both passes":
        {"t.py": _DISTILL.format(second="h")},
    "a distillation loss naming each pass": {"t.py": _DISTILL.format(
        second="t")},
    "an anchor subtracted through items()": {"t.py": _ANCHOR.format(
        loop=_ITEMS)},
    "an anchor subtracted entry by entry": {"t.py": _ANCHOR.format(
        loop=_KEYS)},
    "a base's call in a method the subclass overrides": {
        **_prepared(), "rms.py": dispatched._RMS.format(
            parent="Trainer", given="loss, var_list=var_list")
        + _OWN_PREPARE},
    "a parameter annotated with a class a subclass overrides": _whole(),
    "a property dropping moving statistics read through the object": {
        "models.py": _MOVING, "train.py": _MOVING_RUN},
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_look_alike_is_silent(name):
  assert [f for f in scanned.in_project(SILENT[name])
          if f[0] == "var-list-filter"] == []


def test_a_base_call_in_an_inherited_method_is_found():
  assert [f for f in scanned.in_project(_prepared())
          if f[0] == "var-list-filter"] == [
              ("var-list-filter", "network.py", 30)]


def _base_with(old, new, call=dispatched._CALL):
  files = dispatched._project(call=call)
  assert old in files["trainer.py"]
  files["trainer.py"] = files["trainer.py"].replace(old, new)
  return files


# What the base's call is on decides whether it reaches the override.
RECEIVERS = {
    # The call's object is another parameter, not the method's own.
    "another parameter": _base_with(
        "def __prepare(self):", "def __prepare(self, trainer=None):",
        call=dispatched._CALL.replace("self._create", "trainer._create")),
    # The method's first parameter is the class, not an object of it.
    "a classmethod's first parameter": _base_with(
        "      def __prepare(self):",
        "      @classmethod\n      def __prepare(self):"),
    # The first parameter is rebound before the call.
    "a rebound first parameter": _base_with(
        "        self.loss = tf.reduce_mean(",
        "        self = Trainer.__new__(Trainer)\n"
        "        self.loss = tf.reduce_mean("),
}


@pytest.mark.parametrize("name", sorted(RECEIVERS))
def test_a_base_call_on_another_object_reaches_no_override(name):
  assert [f for f in scanned.in_project(RECEIVERS[name])
          if f[0] == "var-list-filter"] == []


# The left-out dict decodes what the listed one computes, the name also
# rebound from itself in between (the Error Encoding Network's f network:
# `result = result + z_emb`, then `conv2d_transpose(result, g[...])`).
_DECODED = _DISTILL.format(second="h").replace(
    """      h = x
      for k in ("w1", "w2"):
        h = tf.nn.relu(tf.matmul(h, student[k]))
      s_out = h
      h = x
      for k in ("w1", "w2"):
        h = tf.nn.relu(tf.matmul(h, teacher[k]))
      return tf.reduce_mean(tf.square(s_out - h))""",
    """      h = tf.matmul(x, student["w1"])
      h = h + 1.0
      h = tf.matmul(h, teacher["w2"])
      return tf.reduce_mean(tf.square(h - x))""")


def test_a_dict_decoding_the_listed_output_is_found():
  assert 'teacher["w2"]' in _DECODED
  assert [f[0] for f in scanned.in_project({"t.py": _DECODED})
          if f[0] == "var-list-filter"] == ["var-list-filter"]


def _declared_with(old, new):
  files = properties._trainer_project()
  assert old in files["trainer.py"]
  files["trainer.py"] = files["trainer.py"].replace(old, new)
  return files


# What the annotation says holds only while nothing else sets the object.
DECLARED = {
    # The parameter is rebound to a library's clone before it is kept.
    "an annotated parameter rebound": _declared_with(
        "        self.model = model\n",
        "        model = tf.keras.models.clone_model(model)\n"
        "        self.model = model\n"),
    # Another method keeps a parameter declared as nothing.
    "an attribute also set from an unannotated parameter": _declared_with(
        "      def train(self):",
        "      def swap(self, other):\n        self.model = other\n\n"
        "      def train(self):"),
}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_an_annotation_not_holding_decides_nothing(name):
  assert [f for f in scanned.in_project(DECLARED[name])
          if f[0] == "var-list-filter"] == []
