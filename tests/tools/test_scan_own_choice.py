"""`tfpartial scan` on code that chooses its own trainable subset through
a helper of the project whose call names what trains:
`get_trainable_variables(["encode_context", "pixel_cnn"])`, a generic
name filter of a utilities module handed the names as literals (a
conditional PixelVAE's trainer). The finding is at the call, where the
names are chosen, in whichever module the helper is; a helper that
reads the names itself (slim's flags) keeps it inside. Sources are paraphrases of part thirty's trees."""

import textwrap

import pytest
import scanned

_UTILS = """\
    import tensorflow as tf

    def get_trainable_variables(flist, filter_type="in"):
        all_vs = tf.trainable_variables()
        if filter_type == "in":
            vs = []
            for s in flist:
                vs += [p for p in all_vs if s in p.name]
        elif filter_type == "not in":
            vs = all_vs
            for s in flist:
                vs = [p for p in vs if s not in p.name]
        return vs
    """

_TRAIN = """\
    import tensorflow as tf
    from utils.utils import get_trainable_variables

    model = tf.make_template('model', build_graph)
    model(x)
    if args.use_mode == 'train':
        all_params = get_trainable_variables(["encode_context", "pixel_cnn"])
        if args.freeze_encoder:
            all_params = [p for p in all_params if "conv_encoder_" not in p.name]
        grads = tf.gradients(loss, all_params)
        train_step = adam_updates(all_params, grads, lr=args.learning_rate)
    """

FOUND = {
    # The PixelVAE trainer: the helper in utils/, the names at the call.
    "names handed to a helper of another module": (
        {"utils/__init__.py": "", "utils/utils.py": _UTILS,
         "train.py": _TRAIN},
        [("var-list-filter", "train.py", 7)]),
    # The same helper in the trainer's own file: the names are chosen at
    # the call there too (part thirty-one's table adapter,
    # `get_variables_with_name('adapter_layers')`).
    "names handed to a helper of the same module": (
        {"t.py": _UTILS + "\n\n" + _TRAIN.replace(
            "from utils.utils import get_trainable_variables\n", "")},
        [("var-list-filter", "t.py", 21)]),
    # One name handed as a string, not a list.
    "one name handed as a string": (
        {"utils/__init__.py": "", "utils/utils.py": _UTILS,
         "train.py": _TRAIN.replace(
             '["encode_context", "pixel_cnn"]', '"pixel_cnn"')},
        [("var-list-filter", "train.py", 7)]),
}

SILENT = {
    # A GAN's two halves, each chosen by the same helper, each trained
    # on its own loss: between them the whole model trains.
    "a GAN's halves chosen by the helper": {
        "utils/__init__.py": "", "utils/utils.py": _UTILS,
        "train.py": """\
            import tensorflow as tf
            from utils.utils import get_trainable_variables

            g_vars = get_trainable_variables(["generator"])
            d_vars = get_trainable_variables(["discriminator"])
            g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
            d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
            """},
    # A second model trained alone: the only model of the graph, named
    # by the scope it is built under.
    "a second model trained alone": {
        "utils/__init__.py": "", "utils/utils.py": _UTILS,
        "train.py": """\
            import tensorflow as tf
            from utils.utils import get_trainable_variables

            with tf.variable_scope("classifier"):
                logits = classifier(x)
            loss = tf.losses.softmax_cross_entropy(y, logits)
            params = get_trainable_variables("classifier")
            op = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=params)
            """},
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_names_handed_to_a_helper_are_found_at_the_call(name):
  files, expected = FOUND[name]
  assert scanned.in_project(files) == expected


@pytest.mark.parametrize("name", sorted(SILENT))
def test_look_alikes_stay_silent(name):
  assert scanned.in_project(SILENT[name]) == []


# A neural process with a MAML inner loop (binary-pixelcnn's): the inner
# gradients are taken only for the decoder's variables, chosen by name,
# and make fast weights the decoder runs on again; the outer step trains
# every variable (encoder and aggregator too). The decoder alone adapts.
_MAML = """\
    import tensorflow as tf
    from blocks.helpers import get_trainable_variables

    class NeuralProcess(object):

        def construct(self, sample_encoder, aggregator, conditional_decoder):
            self.sample_encoder = sample_encoder
            self.aggregator = aggregator
            self.conditional_decoder = conditional_decoder
            self.y_hat = self._model()
            self.loss = sum_squared_error(labels=self.y_t, predictions=self.y_hat)
            self.grads = tf.gradients(self.loss, tf.trainable_variables())

        def _model(self):
            r_ct = self.sample_encoder(self.X_ct, self.y_ct)
            z = self.aggregator(r_ct)
            y_hat = self.conditional_decoder(self.X_c, z)
            vars = get_trainable_variables(['conditional_decoder'])
            for k in range(1, self.inner_iters + 1):
                loss = sum_squared_error(labels=self.y_c, predictions=y_hat)
                grads = tf.gradients(loss, vars)
                vars = [v - self.alpha * g for v, g in zip(vars, grads)]
                y_hat = self.conditional_decoder(self.X_c, z, params=vars)
            return self.conditional_decoder(self.X_t, z, params=vars)
    """

_HELPERS = """\
    import tensorflow as tf

    def get_trainable_variables(flist, filter_type="in"):
        all_vs = tf.trainable_variables()
        vs = []
        for s in flist:
            vs += [p for p in all_vs if s in p.name]
        return vs
    """

INNER_FOUND = {
    "an inner loop over the decoder chosen by name": (
        {"blocks/__init__.py": "", "blocks/helpers.py": _HELPERS,
         "models/np_maml.py": _MAML},
        [("var-list-filter", "models/np_maml.py", 18)]),
}

INNER_SILENT = {
    # The common MAML: the inner loop adapts every trainable variable.
    "an inner loop over every variable": {
        "blocks/__init__.py": "", "blocks/helpers.py": _HELPERS,
        "models/np_maml.py": _MAML.replace(
            "get_trainable_variables(['conditional_decoder'])",
            "tf.trainable_variables()")},
    # The same inner loop over the only network the model runs, by its
    # name (the repository's MLP regressor): the whole model adapts.
    "an inner loop over the only network, by its name": {
        "blocks/__init__.py": "", "blocks/helpers.py": _HELPERS,
        "models/mlp_maml.py": """\
            import tensorflow as tf
            from blocks.helpers import get_trainable_variables

            class MLPRegressor(object):

                def construct(self, mlp):
                    self.mlp = mlp
                    self.y_hat = self._model()
                    self.loss = tf.losses.mean_squared_error(self.y_t, self.y_hat)
                    self.grads = tf.gradients(self.loss, tf.trainable_variables())

                def _model(self):
                    y_hat = self.mlp(self.X_c, scope='mlp')
                    vars = get_trainable_variables(['mlp'])
                    for k in range(1, self.inner_iters + 1):
                        loss = tf.losses.mean_squared_error(self.y_c, y_hat)
                        grads = tf.gradients(loss, vars)
                        vars = [v - self.alpha * g for v, g in zip(vars, grads)]
                        y_hat = self.mlp(self.X_c, scope='mlp-%d' % k, params=vars)
                    return self.mlp(self.X_t, scope='mlp-test', params=vars)
            """},
    # MAML over the weights dictionary the model is built from.
    "an inner loop over the model's weights": {
        "maml.py": """\
            import tensorflow as tf

            def task_metalearn(self, inp, weights):
                task_outputa = self.forward(inputa, weights)
                task_lossa = self.loss_func(task_outputa, labela)
                grads = tf.gradients(task_lossa, list(weights.values()))
                gradients = dict(zip(weights.keys(), grads))
                fast_weights = dict(zip(weights.keys(), [
                    weights[key] - self.update_lr * gradients[key]
                    for key in weights.keys()]))
                return self.forward(inputb, fast_weights)
            """},
    # The inner loop over the one model of the graph, by its scope.
    "an inner loop over the whole model by its scope": {
        "maml.py": """\
            import tensorflow as tf

            def build(x_update, y_update, x_meta, lr):
                with tf.variable_scope('model'):
                    y = model(x_update)
                params = tf.trainable_variables('model')
                loss = tf.reduce_mean((y - y_update) ** 2)
                grads = tf.gradients(loss, params)
                fast = [v - lr * g for v, g in zip(params, grads)]
                with tf.variable_scope('model', reuse=True):
                    y_meta = model(x_meta, params=fast)
                return y_meta
            """},
}


@pytest.mark.parametrize("name", sorted(INNER_FOUND))
def test_an_inner_loop_over_a_named_part_is_found(name):
  files, expected = INNER_FOUND[name]
  assert scanned.in_project(files) == expected


@pytest.mark.parametrize("name", sorted(INNER_SILENT))
def test_inner_loops_over_every_variable_stay_silent(name):
  assert scanned.in_project(INNER_SILENT[name]) == []


# A vocoder's base layer (MBExWN's): while pre-training the activations,
# its `trainable_weights` returns only the pre-trainable weights (and its
# sub-layers' of the same kind), else every weight.
_LAYER = """\
    import tensorflow as tf

    class TF2C_BaseLayer(tf.keras.layers.Layer):

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._pretrain_activations = False

        @property
        def trainable_weights(self):
            if self._pretrain_activations:
                trainable_weights = self.pretrainable_weights
                for ll in self._flatten(recursive=False):
                    trainable_weights.extend(ll.trainable_weights)
                return trainable_weights
            else:
                return super().trainable_weights
    """

PROPERTY_FOUND = {
    "a property returning a part while a switch is on": (
        {"t.py": _LAYER}, [("var-list-filter", "t.py", 12)]),
    "the same with `trainable_variables`": (
        {"t.py": _LAYER.replace("trainable_weights", "trainable_variables")},
        [("var-list-filter", "t.py", 12)]),
    # The model's version: an empty list filled from the sub-layers.
    "a property filling an empty list": (
        {"t.py": _LAYER.replace(
            "trainable_weights = self.pretrainable_weights",
            "trainable_weights = []")},
        [("var-list-filter", "t.py", 14)]),
}

PROPERTY_SILENT = {
    # Every weight, always.
    "a property returning all weights": _LAYER.replace(
        "trainable_weights = self.pretrainable_weights",
        "trainable_weights = super().trainable_weights"),
    # Extra weights beside all of the layer's own.
    "a property adding weights": """\
        import tensorflow as tf

        class Tied(tf.keras.layers.Layer):

            @property
            def trainable_weights(self):
                if self.tied:
                    return super().trainable_weights + [self.embedding]
                return super().trainable_weights
        """,
    # Keras's own wrapper: the wrapped layer's weights, or none when the
    # wrapper is frozen (whole-variable freezing).
    "a wrapper's property": """\
        class Wrapper(Layer):

            @property
            def trainable_weights(self):
                if not self.trainable:
                    return []
                return self.layer.trainable_weights
        """,
    # A frozen layer returns no weight, else all of them.
    "none while frozen, all otherwise": """\
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):

            @property
            def trainable_weights(self):
                if self.frozen:
                    return []
                return super().trainable_weights
        """,
    # A GAN model exposing its halves by other names: not the property.
    "a GAN's halves by other properties": """\
        import tensorflow as tf

        class GAN(tf.keras.Model):

            @property
            def generator_weights(self):
                return self.generator.trainable_weights

            @property
            def trainable_weights(self):
                return super().trainable_weights
        """,
}


@pytest.mark.parametrize("name", sorted(PROPERTY_FOUND))
def test_a_property_narrowing_the_weights_is_found(name):
  files, expected = PROPERTY_FOUND[name]
  assert scanned.in_project(files) == expected


@pytest.mark.parametrize("name", sorted(PROPERTY_SILENT))
def test_properties_returning_every_weight_stay_silent(name):
  assert scanned.in_project(PROPERTY_SILENT[name]) == []


def test_the_message_names_the_property_and_its_whole_return():
  [finding] = scanned._scan.scan_text("t.py", textwrap.dedent(_LAYER))
  assert finding.message.startswith(
      "`trainable_weights` overridden to return a part of the layer's "
      "weights (line 17 returns them all): ")
