"""`tfpartial scan`'s `var-list-filter` on a model's own list of trained
parameters swapped for a part's: the base class's step differentiates
and applies `self.param`, and a subclass's fine-tuning method keeps the
full list aside (`self.param_ = self.param.copy()`) and sets `self.param`
to the new head's parameters only: the backbone is left out. The
look-alikes stay silent: a constructor gathering every part's list, and
the full list put back. Synthetic sources in the shape of real code
(part fourteen)."""

import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_BASE = """\
    import tensorflow as tf

    class Model:
      def __init__(self):
        self.param = []

      def train_step(self, x, y, loss_object, optimizer):
        with tf.GradientTape() as tape:
          loss = loss_object(y, self(x))
        gradients = tape.gradient(loss, self.param)
        optimizer.apply_gradients(zip(gradients, self.param))
    """


def _found(model, base="nn.py"):
  return [(idiom, path, line) for idiom, path, line in scanned.in_project(
      {base: _BASE, "vit.py": model})]


POSITIVE = {
    # Fine-tuning keeps the full list aside and trains the head only.
    "the trained list set to a new head's parameters": ("""\
        from nn import Model

        class ViT(Model):
          def fine_tuning(self, classes, flag=0):
            param = []
            if flag == 0:
              self.param_ = self.param.copy()
              self.head = Dense(classes, self.dim)
              param.extend(self.head.param)
              self.param = param
            else:
              self.param = self.param_
        """, [("var-list-filter", "vit.py", 10)]),
}

NEGATIVE = {
    # A constructor gathers every part's list: everything trains.
    "every part's list gathered": """\
        from nn import Model

        class ViT(Model):
          def __init__(self, classes):
            param = []
            self.body = Body()
            self.head = Dense(classes, 64)
            param.extend(self.body.param)
            param.extend(self.head.param)
            self.param = param
        """,
    # The kept list is put back, with the new head: everything trains.
    "the full list put back with the new head": """\
        from nn import Model

        class ViT(Model):
          def unfreeze(self):
            param = self.param_.copy()
            self.backup = self.param.copy()
            param.extend(self.head.param)
            self.param = param
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_trained_list_swapped_for_a_part_is_found(name):
  text, expected = POSITIVE[name]
  assert _found(text) == expected


def test_a_base_class_of_a_namespace_package_is_followed():
  # `from pkg import nn` with no `pkg/__init__.py` (PEP 420) names the
  # module `pkg/nn.py`: its class is the base the step is in.
  text, _ = POSITIVE["the trained list set to a new head's parameters"]
  text = text.replace("from nn import Model", "from pkg import nn").replace(
      "ViT(Model)", "ViT(nn.Model)")
  assert _found(text, "pkg/nn.py") == [("var-list-filter", "vit.py", 10)]


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_whole_list_stays_silent(name):
  assert _found(NEGATIVE[name]) == []


def _message(files):
  """The message of each finding, up to its reasons."""
  findings, errors = _scan.scan_project([
      _files.Source(path, textwrap.dedent(text))
      for path, text in files.items()])
  assert not errors, errors
  return [f.message.split(":")[0] for f in findings]


def test_the_step_of_another_file_is_named_with_its_file():
  text, _ = POSITIVE["the trained list set to a new head's parameters"]
  assert _message({"pkg/nn.py": _BASE, "vit.py": text.replace(
      "from nn import Model", "from pkg.nn import Model")}) == [
          "`var_list` filtered by name or scope for `gradient` "
          "(line 10 in pkg/nn.py)"]


def test_the_step_of_the_same_file_is_named_by_its_line():
  text, _ = POSITIVE["the trained list set to a new head's parameters"]
  model = textwrap.dedent(text).replace("from nn import Model\n", "")
  assert _message({"vit.py": textwrap.dedent(_BASE) + model}) == [
      "`var_list` filtered by name or scope for `gradient` (line 10)"]
