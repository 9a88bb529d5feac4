"""Weights rebuilt from shared centroids after each step by a weight-sharing
class (`model.set_weights(self.recompose(weights))`, `centers[idx]`) whose
weights a sibling base class pruned once by magnitude in a helper
(`W_pruned *= np.abs(W) > t`; part 25's ICPR2020_sHAM `weightsharing.py`
and sHAM `nu_CWS.py` beside their pruning classes) are no re-mask: the
prune is no mask kept, and the product that masks the centroids belongs
to a subclass (its own write after each step is judged there: part 25's
`pruning_weightsharing.py` 71/76 stay found). The weight-sharing class
that multiplies the centroids by a mask itself stays found."""

import pytest

import scanned

_PRUNING = '''\
import numpy as np


def prune(w, percent):
    kept = np.copy(w)
    mask = np.abs(w) > np.percentile(np.abs(w), percent)
    kept *= mask
    return kept, mask


class Pruning:
    def __init__(self, model):
        self.model = model

    def apply_pruning(self, percent):
        weights = self.model.get_weights()
        self.pruned = [prune(weights[i], percent)[0] for i in range(len(weights))]
        self.masks = [prune(weights[i], percent)[1] for i in range(len(weights))]
        self.model.set_weights(self.pruned)
'''

_SHARING = '''\
import numpy as np
import tensorflow as tf


class Sharing:
    def __init__(self, model):
        self.model = model

    def recompose(self, weights):
        return weights[:1] + [{rebuilt} if i % 2 == 0 else weights[i]
                              for i in range(1, len(weights))]

    def step(self, images, labels):
        with tf.GradientTape() as tape:
            loss = self.loss(labels, self.model(images))
        grads = tape.gradient(loss, self.model.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_weights))

    def update_and_recompose(self, before):
        weights = self.model.get_weights()
        self.model.set_weights(self.recompose(weights))

    def train(self, data):
        for images, labels in data:
            before = self.model.get_weights()
            self.step(images, labels)
            self.update_and_recompose(before)


'''

_BOTH = '''\
import pr
import ws


class PrunedSharing(pr.Pruning, ws.Sharing):
    def recompose(self, weights):
        return weights[:1] + [self.centers[i][self.idx[i]] * self.masks[i]
                for i in range(len(weights))]

    def update_and_recompose_comb(self, before):
        weights = self.model.get_weights()
        self.model.set_weights(self.recompose(weights))

    def train_comb(self, data):
        for images, labels in data:
            self.step(images, labels)
            self.update_and_recompose_comb(None)
'''

_SHARED = "self.centers[i][self.idx[i]]"


def _found(rebuilt=_SHARED):
  files = {"p/pr.py": _PRUNING,
           "p/ws.py": _SHARING.replace("{rebuilt}", rebuilt),
           "p/both.py": _BOTH}
  return [(path, line) for idiom, path, line in scanned.in_project(files)
          if idiom == "weight-remask" and path != "p/both.py"]


CASES = [
    pytest.param(_SHARED, [], id="shared_centroids"),
    pytest.param(_SHARED + " * self.masks[i]", [("p/ws.py", 21)],
                 id="own_mask"),
]


@pytest.mark.parametrize("rebuilt, expected", CASES)
def test_remask_weight_sharing(rebuilt, expected):
  assert _found(rebuilt) == expected
