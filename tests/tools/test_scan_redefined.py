"""`tfpartial scan` and a top-level class or function a file defines
twice (a pasted copy, the first left above): the first copy never runs
unless something reads its name before the second replaces it, so its
freezes are not reported; the second's are. A notebook's cells may run
in between, so both stay there."""

import io
import json
import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _main


_STEP = textwrap.dedent("""\
    class NAME(tf.keras.Model):
      def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
          loss = self.compiled_loss(y, self(x, training=True))
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        gradients = [g * m for g, m in zip(gradients, MASK)]
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"loss": loss}
    """)


def _step(name, mask):
  return _STEP.replace("NAME", name).replace("MASK", mask)


def _twice(between, second_name="CustomModel"):
  return ("import tensorflow as tf\n\n"
          + _step("CustomModel", "gradient_mask") + between
          + _step(second_name, "self.grad_mask")
          + "\nmodel = CustomModel(inputs, outputs)\n")


_found = scanned.found


@pytest.mark.parametrize("between, second_name, expected", [
    # Defined again before anything reads it: the second copy only.
    ("\n", "CustomModel", [("grads-mask", 21)]),
    ("\nBATCH = 32\n", "CustomModel", [("grads-mask", 22)]),
    # The twins: the first copy read before the second replaces it, or a
    # second class of another name; both run.
    ("\nfirst = CustomModel(inputs, outputs)\n", "CustomModel",
     [("grads-mask", 10), ("grads-mask", 22)]),
    ("\n", "OtherModel", [("grads-mask", 10), ("grads-mask", 21)]),
])
def test_a_class_defined_twice_reports_the_copy_that_runs(
    between, second_name, expected):
  assert _found(_twice(between, second_name)) == expected


def test_a_second_class_extending_the_first_keeps_both():
  # `class CustomModel(CustomModel):` reads the first copy: it runs.
  second = _step("CustomModel", "self.grad_mask").replace(
      "(tf.keras.Model)", "(CustomModel)")
  text = ("import tensorflow as tf\n\n"
          + _step("CustomModel", "gradient_mask") + "\n" + second)
  assert _found(text) == [("grads-mask", 10), ("grads-mask", 21)]


def test_a_notebook_that_defines_a_class_twice_keeps_both(tmp_path):
  # Each cell may have run before the next one replaced the class.
  first = "import tensorflow as tf\n\n" + _step("CustomModel", "gradient_mask")
  second = _step("CustomModel", "self.grad_mask")
  (tmp_path / "n.ipynb").write_text(json.dumps({
      "cells": [{"cell_type": "code", "source": cell.splitlines(True)}
                for cell in (first, second)],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
  out, err = io.StringIO(), io.StringIO()
  assert _main.run([str(tmp_path)], "json", False, out, err) == 1, err
  assert sorted((f["cell"], f["line"], f["idiom"])
                for f in json.loads(out.getvalue())) == [
                    (1, 10, "grads-mask"), (2, 8, "grads-mask")]
