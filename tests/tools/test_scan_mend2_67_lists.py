"""`tfpartial scan`, var-list-filter's readings of a base class's call,
of a property and of a dict-joined list: the cases a third read found
(each look-alike reported before its mend).

Silent: a base's call in a method the leaf's MRO never runs (an override
listed first, a mixin's or not, that does not call `super()`), or that
nothing calls on the subclass's object (its only caller, `__init__`,
overridden without `super()`); an annotated attribute a project subclass
binds to another object, or a parameter a construction gives an object
of another project class (duck typing); an anchor's entry reshaped like
the anchor, scaled by a number, masked by another dict or cast to a
given dtype before it is subtracted. Found: the same projects where the
calling method runs (a plain chain through `super()`), a subclass
keeping another object in another attribute, a dict applied to what
another computes from the data."""

import textwrap

import pytest

import scanned
import test_scan_dict_lists as dicts
import test_scan_dispatched_params as dispatched

_FOUND = [("var-list-filter", "network.py", 30)]


def _filters(files):
  return [f for f in scanned.in_project(files) if f[0] == "var-list-filter"]


def _public_base():
  """The base's step made in a public `prepare` its `__init__` calls."""
  return dispatched._BASE.replace("self.__prepare()", "self.prepare()").replace(
      "def __prepare(self):", "def prepare(self):").format(
          call=dispatched._CALL, hook=dispatched._HOOK)


_MIXED = """
import tensorflow as tf
from trainer import Trainer


class A(Trainer):
  def prepare(self):
    super().prepare()
    self.extra = 1


class B(Trainer):
  def prepare(self):
    self.loss = tf.reduce_mean((self.model.out - self.y) ** 2)
    self.step = tf.no_op()


class RMSPropTrainer({bases}):
  def _create_optimizer(self, loss, var_list=None):
    return tf.train.RMSPropOptimizer(0.1).minimize(loss, var_list=var_list)
"""


def _mixed(bases):
  files = dispatched._project()
  files["trainer.py"] = _public_base()
  files["rms.py"] = _MIXED.format(bases=bases)
  return files


_OWN_INIT = """
  def __init__(self, model, y):
    self.model = model
    self.y = y
    self.loss = tf.reduce_mean((self.model.out - self.y) ** 2)
    self.step = tf.train.AdamOptimizer(0.1).minimize(self.loss)
"""


def _own_init(public):
  """The subclass's own `__init__` (no `super()`) makes a whole step."""
  files = dispatched._project()
  files["rms.py"] = textwrap.dedent(files["rms.py"]).rstrip() + (
      "\n" + _OWN_INIT)
  if public:
    files["trainer.py"] = _public_base()
  return files


_WHOLE = """
import tensorflow as tf


class Whole(object):
  def __init__(self, x):
    with tf.variable_scope("whole"):
      w = tf.get_variable("w", [4, 2])
    self.out = tf.matmul(x, w)

  def load(self, path, sess):
    pass

  @property
  def trainable_variables(self):
    return tf.trainable_variables()
"""


def _rebound(attribute):
  """The subclass's `__init__` keeps a `Whole` (every variable) in
  `self.model` (or in another attribute, `self.whole`, then runs the
  base's `__init__`)."""
  files = dispatched._project()
  files["trainer.py"] = _public_base()
  files["whole.py"] = _WHOLE
  rest = ("self.y = y\n    self.prepare()" if attribute == "model"
          else "super().__init__(model, y)")
  files["rms.py"] = textwrap.dedent(files["rms.py"]).replace(
      "import tensorflow as tf",
      "import tensorflow as tf\nfrom whole import Whole").rstrip() + f"""

  def __init__(self, model, y):
    self.{attribute} = Whole(model.x)
    {rest}
"""
  return files


def _setattr():
  """The subclass sets its attributes from a dict by `setattr` (it may
  keep another object in `self.model`)."""
  files = dispatched._project()
  files["trainer.py"] = _public_base()
  files["rms.py"] = textwrap.dedent(files["rms.py"]).rstrip() + """

  def configure(self, **given):
    for key, value in given.items():
      setattr(self, key, value)
"""
  return files


def _duck(by_name):
  """The script passes a `Whole` (every variable), a project class not
  deriving from the annotated `Network`, directly or through a name."""
  files = dispatched._project()
  files["whole.py"] = _WHOLE
  text = dispatched._EXPERIMENT.replace(
      "from alex import AlexNet", "from whole import Whole")
  files["exp.py"] = text.replace(
      "RMSPropTrainer(AlexNet(x), y).train()",
      "model = Whole(x)\n    RMSPropTrainer(model, y).train()") if (
          by_name) else text.replace("AlexNet(x)", "Whole(x)")
  assert files["exp.py"] != text
  return files


def _penalty(expr, params="a, b", args="f_weights, g_weights", extra=""):
  """The trained dict pulled toward the left-out one by a function."""
  return dicts._script(
      model=("model = Model(x, f_weights, f_weights, phi_weights)\n"
             + extra + "    pen = penalty(%s)" % args),
      out="model.feed() + pen").replace(
          "class Model(object):",
          "def penalty(%s):\n"
          "  return sum(tf.reduce_sum((%s) ** 2) for k in a)\n\n\n"
          "class Model(object):" % (params, expr))


SILENT = {
    "a mixin listed first whose override does not call super()": (
        lambda: _mixed("A, B")),
    "an override listed first that does not call super()": (
        lambda: _mixed("B, A")),
    "a private calling method only an overridden __init__ calls": (
        lambda: _own_init(public=False)),
    "a public calling method only an overridden __init__ calls": (
        lambda: _own_init(public=True)),
    "an annotated attribute a subclass binds to another object": (
        lambda: _rebound("model")),
    "an annotated parameter given another project class's object": (
        lambda: _duck(by_name=False)),
    "an annotated parameter given a name bound to another class's object": (
        lambda: _duck(by_name=True)),
    "a calling method named in too many modules to tell its calls": (
        lambda: {**_mixed("A"), **{f"other{i}.py": "def prepare():\n  pass\n"
                                   for i in range(13)}}),
    "an annotated attribute a subclass's module may set by setattr": (
        lambda: _setattr()),
    "an anchor's entry reshaped like the anchor": lambda: {"t.py": _penalty(
        "tf.reshape(a[k], tf.shape(b[k])) - b[k]")},
    "an anchor's entry scaled by a number": lambda: {"t.py": _penalty(
        "lam * a[k] - b[k]", "a, b, lam", "f_weights, g_weights, 0.5")},
    "an anchor's entry masked by another dict": lambda: {"t.py": _penalty(
        "a[k] * m[k] - b[k]", "a, b, m", "f_weights, g_weights, masks",
        "    masks = {k: np.ones([4, 4], np.float32) for k in f_weights}\n")},
    "an anchor's entry cast to a given dtype": lambda: {"t.py": _penalty(
        "tf.cast(a[k], dtype) - b[k]", "a, b, dtype",
        "f_weights, g_weights, tf.float32")},
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_look_alike_is_silent(name):
  assert _filters(SILENT[name]()) == []


FOUND = {
    "the test's project (private __prepare from __init__)": (
        dispatched._project),
    "a plain chain through super()": lambda: _mixed("A"),
    "a subclass keeping another object in another attribute": (
        lambda: _rebound("whole")),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_real_case_is_found(name):
  assert _filters(FOUND[name]()) == _FOUND


_DECODED = """\
def decode(x, a, b):
  return tf.matmul(tf.matmul(x, a["w1"]), b["w2"])


class Model(object):"""


def test_a_dict_applied_to_what_another_computes_from_the_data_is_found():
  code = dicts._script(
      model="model = Model(x, f_weights, f_weights, phi_weights)",
      out="model.feed() + decode(x, f_weights, g_weights)").replace(
          "class Model(object):", _DECODED)
  assert [f[0] for f in scanned.in_text(code, "var-list-filter")] == [
      "var-list-filter"]
