"""`tfpartial scan`'s `var-list-filter` on a Keras layer's trainable list
cut to a slice of itself before the model is compiled (part twenty-six's
domain adaptation: `d.trainable_weights = d.trainable_weights[1:]` drops
each Dense or Conv2D kernel, only the biases train); beside twins whose
slice keeps every weight, that are never compiled or only read the
slice, silent. Each source is synthetic."""

import pytest

import scanned

_SCRIPT = """\
    from keras.layers import Dense, Input
    from keras.models import Model

    inputs = Input((4,))
    model = Model(inputs, Dense(1)(Dense(8)(inputs)))
    d1 = model.layers[1]
    {cut}
    model.compile(loss="mse", optimizer="adam")
    """

_METHOD = """\
    import numpy as np

    class Adapter(object):
      def freeze_layers_kernel(self, model):
        for i in np.arange(len(model.layers)):
          {target} = {target}{cut}

      def build(self, d):
        self.freeze_layers_kernel(d)
        d.compile(loss="mse", optimizer="adam")
    """


@pytest.mark.parametrize("cut", [
    "d1.trainable_weights = d1.trainable_weights[1:]",
    "d1.trainable_weights = d1.trainable_weights[:1]",
    "d1._trainable_weights = d1._trainable_weights[2:4]",
], ids=["kernel_dropped", "bias_dropped", "middle_kept"])
def test_a_slice_cut_before_compile_is_found(cut):
  assert scanned.found(_SCRIPT.format(cut=cut)) == [("var-list-filter", 7)]


def test_a_slice_cut_in_a_helper_of_a_class_is_found():
  source = _METHOD.format(target="model.layers[i].trainable_weights",
                          cut="[1:]")
  assert scanned.found(source) == [("var-list-filter", 6)]


@pytest.mark.parametrize("cut", [
    "d1.trainable_weights = d1.trainable_weights[0:]",
    "d1.trainable_weights = d1.trainable_weights[:len(d1.trainable_weights)]",
    "d1.trainable_weights = d1.trainable_weights[:]",
    "kept = d1.trainable_weights[1:]",
    "d1.trainable_weights = other.trainable_weights[1:]",
], ids=["from_zero", "to_its_length", "whole_slice", "only_read",
        "another_list"])
def test_a_slice_keeping_every_weight_stays_silent(cut):
  assert scanned.found(_SCRIPT.format(cut=cut)) == []


def test_a_slice_never_compiled_stays_silent():
  source = _SCRIPT.format(
      cut="d1.trainable_weights = d1.trainable_weights[1:]").replace(
          '    model.compile(loss="mse", optimizer="adam")\n', "")
  assert scanned.found(source) == []
