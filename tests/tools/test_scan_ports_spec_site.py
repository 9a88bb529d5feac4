"""`--diff` makes a port's spec before a `tf.function` (once, not per
trace) when the decorator IS TensorFlow's `function`, read through the
module's imports and bindings, never by the decorator's text."""

import io
import os
import subprocess
import sys

import pytest

from tfpartial._tools.scan import _main
from tfpartial._tools.scan import _scan

STEP = '''\
import functools
import numpy as np
import tensorflow as tf
{imports}
x = tf.Variable([1.0, 2.0, 3.0])
optimizer = tf.keras.optimizers.AdamW(0.1, weight_decay=0.5)
mask = np.array([0.0, 1.0, 1.0], np.float32)
{bound}

{decorator}
def train_step():
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.square(x - 5.0))
  grads = tape.gradient(loss, [x])
  grads = [g * mask for g in grads]
  optimizer.apply_gradients(zip(grads, [x]))


for _ in range(5):
  train_step()
print("held:", bool(x.numpy()[0] == 1.0))
'''

HELPERS = "def function(f):\n  return f\n"


def _ported(folder, imports="", bound="", decorator="@tf.function"):
  (folder / "helpers.py").write_text(HELPERS)
  (folder / "train.py").write_text(STEP.format(
      imports=imports, bound=bound, decorator=decorator))
  out, err = io.StringIO(), io.StringIO()
  here = os.getcwd()
  os.chdir(folder)
  try:
    assert _main.run(["train.py"], "text", True, out, err) == 1
  finally:
    os.chdir(here)
  assert "port by hand" not in err.getvalue(), err.getvalue()
  (folder / "port.diff").write_text(out.getvalue())
  done = subprocess.run(["git", "apply", "port.diff"], cwd=folder,
                        capture_output=True, text=True)
  assert done.returncode == 0, done.stderr
  return (folder / "train.py").read_text()


def _hoisted(ported, decorator):
  lines = ported.splitlines()
  spec = next(i for i, l in enumerate(lines) if "tfpartial.freeze(" in l)
  return spec < lines.index(decorator)


@pytest.mark.parametrize("imports, bound, decorator", [
    ("", "", "@tf.function"),
    ("", "", "@tf.function(jit_compile=True)"),
    ("", "", "@tf.compat.v1.function"),
    ("from tensorflow import function as tff", "", "@tff"),
    ("import tensorflow.compat.v1 as tf1", "", "@tf1.function"),
    ("", "compiled = tf.function", "@compiled"),
    ("", "jit = functools.partial(tf.function, jit_compile=True)", "@jit"),
], ids=["plain", "called", "compat-v1", "from-import", "module-alias",
        "bound-name", "partial"])
def test_tensorflows_function_is_resolved(tmp_path, imports, bound,
                                          decorator):
  assert _hoisted(_ported(tmp_path, imports, bound, decorator), decorator)


@pytest.mark.parametrize("imports, bound, decorator", [
    ("from helpers import function", "", "@function"),
    ("import helpers", "", "@helpers.function"),
    ("", "def log_function(f):\n  return f\n", "@log_function"),
    ("", "function = functools.lru_cache", "@function"),
    ("import helpers as tf_function", "", "@tf_function.function"),
], ids=["project-function", "project-module", "named-function",
        "rebound-name", "module-named-tf"])
def test_a_look_alike_decorator_keeps_the_spec_in_place(
    tmp_path, imports, bound, decorator):
  assert not _hoisted(_ported(tmp_path, imports, bound, decorator),
                      decorator)


def test_a_look_alike_port_runs(tmp_path):
  # The guard: the port left in the function applies and holds.
  ported = _ported(tmp_path, "from helpers import function", "",
                   "@function")
  done = subprocess.run([sys.executable, "train.py"], cwd=tmp_path,
                        capture_output=True, text=True,
                        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert done.returncode == 0, done.stderr[-2000:]
  assert done.stdout.strip() == "held: True", ported


# A mask made in the step's loop: a port there must not be made in a
# trace, so a decorator that is, or may be, TF's `function` (one the
# scan cannot resolve: the project's own wrapper) leaves it by hand;
# one known not to trace (functools') keeps it mechanical.
_LOOP = (
    "import functools\nimport numpy as np\nimport tensorflow as tf\n"
    "{bound}\n\n{decorator}\n"
    "def train_step(model, optimizer, x, y):\n"
    "    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_mean(tf.square(model(x) - y))\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    gvs = list(zip(grads, model.trainable_variables))\n"
    "    for i, (g, v) in enumerate(gvs):\n"
    "        mask = tf.constant([[1.0, 0.0], [0.0, 1.0]])\n"
    "        gvs[i] = (g * mask, v)\n"
    "    optimizer.apply_gradients(gvs)\n")


@pytest.mark.parametrize("bound, decorator, mechanical", [
    ("", "@tf.function", False),
    ("compiled = tf.function", "@compiled", False),
    ("def wrap(f):\n  return tf.function(f, jit_compile=True)", "@wrap",
     False),
    ("", "@functools.lru_cache(maxsize=None)", True),
    # A star import may bind a builtin's name (tools.py: `compile =
    # tf.function`): unresolved, so it may trace.
    ("from tools import *", "@compile", False),
    # A library's decorator not known not to trace may wrap one.
    ("import gin", "@gin.configurable", False),
], ids=["tf-function", "bound-name", "project-wrapper", "functools",
        "star-import-builtin-name", "library-decorator"])
def test_a_port_in_what_may_be_a_trace_is_by_hand(bound, decorator,
                                                   mechanical):
  source = _LOOP.format(bound=bound, decorator=decorator)
  findings = [f for f in _scan.scan_text("m.py", source)
              if f.idiom == "grads-mask"]
  assert len(findings) == 1, findings
  assert bool(findings[0].edits) is mechanical, findings[0].by_hand
  if not mechanical:
    assert "inside a `tf.function`" in findings[0].by_hand
