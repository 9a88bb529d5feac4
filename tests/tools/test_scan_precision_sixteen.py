"""`tfpartial scan` stays silent on look-alikes that part sixteen's
negative codebases showed: a loop over gradient pairs whose name tests
only rescale some gradients (each pair is added on every path, some
twice, or rescaled in place before one `append`); a dict of parameters
filled once per name; a filter its author asserts keeps every variable;
an encoder trained alone on a loss kept on `self` that reads only it; a
gradient padded with zeros after it.
Each twin that does leave a part out is still found. Synthetic sources
in the shape of real code."""

import pytest
import scanned

_found = scanned.found


# KPConv's trainer: deformable offsets' gradients scaled by 0.1, every
# pair added (the first `if` adds a second, scaled copy).
_SCALED = """\
    import tensorflow as tf

    def add_train_ops(loss, optimizer):
      gvs = optimizer.compute_gradients(loss)
      scaled_gvs = []
      for grad, var in gvs:
        if 'offset_conv' in var.name:
          scaled_gvs.append((0.1 * grad, var))
        if 'offset_mlp' in var.name:
          scaled_gvs.append((0.1 * grad, var))
        {rest}
      return optimizer.apply_gradients(scaled_gvs)
    """

_ELSE = """else:
          scaled_gvs.append((grad, var))"""


@pytest.mark.parametrize("source, expected", [
    (_SCALED.format(rest=_ELSE), []),
    # No `else`: only the offsets' pairs are applied, the rest stays.
    (_SCALED.format(rest="pass"), [("var-list-filter", 10)]),
], ids=["every_pair_added", "only_offsets_added"])
def test_pairs_added_on_every_path_choose_nothing(source, expected):
  assert _found(source) == expected


# CodeSearchNet: each encoder's gradients rescaled in place, then every
# pair with a gradient applied.
_RESCALED = """\
    import tensorflow as tf

    def make_train_step(loss, optimizer, code_scale, query_scale):
      trainable_vars = tf.trainable_variables()
      gradients = tf.gradients(loss, trainable_vars)
      clipped, _ = tf.clip_by_global_norm(gradients, 1.0)
      pruned = []
      for (gradient, trainable_var) in zip(clipped, trainable_vars):
        if gradient is None:
          continue
        if trainable_var.name.startswith("code_encoder/"):
          gradient *= tf.constant(code_scale)
        elif trainable_var.name.startswith("query_encoder/"):
          gradient *= tf.constant(query_scale)
        {add}
      return optimizer.apply_gradients(pruned)
    """


@pytest.mark.parametrize("source, expected", [
    (_RESCALED.format(add="pruned.append((gradient, trainable_var))"), []),
    # The pair added under the name test: the query encoder alone trains.
    (_RESCALED.format(add="""if 'query' in trainable_var.name:
          pruned.append((gradient, trainable_var))"""),
     [("var-list-filter", 16)]),
], ids=["rescaled_in_place", "added_by_name"])
def test_gradients_rescaled_by_name_are_all_applied(source, expected):
  assert _found(source) == expected


# psketch: every module's parameters in one dict, each name once.
_ONCE = """\
    import tensorflow as tf

    class Model(object):
      def build(self, modules, optimizer):
        grads = {{}}
        params = {{}}
        for module in modules:
          for param in module.params:
            if {test}:
              grads[param.name] = tf.zeros_like(param)
              params[param.name] = param
        updates = []
        for k in params:
          updates.append((grads[k], params[k]))
        return optimizer.apply_gradients(updates)
    """


@pytest.mark.parametrize("source, expected", [
    (_ONCE.format(test="param.name not in grads"), []),
    # A name test chooses the parameters: the others stay.
    (_ONCE.format(test="'actor' in param.name"), [("var-list-filter", 14)]),
], ids=["once_per_name", "chosen_by_name"])
def test_a_dict_filled_once_per_name_keeps_every_parameter(source, expected):
  assert _found(source) == expected


# SEGAN's auto-encoder: the generator's prefix, asserted to hold every
# variable of the graph.
_ASSERTED = """\
    import tensorflow as tf

    class SEAE(object):
      def build(self, loss, optimizer):
        self.get_vars()
        return optimizer.minimize(loss, var_list=self.g_vars)

      def get_vars(self):
        t_vars = tf.trainable_variables()
        self.g_vars = [var for var in t_vars if var.name.startswith('g_')]
        {check}
    """


@pytest.mark.parametrize("source, expected", [
    (_ASSERTED.format(check="""for x in t_vars:
          assert x in self.g_vars, x.name"""), []),
    (_ASSERTED.format(check="self.all_vars = t_vars"),
     [("var-list-filter", 10)]),
], ids=["asserted_whole", "not_asserted"])
def test_a_filter_asserted_to_keep_every_variable(source, expected):
  assert _found(source) == expected


# BSP-Net's single-view stage: an image encoder trained to match codes
# fed in; the decoder, restored from the auto-encoder's run, built
# beside it only for testing.
_MEMBERS = """\
    import tensorflow as tf

    class SVR(object):
      def __init__(self, dim):
        self.view = tf.placeholder(tf.float32, [None, 64, 64, 1])
        self.z_vector = tf.placeholder(tf.float32, [None, dim])
        self.E = self.img_encoder({fed})
        self.vars = tf.trainable_variables()
        self.train_vars = [v for v in self.vars if 'img_encoder' in v.name]
        self.fixed_vars = [v for v in self.vars
                           if 'img_encoder' not in v.name]
        self.loss = tf.reduce_mean(tf.square(self.z_vector - self.E))

      def decoder(self, z):
        with tf.variable_scope("decoder"):
          return tf.layers.dense(z, 64)

      def img_encoder(self, view):
        with tf.variable_scope("img_encoder"):
          return tf.layers.dense(tf.layers.flatten(view), 32)

      def train(self, sess, lr, checkpoint):
        step = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=self.train_vars)
        # The auto-encoder's decoder, trained before, restored.
        self.saver = tf.train.Saver(self.fixed_vars)
        self.saver.restore(sess, checkpoint)
        return step
    """


@pytest.mark.parametrize("source, expected", [
    (_MEMBERS.format(fed="self.view"), []),
    # On the decoder's output: the decoder stays fixed under the loss.
    (_MEMBERS.format(fed="self.decoder(self.z_vector)"),
     [("var-list-filter", 9)]),
], ids=["encoder_alone", "encoder_on_a_decoder"])
def test_an_encoder_alone_on_a_loss_kept_on_self(source, expected):
  assert _found(source) == expected


# tf-shell: each gradient flattened and padded with zeros to a multiple
# of a row size (to pack it for encryption), then cut back and applied.
_PADDED = """\
    import tensorflow as tf

    def flatten_and_pad(grad, size):
      flat = tf.reshape(grad, [-1])
      pad_len = size - tf.math.floormod(tf.size(flat), size)
      padded = tf.concat({parts}, axis=0)
      return tf.reshape(padded, [size, -1]), pad_len

    def train_step(model, optimizer, x, y, size):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
      grads = tape.gradient(loss, model.trainable_variables)
      out = []
      for g, v in zip(grads, model.trainable_variables):
        padded, pad_len = flatten_and_pad(g, size)
        flat = tf.reshape(padded, [-1])[:-pad_len]
        out.append(tf.reshape(flat, tf.shape(v)))
      optimizer.apply_gradients(zip(out, model.trainable_variables))
    """


@pytest.mark.parametrize("source, expected", [
    (_PADDED.format(parts="[flat, tf.zeros(pad_len)]"), []),
    # Its first elements replaced by zeros: they get no update.
    (_PADDED.format(parts="[tf.zeros(pad_len), flat[pad_len:]]"),
     [("grads-mask", 6)]),
], ids=["zeros_appended", "zeros_in_place_of_a_part"])
def test_a_gradient_padded_with_zeros_is_no_mask(source, expected):
  assert _found(source) == expected
