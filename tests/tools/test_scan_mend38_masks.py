"""`tfpartial scan` on masked weights after the review of the cuDNN
packed masks: the pruning library's gate silences only the masks the
library recomputes (taken from it, or put in a collection, themselves or
the variables packed into them), never a layer's own mask beside one
`apply_mask`; a mask made with the kernel's shape (`shape=self.kernel.
shape`) is no trainable gate and a causal mask built from ones of the
kernel's shape no choice (only the lists packed into an opaque kernel are
followed); NumPy's `multiply(w, m, w)` writes `out`; `_forward` reads
`opaque_params=` by keyword; the gate asks the project once per scan.
Synthetic sources in the shape of real code."""

import textwrap

import pytest

import scanned
import test_scan_cudnn_masks as cudnn

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_OWN_MASK = """\
    import numpy as np
    import tensorflow as tf
    from tensorflow.contrib.model_pruning.python import pruning


    class FrozenRowsDense(tf.keras.layers.Dense):
        def build(self, shape):
            super(FrozenRowsDense, self).build(shape)
            self.mask = self.add_weight('mask', shape=[4, 4],
                                        initializer=tf.ones_initializer(),
                                        trainable=False)

        def call(self, inputs):
            return tf.matmul(inputs, self.kernel * self.mask)


    def set_mask(layer):
        layer.mask.assign(np.load('keep.npy'))


    def pruned_conv(x):
        w = tf.get_variable('w', [3, 3, 4, 4])
        return tf.nn.conv2d(x, pruning.apply_mask(w), 1, 'SAME')
    """

_UPDATING = """\
    import tensorflow as tf
    from layers import FrozenRowsDense, pruned_conv
    from tensorflow.contrib.model_pruning.python import pruning


    def train(x, y, global_step):
        out = FrozenRowsDense(4)(pruned_conv(x))
        loss = tf.reduce_mean(tf.square(out - y))
        op = tf.train.AdamOptimizer().minimize(loss, global_step)
        p = pruning.Pruning(None, global_step=global_step)
        return op, p.conditional_mask_update_op()
    """


def test_a_layers_own_mask_beside_the_librarys_is_found():
  # p4: the update op recomputes the library's masks, not this one.
  assert scanned.in_project({"layers.py": _OWN_MASK,
                             "train.py": _UPDATING}) == [
                                 ("stop-gradient-mix", "layers.py", 14)]


def test_a_mask_taken_from_the_librarys_collection_is_silent():
  code = _OWN_MASK.replace(
      "return tf.matmul(inputs, self.kernel * self.mask)",
      "return tf.matmul(inputs, self.kernel * pruning.get_masks()[0])")
  assert scanned.in_project({"layers.py": code, "train.py": _UPDATING}) == []


def test_packed_masks_in_no_collection_are_found_while_the_update_runs():
  # Nothing recomputes masks the library never sees.
  added = ("            for mask in self._masks:\n"
           "                tf.add_to_collection(_CUDNN_MASK_COLLECTION, "
           "mask)\n")
  layer = textwrap.dedent(cudnn._LAYER.replace(added, "")).format(
      base=cudnn._BASE, mask=cudnn._KEPT, forward=cudnn._FORWARD)
  train = textwrap.dedent(cudnn._TRAIN).format(default="False",
                                                update=cudnn._ALWAYS)
  assert scanned.in_project({"layers.py": layer, "train.py": train}) == [
      ("stop-gradient-mix", "layers.py", 16)]


_SHAPED = """\
    import numpy as np
    import tensorflow as tf


    class FrozenRowsDense(tf.keras.layers.Layer):
        def build(self, shape):
            self.kernel = self.add_weight('kernel', shape=[int(shape[-1]), 4])
            self.mask = self.add_weight('mask', shape=self.kernel.shape,
                                        initializer='ones', trainable=False)

        def call(self, inputs):
            return tf.matmul(inputs, self.kernel * self.mask)


    def set_mask(layer):
        layer.mask.assign(np.load('keep.npy'))
    """


def test_a_mask_of_the_kernels_shape_is_no_trainable_gate():
  # p6: `shape=self.kernel.shape` reads the kernel's shape, not its values.
  assert scanned.in_project({"layer.py": _SHAPED}) == [
      ("stop-gradient-mix", "layer.py", 12)]


_CAUSAL = """\
    import numpy as np
    import tensorflow as tf


    class MaskedConv2D(tf.keras.layers.Layer):
        def __init__(self, filters, size, mask_type):
            super(MaskedConv2D, self).__init__()
            self.filters, self.size, self.mask_type = filters, size, mask_type

        def build(self, shape):
            self.kernel = self.add_weight(
                'kernel', shape=[self.size, self.size, int(shape[-1]), 8])
            c = self.size // 2
            mask = np.ones(self.kernel.shape.as_list(), dtype=np.float32)
            mask[c, c + (self.mask_type == 'B'):] = 0
            mask[c + 1:] = 0
            self.mask = tf.constant(mask)

        def call(self, x):
            return tf.nn.conv2d(x, self.kernel * self.mask, 1, 'SAME')


    def train(x):
        model = tf.keras.Sequential([MaskedConv2D(8, 5, 'A')])
        opt = tf.keras.optimizers.Adam()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    """


def test_a_causal_mask_built_from_ones_of_the_kernels_shape_is_silent():
  # p5: PixelCNN's mask, built in code; the kernel only gives its shape.
  assert scanned.in_project({"made.py": _CAUSAL}) == []


def test_numpys_multiply_into_out_is_no_forward_product():
  code = cudnn._DENSE.format(product="self.kernel").replace(
      "return tf.matmul(inputs, self.kernel)",
      "return tf.matmul(inputs, np.multiply(self.kernel, self.mask, "
      "self.kernel))")
  code = code.replace("    import tensorflow as tf",
                      "    import numpy as np\n    import tensorflow as tf")
  assert scanned.in_project({"t.py": code}) == []


def test_opaque_params_by_keyword_is_run_as_the_layers_weights():
  forward = ("self._forward(inputs, h, c, opaque_params=self._masked_kernel, "
             "training=training)")
  assert cudnn._found(forward=forward) == [
      ("stop-gradient-mix", "layers.py", 16)]


def _pruning_modules(m):
  """`m` modules naming the pruning library, each with a masked product
  and a mask update op built under a flag that is off by default."""
  files = {"flags.py": (
      "import tensorflow as tf\n"
      "tf.app.flags.DEFINE_boolean('update_masks', False, '')\n"
      "FLAGS = tf.app.flags.FLAGS\n")}
  for i in range(m):
    body = "".join(f"    h{j} = tf.nn.relu(h{j - 1} if {j} else x) * 2.0\n"
                   for j in range(10))
    files[f"m{i}.py"] = (
        "import tensorflow as tf\n"
        "from tensorflow.contrib.model_pruning.python import pruning\n"
        "from flags import FLAGS\n\n"
        f"def f{i}(x, w, mask, gs):\n{body}"
        "    y = tf.matmul(x, w * mask)\n"
        "    if FLAGS.update_masks:\n"
        "        op = pruning.Pruning(None, global_step=gs)"
        ".conditional_mask_update_op()\n"
        "    return y\n")
  return [_files.Source(path, text) for path, text in files.items()]


def test_many_modules_naming_the_pruning_library_cost_linear_work():
  # Was cubic: each module asked whether the project updates its masks,
  # each asking walked every module naming the flag (x9.5 for 2x at M=50).
  small, large = (scanned.calls_made(
      lambda: _scan.scan_project(_pruning_modules(m)))[0] for m in (6, 24))
  assert large <= 6 * small, (small, large)
