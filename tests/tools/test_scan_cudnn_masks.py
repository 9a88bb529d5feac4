"""`tfpartial scan` on a cuDNN LSTM whose one opaque kernel is multiplied
by a mask packed from the layer's own non-trainable 0/1 mask variables
(`self._mask = self._canonical_to_opaque(self._masks, ones)`, `self.
_masked_kernel = tf.multiply(self._mask, self.kernel, name)` in `build`,
the product run as the layer's opaque parameters by `self._forward`):
the masked elements of every gate never train. Found as
`stop-gradient-mix` (a fixed mask in the forward pass) while the pruning
library's mask update op is built only under a flag that is off by
default; silent where the update runs with the step (the masks are
recomputed by magnitude), where the masks are trainable gates or drawn at
random, built in code from ones, or where the product only feeds a
summary. Synthetic sources in the shape of real code (a sparse
DeepSpeech fork)."""

import textwrap

import pytest
import scanned

_LAYER = """\
    import tensorflow as tf
    from tensorflow.contrib.cudnn_rnn.python.layers import cudnn_rnn
    from tensorflow.contrib.model_pruning.python import pruning

    class MaskedCudnnLSTM({base}):

        def build(self, inputs_shape):
            super(MaskedCudnnLSTM, self).build(inputs_shape)
            self._masks = []
            for i, shape in enumerate(self.canonical_weight_shapes):
                mask = {mask}
                self._masks.append(mask)
            ones = [tf.ones(shape, self.dtype)
                    for shape in self.canonical_bias_shapes]
            self._mask = self._canonical_to_opaque(self._masks, ones)
            self._masked_kernel = tf.multiply(self._mask, self.kernel,
                                              'masked_weights')
            for mask in self._masks:
                tf.add_to_collection(_CUDNN_MASK_COLLECTION, mask)
            self.built = True

        def call(self, inputs, initial_state=None, training=True):
            h, c = initial_state
            outputs, state = {forward}
            return outputs, state

    # The fork's own mask collection, which its `CudnnPruning` reads back.
    _CUDNN_MASK_COLLECTION = 'cudnn_masks'

    def get_cudnn_masks():
        return tf.get_collection(_CUDNN_MASK_COLLECTION)

    class CudnnPruning(pruning.Pruning):

        def conditional_mask_update_op(self):
            return [m.assign(m) for m in get_cudnn_masks()]
    """

_KEPT = ("self.add_variable(name='mask_%d' % i, shape=shape, "
         "initializer=tf.ones_initializer(), trainable=False)")
_FORWARD = "self._forward(inputs, h, c, self._masked_kernel, training)"
_BASE = "cudnn_rnn.CudnnLSTM"

_TRAIN = """\
    import tensorflow as tf
    from layers import MaskedCudnnLSTM
    from layers import pruning

    tf.app.flags.DEFINE_boolean('update_masks', {default}, 'update masks')
    FLAGS = tf.app.flags.FLAGS

    def train(x, y, global_step):
        out, _ = MaskedCudnnLSTM(1, 8)(x)
        loss = tf.reduce_mean(tf.square(out - y))
        op = tf.train.AdamOptimizer().minimize(loss, global_step)
    {update}
        return op, mask_update_op
    """

_GUARDED = """\
    mask_update_op = []
    if FLAGS.update_masks:
        p = pruning.Pruning(None, global_step=global_step)
        mask_update_op = p.conditional_mask_update_op()"""
_ALWAYS = """\
    p = pruning.Pruning(None, global_step=global_step)
    mask_update_op = p.conditional_mask_update_op()"""


def _found(base=_BASE, mask=_KEPT, forward=_FORWARD, update=_GUARDED,
           default="False"):
  layer = textwrap.dedent(_LAYER).format(base=base, mask=mask,
                                         forward=forward)
  train = textwrap.dedent(_TRAIN).format(default=default, update=update)
  return scanned.in_project({"layers.py": layer, "train.py": train})


def test_the_kernel_under_a_fixed_packed_mask_is_found():
  assert _found() == [("stop-gradient-mix", "layers.py", 16)]


def test_found_where_the_project_builds_no_update_op():
  assert _found(update="    mask_update_op = []") == [
      ("stop-gradient-mix", "layers.py", 16)]


def test_silent_where_the_update_runs_with_the_step():
  assert _found(update=_ALWAYS) == []


def test_silent_where_the_flag_is_on_by_default():
  assert _found(default="True") == []


@pytest.mark.parametrize("mask", [
    # A trainable gate: it learns, it keeps nothing fixed.
    "self.add_variable(name='gate_%d' % i, shape=shape, trainable=True)",
    # DropConnect: a mask drawn anew.
    "tf.cast(tf.random.uniform(shape) > 0.5, tf.float32)",
    # Ones built in code: a mask that masks nothing.
    "tf.ones(shape)",
])
def test_silent_for_masks_that_are_no_fixed_choice(mask):
  assert _found(mask=mask) == []


def test_silent_where_the_product_only_feeds_a_summary():
  forward = ("self._forward(inputs, h, c, self.kernel, training); "
             "tf.summary.histogram('masked', self._masked_kernel)")
  assert _found(forward=forward) == []


def test_silent_where_the_forward_is_not_a_cudnn_layers():
  assert _found(base="tf.keras.layers.Layer") == []


_DENSE = """\
    import tensorflow as tf

    class MaskedDense(tf.keras.layers.Dense):
        def build(self, shape):
            super(MaskedDense, self).build(shape)
            self.mask = self.add_weight('mask', shape=[4, 4],
                                        initializer=tf.ones_initializer(),
                                        trainable=False)

        def call(self, inputs):
            return tf.matmul(inputs, {product})

    def prune(layer, threshold):
        layer.mask.assign(tf.cast(tf.abs(layer.kernel) > threshold,
                                  tf.float32))
    """


@pytest.mark.parametrize("product", [
    "tf.multiply(self.mask, self.kernel, 'masked')",
    "tf.multiply(self.mask, self.kernel, name='masked')",
])
def test_a_named_multiply_is_the_product_it_names(product):
  found = scanned.in_project({"t.py": _DENSE.format(product=product)})
  assert found == [("stop-gradient-mix", "t.py", 11)]


def test_a_named_multiply_of_the_inputs_is_silent():
  code = _DENSE.format(product="self.kernel").replace(
      "return tf.matmul(inputs,",
      "return tf.matmul(tf.multiply(inputs, self.mask, 'masked'),")
  assert scanned.in_project({"t.py": code}) == []
