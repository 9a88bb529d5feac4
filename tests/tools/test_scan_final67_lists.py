"""`tfpartial scan`, var-list-filter's readings of a base class's call,
of a property and of a dict-joined list: the cases the final read found
(each look-alike reported before its mend).

Silent: an annotated parameter given, by some construction, anything not
shown to be a construction of the declared class (a subclass's
`super().__init__(Whole(...))`, a factory's call, an entry of a dict of
classes, an attribute of another object); the attribute assigned on the
object from outside its class (`t.model = ...`, `setattr`); a base's
public calling method that only an unrelated object's call names, or
that nothing calls once the subclass's own `__init__` drops the base's;
an anchor's entry scaled by, or cast to, a name bound to a constant
(`lam = 0.5`, `dtype = tf.float32`). Found: the same project with
`setattr` only named in a comment, and a trainer built by name whose
public calling method the script calls."""

import textwrap

import pytest

import scanned
import test_scan_dispatched_params as dispatched
import test_scan_mend2_67_lists as m2

_FOUND = [("var-list-filter", "network.py", 30)]


def _filters(files):
  return [f for f in scanned.in_project(files) if f[0] == "var-list-filter"]


def _base_files():
  files = dispatched._project()
  files["trainer.py"] = m2._public_base()
  return files


def _super_whole():
  """The subclass's `__init__` passes a `Whole` to the base's."""
  files = _base_files()
  files["whole.py"] = m2._WHOLE
  files["rms.py"] = textwrap.dedent(files["rms.py"]).replace(
      "import tensorflow as tf",
      "import tensorflow as tf\nfrom whole import Whole").rstrip() + """

  def __init__(self, model, y):
    super().__init__(Whole(model.x), y)
"""
  return files


def _given(construction):
  """The experiment builds the trainer from `construction` (a `Whole`
  reached other than by a direct construction)."""
  files = dispatched._project()
  files["whole.py"] = m2._WHOLE
  files["exp.py"] = dispatched._EXPERIMENT.replace(
      "from alex import AlexNet", "from whole import Whole").replace(
          "RMSPropTrainer(AlexNet(x), y).train()", construction)
  return files


def _entry(extra):
  """The script builds the trainer by name, then calls `prepare`."""
  files = dispatched._project()
  files["trainer.py"] = m2._public_base().replace("        self.prepare()\n",
                                                  "")
  files["whole.py"] = m2._WHOLE
  files["exp.py"] = dispatched._EXPERIMENT.replace(
      "from alex import AlexNet",
      "from alex import AlexNet\nfrom whole import Whole").replace(
          "RMSPropTrainer(AlexNet(x), y).train()",
          "t = RMSPropTrainer(AlexNet(x), y)\n    " + extra
          + "t.prepare()\n    t.train()")
  return files


def _own_init(public, loader=False):
  """The subclass's own annotated `__init__` (no `super()`) makes no
  step; with `loader`, an unrelated object's `prepare` is called."""
  files = _base_files() if public else dispatched._project()
  files["rms.py"] = textwrap.dedent(files["rms.py"]).replace(
      "import tensorflow as tf",
      "import tensorflow as tf\nfrom network import Network").rstrip() + """

  def __init__(self, model: Network, y):
    self.model = model
    self.y = y
"""
  if loader:
    files["loader.py"] = (
        "class Loader(object):\n  def prepare(self):\n    return 1\n\n\n"
        "def batches():\n  loader = Loader()\n  loader.prepare()\n")
  return files


def _commented():
  files = _base_files()
  files["trainer.py"] = files["trainer.py"].replace(
      "class Trainer(object):",
      "# We never call setattr on trainers.\nclass Trainer(object):")
  return files


SILENT = {
    "P1 a subclass's super().__init__(Whole(...))": _super_whole,
    "P2 a factory's call returning a Whole": lambda: _given(
        "def make(x):\n      return Whole(x)\n"
        "    RMSPropTrainer(make(x), y).train()"),
    "P2b an entry of a dict of classes": lambda: _given(
        "MODELS = {'whole': Whole}\n"
        "    RMSPropTrainer(MODELS['whole'](x), y).train()"),
    "P2c an attribute of another object holding a Whole": lambda: _given(
        "class Box: pass\n    box = Box()\n    box.net = Whole(x)\n"
        "    RMSPropTrainer(box.net, y).train()"),
    "E1 the attribute assigned from outside the class": lambda: _entry(
        "t.model = Whole(x)\n    "),
    "E2 the attribute set by a setattr call in the script": lambda: _entry(
        "setattr(t, 'model', Whole(x))\n    "),
    "an unrelated object's call of the public calling method's name": (
        lambda: _own_init(public=True, loader=True)),
    "a private calling method an overridden __init__ ran, no own step": (
        lambda: _own_init(public=False)),
    "a public calling method an overridden __init__ ran, no own step": (
        lambda: _own_init(public=True)),
    "D1 an anchor's entry scaled by a name bound to a number": lambda: {
        "t.py": m2._penalty("lam * a[k] - b[k]", "a, b, lam",
                            "f_weights, g_weights, lam",
                            "    lam = 0.5\n")},
    "D2 an anchor's entry cast to a name bound to a dtype": lambda: {
        "t.py": m2._penalty("tf.cast(a[k], dtype) - b[k]", "a, b, dtype",
                            "f_weights, g_weights, dtype",
                            "    dtype = tf.float32\n")},
    "D3 an anchor's entry scaled by a name bound to a shape-only call": (
        lambda: {"t.py": m2._penalty("m * a[k] - b[k]", "a, b, m",
                                     "f_weights, g_weights, m",
                                     "    m = tf.ones_like(x)\n")}),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_look_alike_is_silent(name):
  assert _filters(SILENT[name]()) == []


FOUND = {
    "setattr only named in a comment": _commented,
    "a trainer built by name whose prepare the script calls": (
        lambda: _entry("")),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_real_case_is_found(name):
  assert _filters(FOUND[name]()) == _FOUND
