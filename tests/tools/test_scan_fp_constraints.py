"""`tfpartial scan`'s `weight-remask` in a Keras constraint that shifts
its weight by a statistic of the weight itself (part thirty-four's
noisy-label transition matrix: `low = K.min(p, axis=self.axis)`, then
`p - low * K.cast(low < 0., K.floatx())`, normalised): a projection
computed from the weight at every step, which keeps no element fixed.
A factor kept on the object or handed in stays a mask. The rule that
silenced the shifts was removed by mend forty-d (it also let stored,
module and helper masks through), so they are reported again. Each
source is synthetic."""

import pytest

import scanned

_STOCHASTIC = """\
    from keras import backend as K
    from keras.constraints import Constraint
    from keras.layers import Dense


    class Stochastic(Constraint):

        def __init__(self, axis=0, mask=None):
            self.axis = axis
            self.mask = mask

        def __call__(self, p):
            low = K.min(p, axis=self.axis, keepdims=True)
            {line}
            top = K.max(p, axis=self.axis, keepdims=True)
            p = p / top
            return p / (K.epsilon() + K.sum(p, axis=self.axis, keepdims=True))


    layer = Dense(10, kernel_constraint=Stochastic(axis=0))
    """


@pytest.mark.parametrize("line, expected", [
    ("p = p - low * K.cast(low < 0., K.floatx())", [("weight-remask", 14)]),
    ("p = p - low * K.cast(p < 0., K.floatx())", [("weight-remask", 14)]),
    ("p = p * K.cast(self.mask, K.floatx())", [("weight-remask", 14)]),
    ("kept = K.cast(self.mask, K.dtype(p))\n            p = p * kept",
     [("weight-remask", 15)]),
    ("kept = K.cast(low < 0., K.floatx()) * self.mask\n"
     "            p = p * kept", [("weight-remask", 15)]),
], ids=["shift_by_own_minimum", "minimum_times_own_sign", "mask_on_object",
        "mask_cast_to_weight_type", "mask_joined_with_own_sign"])
def test_a_constraint_computed_from_its_weight_alone(line, expected):
  assert scanned.found(_STOCHASTIC.format(line=line)) == expected
