"""A weight written back pruned by a project helper that makes the mask
from the magnitude of the values it is given (`prune(w, 90)` with
`np.abs(w) > t` inside; part 25's sHAM and ICPR2020 pruners) is pruned
anew, not re-masked: silent, as when the magnitude is taken beside the
write. A helper given a mask kept from before, or taking the magnitude
of something else than the weights, still re-masks: found."""

import pytest

import scanned

_found = scanned.found

_PRUNER = '''
import numpy as np
import tensorflow as tf


def prune_f(w, extra, percent):
  pruned = np.copy(w)
  {line}
  pruned *= mask
  return pruned, mask


class Pruner(object):
  def __init__(self, model, percent, kept):
    self.model = model
    self.percent = percent
    self.kept = kept

  def apply_pruning(self):
    self.masks = []
    for layer in self.model.layers:
      ww = layer.get_weights()[0]
      pruned, mask = prune_f(ww, self.kept, self.percent)
      self.masks.append(mask)
      layer.set_weights([pruned, layer.get_weights()[1]])
'''

_BESIDE = '''
import numpy as np
import tensorflow as tf


class Pruner(object):
  def __init__(self, model, percent, kept):
    self.model = model
    self.percent = percent
    self.kept = kept

  def apply_pruning(self):
    for layer in self.model.layers:
      ww = layer.get_weights()[0]
      {line}
      layer.set_weights([ww * mask, layer.get_weights()[1]])
'''


def _helper(line):
  return _PRUNER.replace("{line}", line)


def _beside(line):
  return _BESIDE.replace("{line}", line)


CASES = [
    pytest.param(_helper("mask = np.abs(w) > np.percentile(np.abs(w), "
                         "percent)"), [], id="helper_own_magnitude"),
    pytest.param(_helper("mask = np.absolute(w) > percent"), [],
                 id="helper_absolute"),
    pytest.param(_beside("mask = np.abs(ww) > self.percent"), [],
                 id="beside_read_out_part"),
    pytest.param(_helper("mask = extra"), [("weight-remask", 25)],
                 id="helper_kept_mask"),
    pytest.param(_helper("mask = np.abs(extra) > percent"),
                 [("weight-remask", 25)], id="helper_other_magnitude"),
    pytest.param(_beside("mask = self.kept"), [("weight-remask", 16)],
                 id="beside_kept_mask"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_helper_magnitude(source, expected):
  assert _found(source) == expected
