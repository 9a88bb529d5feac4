"""Weights read out one by one into a list (`ws = []`, then `ws.append(
v.numpy())` for each trainable weight), pruned by a project helper that
makes the mask from their magnitude and written back once before the
loop that trains with the gradients masked (part 25's ICPR2020_sHAM
`pruning.py` and sHAM `nu_pruning.py` `apply_pruning`) are pruned anew,
not re-masked: silent, as when the list is `model.get_weights()`. A
helper that multiplies by a mask kept from before, or a list filled with
something else than read-outs, still re-masks: found."""

import pytest

import scanned

_PRUNER = '''\
import numpy as np
import tensorflow as tf


def prune_f(w, percent):
  pruned = np.copy(w)
  {line}
  pruned *= mask
  return pruned, mask


class Pruner(object):
  def __init__(self, model, percent):
    self.model = model
    self.percent = percent

  def apply_pruning(self, trainable=None):
    if not trainable:
      weights = self.model.get_weights()
    else:
      weights = []
      for v in trainable:
        {append}
    self.pruned = [prune_f(weights[i], self.percent)[0] if i % 2 == 0
                   else weights[i] for i in range(len(weights))]
    self.masks = [prune_f(weights[i], self.percent)[1] for i in range(len(weights))]
    self.model.set_weights(self.pruned)

  @tf.function
  def train_step(self, x, y):
    with tf.GradientTape() as tape:
      loss = self.loss(y, self.model(x))
    grads = tape.gradient(loss, self.model.trainable_weights)
    grads = [tf.multiply(grads[i], self.masks[i]) for i in range(len(grads))]
    self.optimizer.apply_gradients(zip(grads, self.model.trainable_weights))

  def train(self, data):
    for x, y in data:
      self.train_step(x, y)
'''

_RUN = """\
from m import pruner

made = pruner.Pruner(model, 50)
made.apply_pruning()
made.train(data)
"""

_OWN = "mask = np.abs(w) > np.percentile(np.abs(w), percent)"
_STEP = ("grads-mask", 34)
_WRITE = ("weight-remask", 27)


def _pruner(line=_OWN, append="weights.append(v.numpy())"):
  return {"m/__init__.py": "", "m/run.py": _RUN,
          "m/pruner.py": _PRUNER.replace("{line}", line).replace(
              "{append}", append)}


CASES = [
    pytest.param(_pruner(), [_STEP], id="appended_numpy"),
    pytest.param(_pruner(append="weights.append(v.read_value())"), [_STEP],
                 id="appended_read_value"),
    pytest.param(_pruner(line="mask = KEPT[0]"), [_WRITE, _STEP],
                 id="kept_mask"),
    pytest.param(_pruner(append="weights.append(self.saved[v])"),
                 [_WRITE, _STEP], id="appended_saved"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_read_out_list(source, expected):
  assert [(idiom, line) for idiom, path, line in scanned.in_project(
      source) if path == "m/pruner.py"] == expected
