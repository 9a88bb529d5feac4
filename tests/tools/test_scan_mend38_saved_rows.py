"""`tfpartial scan`'s `write-back` after review 38: saved rows held in
an `.npz` or in a dict taken before training, put into the weights read
after each epoch, are no count of a weight average; rows read in a pass
after its write (or only on some passes) carry the last pass's values
into the next pass's model. Beside them, the weight averages whose
counts are settings of a parameter or of a dict of numbers stay
silent."""

import textwrap

import pytest

import scanned
import test_scan_written_once_trained as written_once


def _writes(code):
  return [f[1] for f in scanned.in_text(code, "write-back")]


_SAVED_ROWS = """\
    import numpy as np

    def main(network, batches):
      %s
      head = saved['kernel']
      for epoch in range(10):
        for x, y in batches:
          network.train_on_batch(x=x, y=y)
        weights = network.get_weights()
        weights[0] = np.concatenate([head[:10], weights[0][10:]])
        network.set_weights(weights)
    """


@pytest.mark.parametrize("saved", [
    "saved = np.load('pretrained.npz')",
    "saved = {'kernel': network.get_weights()[0]}",
], ids=["npz", "dict_of_weights"])
def test_saved_rows_put_back_after_each_epoch_are_found(saved):
  assert _writes(_SAVED_ROWS % saved) == [11]


# The weight average of test_scan_written_once_trained, its counts set
# here (a parameter, a dict of numbers, a config read), never saved.
_AVERAGE = textwrap.dedent(written_once.NEGATIVE[
    "a weight average of its own epochs set once training is over"]).replace(
        "def main(cfg, network, batches):",
        "def main(network, batches%s):\n  %s").replace(
            "network.save('swa.h5')\n", "")


@pytest.mark.parametrize("params, cfg", [
    (", cfg", "pass"),
    ("", "cfg = {'epochs': 10, 'steps': 100, 'swa_epochs': 3}"),
    ("", "cfg = config.from_parsed_arguments(options)"),
], ids=["parameter", "dict_of_numbers", "config_read"])
def test_a_weight_average_counted_by_settings_stays_silent(params, cfg):
  assert _writes(_AVERAGE % (params, cfg)) == []


_GROWN = """\
    model = build_model()
    for i in range(10):
      model2 = add_head(model)
      if i > 0:
        weights = model2.layers[0].get_weights()
        weights[0][:100] = %s[0][:100]
        model2.layers[0].set_weights(weights)
      %s
      model2.fit(x, y)
      model = model2
    """


def test_rows_taken_after_the_write_come_back_next_pass():
  assert _writes(_GROWN % (
      "before", "before = model2.layers[0].get_weights()")) == [7]


def test_rows_taken_in_the_pass_before_the_write_are_silent():
  code = """\
      model = build_model()
      for i in range(10):
        model2 = add_head(model)
        old = model.layers[0].get_weights()
        weights = model2.layers[0].get_weights()
        weights[0][:100] = old[0][:100]
        model2.layers[0].set_weights(weights)
        model2.fit(x, y)
        model = model2
      """
  assert _writes(code) == []
