"""`tfpartial scan`, var-list-filter's readings of a base class's call,
of a property and of a dict-joined list: the cases a second read found
(each failed before its mend).

Found: a base's call in a method a subclass overrides but runs through
`super()` (the calling method, or `__init__` making the step); a base's
private `self.__prepare()` where a subclass has a private `__prepare` of
its own (name mangling: no override); a property filtering one scope
(or one part) that also drops moving statistics. Silent: an annotated
class's property a mixin listed first replaces; a teacher's pass given
only the student's shape or a tensor of ones shaped like it; an anchor
entry only cast before it is subtracted. A Keras override dropping a
layer by name from `super()`'s list is a filter (only the words of moving
statistics are looked through)."""

import textwrap

import pytest

import scanned
import test_scan_dispatched_params as dispatched
import test_scan_mend66_lists as mend66
import test_scan_property_lists as properties


def _filters(files):
  return [f for f in scanned.in_project(files) if f[0] == "var-list-filter"]


def _super_caller():
  """The subclass overrides `prepare`, running the base's through
  `super()`."""
  files = dispatched._project()
  files["trainer.py"] = dispatched._BASE.replace(
      "self.__prepare()", "self.prepare()").replace(
          "def __prepare(self):", "def prepare(self):").format(
              call=dispatched._CALL, hook=dispatched._HOOK)
  files["rms.py"] = dispatched._RMS.format(
      parent="Trainer", given="loss, var_list=var_list") + """
      def prepare(self):
        super().prepare()
        self.extra = 1
    """
  return files


def _init_super():
  """The base's `__init__` makes the step; the subclass's calls it."""
  files = dispatched._project()
  inline = files["trainer.py"].replace(
      "        self.__prepare()\n\n      def __prepare(self):\n", "")
  assert inline != files["trainer.py"]
  files["trainer.py"] = inline
  files["rms.py"] = files["rms.py"].replace(
      "    class RMSPropTrainer(Trainer):\n",
      "    class RMSPropTrainer(Trainer):\n"
      "      def __init__(self, model, y, lr=0.1):\n"
      "        self.lr = lr\n"
      "        super().__init__(model, y)\n\n")
  return files


def _private_same_name():
  """The subclass's own `__prepare` is `_RMSPropTrainer__prepare`."""
  files = dispatched._project()
  files["rms.py"] = files["rms.py"].replace(
      "    class RMSPropTrainer(Trainer):\n",
      "    class RMSPropTrainer(Trainer):\n"
      "      def __prepare(self):\n"
      "        self.decay = 0.9\n\n"
      "      def configure(self):\n"
      "        self.__prepare()\n\n")
  return files


_HEAD_MOVING = """\
        return [v for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                             scope="net/fc8")
                if "moving" not in v.name]"""
_LOOP_MOVING = properties._LOOP.replace(
    "        return var_list",
    '        return [v for v in var_list if "moving" not in v.name]')

FOUND = {
    "a base's call in a method overridden through super()": (
        _super_caller, [("var-list-filter", "network.py", 30)]),
    "a base's __init__ call run by a subclass's super().__init__": (
        _init_super, [("var-list-filter", "network.py", 30)]),
    "a base's private call beside a subclass's own private method": (
        _private_same_name, [("var-list-filter", "network.py", 30)]),
    "a property's scope filter that also drops moving statistics": (
        lambda: {"t.py": properties._net(_HEAD_MOVING)},
        [("var-list-filter", "t.py", 24)]),
    "a property's loop filter that also drops moving statistics": (
        lambda: {"t.py": properties._net(_LOOP_MOVING)},
        [("var-list-filter", "t.py", 26)]),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_real_case_is_found(name):
  files, expected = FOUND[name]
  assert _filters(files()) == expected


def _mixin():
  """`Whole(AllVariables, Network)`: the mixin's property runs."""
  files = mend66._whole()
  prop = """
      @property
      def trainable_variables(self):
        return tf.trainable_variables()
    """
  assert prop in files["alex.py"]
  files["alex.py"] = files["alex.py"].replace(prop, "\n").replace(
      "    class Whole(Network):", """    class AllVariables(object):
      @property
      def trainable_variables(self):
        return tf.trainable_variables()


    class Whole(AllVariables, Network):""")
  return files


_PASSES = """      h = x
      for k in ("w1", "w2"):
        h = tf.nn.relu(tf.matmul(h, student[k]))
      s_out = h
      h = x
      for k in ("w1", "w2"):
        h = tf.nn.relu(tf.matmul(h, teacher[k]))
      return tf.reduce_mean(tf.square(s_out - h))"""
_TEACHER_IN = """      s = tf.matmul(x, student["w1"])
      {inp}
      t = tf.matmul(t_in, teacher["w2"])
      return tf.reduce_mean(tf.square(s - t))"""


def _teacher_in(inp):
  text = mend66._DISTILL.format(second="h")
  assert _PASSES in text
  return {"t.py": text.replace(_PASSES, _TEACHER_IN.format(inp=inp))}


def _anchor(loop):
  return {"t.py": mend66._ANCHOR.format(loop=loop)}


_ALL_MOVING = """\
        return [v for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
                if "moving" not in v.name]"""

SILENT = {
    # Every variable but moving statistics: read as its source, no filter.
    "a property of every variable that drops moving statistics": lambda: {
        "t.py": properties._net(_ALL_MOVING)},
    "an annotated class's property a mixin listed first replaces": _mixin,
    "a teacher's input shaped by the student's batch": lambda: _teacher_in(
        "n = tf.shape(s)[0]\n      t_in = tf.reshape(x, [n, 4])"),
    "a teacher's input times ones like the student's": lambda: _teacher_in(
        "t_in = x * tf.ones_like(s)"),
    "an anchor's entry cast before it is subtracted": lambda: _anchor(
        "for name in f:\n"
        "        w = tf.cast(f[name], tf.float32)\n"
        "        pen += tf.nn.l2_loss(w - anchor[name])"),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_look_alike_is_silent(name):
  assert _filters(SILENT[name]()) == []


def test_a_teacher_decoding_the_students_output_is_found():
  assert [f[0] for f in _filters(_teacher_in("t_in = s + 1.0"))] == [
      "var-list-filter"]


def test_a_property_dropping_the_backbone_by_name_is_found():
  # Not moving statistics: a name test of another word is a filter.
  body = textwrap.dedent("""\
        return [v for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
                if "conv1" not in v.name]""")
  body = textwrap.indent(body, "        ")
  assert _filters({"t.py": properties._net(body)}) == [
      ("var-list-filter", "t.py", 24)]


def test_a_keras_property_dropping_a_layer_by_name_is_found():
  # The same override dropping another word than moving statistics' (a
  # layer's name) is a filter: only those words are looked through.
  models = mend66._MOVING.replace('"moving"', '"dense"')
  assert models != mend66._MOVING
  assert _filters({"models.py": models, "train.py": mend66._MOVING_RUN}) == [
      ("var-list-filter", "models.py", 15)]
