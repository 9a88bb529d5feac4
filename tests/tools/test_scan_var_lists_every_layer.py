"""`tfpartial scan`'s `var-list-filter` on a name filter every layer of
the model passes: the model is built under its root scope from layers
whose names all hold the filter's text (`fc('v2s_lt', ...)`,
`fc('s2s_lt', ...)`, `vs_multilayer(x, 'vs_multilayer_lt')`) and trained
as `get_variables_by_name(['lt'])`: nothing is left out. The look-alikes
stay found: a layer named without the text, the text negated, a filter
by a whole layer's name. Synthetic sources in the shape of real code
(part twelve)."""

import pytest

import scanned

_found = scanned.found

_MODEL = """\
    import tensorflow as tf


    def fc(name, x, output_dim):
        with tf.variable_scope(name):
            w = tf.get_variable('weights', [x.shape[1], output_dim])
            b = tf.get_variable('biases', [output_dim])
        return tf.matmul(x, w) + b


    class Model:
        def infer(self, clip, sentence):
            name = 'CTRL_Model'
            with tf.variable_scope(name):
                v = fc('v2s_lt', clip, output_dim=64)
                s = fc({second!r}, sentence, output_dim=64)
                return fc('head_lt', v * s, output_dim=3)

        def get_variables_by_name(self, name_list):
            v_list = tf.trainable_variables()
            v_dict = {{}}
            for name in name_list:
                v_dict[name] = []
            for v in v_list:
                for name in name_list:
                    if {test}: v_dict[name].append(v)
            return v_dict

        def training(self, loss):
            v_dict = self.get_variables_by_name([{chosen!r}])
            optimizer = tf.train.AdamOptimizer(0.01)
            return optimizer.minimize(loss, var_list=v_dict[{chosen!r}])
    """


def _model(second="s2s_lt", test="name in v.name", chosen="lt"):
  return _MODEL.format(second=second, test=test, chosen=chosen)


@pytest.mark.parametrize("source, expected", [
    (_model(), []),
    (_model(second="embedding"), [("var-list-filter", 32)]),
    (_model(test="name not in v.name"), [("var-list-filter", 32)]),
    (_model(chosen="v2s_lt"), [("var-list-filter", 32)]),
], ids=["every-layer-holds-it", "a-layer-without-it", "negated",
        "one-layer-named"])
def test_a_filter_every_layer_passes(source, expected):
  assert _found(source) == expected
