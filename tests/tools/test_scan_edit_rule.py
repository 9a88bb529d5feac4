"""One rule for edits of gradients and forward-pass parameters: a value
whose part for SOME variables (rows, layers) is made zero by a choice (a
test of a variable's name, a key or an index into multipliers, a rate
that the project sets or compares to 0) while the rest flows on to the
step. The forms below are written as another team would write them (a
helper in another file, a method, a class attribute, a dict or a list of
rates, TF1 and TF2); beside each, its silent twin: the same shape that
freezes nothing (every gradient scaled alike, a rate that is never 0, a
clip, a dropout, a target network, code that applies nothing)."""

import scanned

# A tower-averaging helper in a utility module scaling the gradients of
# the encoder by a ratio the model code tests against 0.
_TOWERS = '''
import tensorflow as tf

def average_gradients(tower_grads, encoder_ratio):
  averaged = []
  for pairs in zip(*tower_grads):
    grads = []
    for g, v in pairs:
      if 'encoder' in v.name:
        g = g * encoder_ratio
      grads.append(tf.expand_dims(g, 0))
    grad = tf.reduce_mean(tf.concat(grads, 0), 0)
    averaged.append((grad, pairs[0][1]))
  return averaged
'''

_TRAIN = '''
import tensorflow as tf
from utils import average_gradients

ENCODER_RATIO = 1.0

def build(losses):
  opt = tf.train.AdamOptimizer(1e-4)
  tower_grads = [opt.compute_gradients(loss) for loss in losses]
  grads = average_gradients(tower_grads, ENCODER_RATIO)
  return opt.apply_gradients(grads)
'''

_MODEL = '''
import tensorflow as tf

def tower_loss(features, encoder_ratio=1.0):
  if encoder_ratio == 0.0:
    features = tf.stop_gradient(features)
  return tf.reduce_mean(features)
'''


def test_a_helper_scaling_named_gradients_by_a_ratio_tested_against_zero():
  found = scanned.in_project(
      {"utils.py": _TOWERS, "train.py": _TRAIN, "model.py": _MODEL})
  assert ("grads-mask", "utils.py", 10) in found


def test_every_gradient_scaled_by_a_ratio_that_may_be_zero_is_silent():
  # No choice: the whole step is scaled (a learning-rate multiplier).
  towers = _TOWERS.replace("      if 'encoder' in v.name:\n        g = g",
                           "      g = g")
  found = scanned.in_project(
      {"utils.py": towers, "train.py": _TRAIN, "model.py": _MODEL})
  assert [f for f in found if f[0] == "grads-mask"] == []


def test_named_gradients_scaled_by_a_ratio_never_zero_are_silent():
  # Layer-wise learning rates: the ratio is never 0 anywhere.
  found = scanned.in_project({"utils.py": _TOWERS, "train.py": _TRAIN})
  assert [f for f in found if f[0] == "grads-mask"] == []


def test_a_method_scaling_a_scope_by_an_attribute_defaulting_to_zero():
  assert scanned.found('''
      import tensorflow as tf

      class Trainer:
        def __init__(self, model, backbone_mult=0.0):
          self.model = model
          self.backbone_mult = backbone_mult
          self.opt = tf.keras.optimizers.Adam(1e-3)

        def _scaled(self, grads, variables):
          out = []
          for g, v in zip(grads, variables):
            if v.name.startswith('backbone'):
              g = g * self.backbone_mult
            out.append(g)
          return out

        def step(self, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.model(x) - y) ** 2)
          variables = self.model.trainable_variables
          grads = self._scaled(tape.gradient(loss, variables), variables)
          self.opt.apply_gradients(zip(grads, variables))
      ''') == [("grads-mask", 14)]


def test_a_method_scaling_a_scope_by_an_attribute_defaulting_to_two():
  assert scanned.found('''
      import tensorflow as tf

      class Trainer:
        def __init__(self, model, backbone_mult=2.0):
          self.model = model
          self.backbone_mult = backbone_mult
          self.opt = tf.keras.optimizers.Adam(1e-3)

        def _scaled(self, grads, variables):
          out = []
          for g, v in zip(grads, variables):
            if v.name.startswith('backbone'):
              g = g * self.backbone_mult
            out.append(g)
          return out

        def step(self, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.model(x) - y) ** 2)
          variables = self.model.trainable_variables
          grads = self._scaled(tape.gradient(loss, variables), variables)
          self.opt.apply_gradients(zip(grads, variables))
      ''') == []


_CONFIG = '''
class Config:
  HEAD_ONLY = True
  BACKBONE_GRAD_SCALE = 0.0
'''

_STEP = '''
import tensorflow as tf
from config import Config

def train_op(loss, global_step):
  opt = tf.train.MomentumOptimizer(0.01, 0.9)
  pairs = []
  for grad, var in opt.compute_gradients(loss):
    if 'resnet' in var.op.name:
      grad = tf.multiply(grad, Config.BACKBONE_GRAD_SCALE)
    pairs.append((grad, var))
  return opt.apply_gradients(pairs, global_step=global_step)
'''


def test_a_class_attribute_of_another_file_set_to_zero():
  assert ("grads-mask", "step.py", 10) in scanned.in_project(
      {"config.py": _CONFIG, "step.py": _STEP})


def test_a_class_attribute_set_to_a_half_is_silent():
  config = _CONFIG.replace("= 0.0", "= 0.5")
  assert scanned.in_project({"config.py": config, "step.py": _STEP}) == []


def test_a_dict_of_multipliers_keyed_by_scope_holding_a_zero():
  assert scanned.found('''
      import tensorflow as tf

      MULTIPLIERS = {'encoder': 0.0, 'decoder': 1.0, 'head': 1.0}

      def train(loss):
        opt = tf.compat.v1.train.AdamOptimizer(1e-3)
        scaled = []
        for g, v in opt.compute_gradients(loss):
          scale = MULTIPLIERS[v.name.split('/')[0]]
          scaled.append((g * scale, v))
        return opt.apply_gradients(scaled)
      ''') == [("grads-mask", 11)]


def test_a_dict_of_multipliers_without_a_zero_is_silent():
  assert scanned.found('''
      import tensorflow as tf

      MULTIPLIERS = {'encoder': 0.1, 'decoder': 1.0, 'head': 10.0}

      def train(loss):
        opt = tf.compat.v1.train.AdamOptimizer(1e-3)
        scaled = []
        for g, v in opt.compute_gradients(loss):
          scale = MULTIPLIERS[v.name.split('/')[0]]
          scaled.append((g * scale, v))
        return opt.apply_gradients(scaled)
      ''') == []


def test_a_list_of_per_layer_rates_indexed_by_position():
  assert scanned.found('''
      import tensorflow as tf

      def fit(model, data, opt):
        rates = [0.0, 0.0, 0.5, 1.0]
        for x, y in data:
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
          grads = tape.gradient(loss, model.trainable_variables)
          grads = [g * rates[i // 2] for i, g in enumerate(grads)]
          opt.apply_gradients(zip(grads, model.trainable_variables))
      ''') == [("grads-mask", 10)]


def test_a_rate_set_to_zero_under_a_name_test():
  assert scanned.found('''
      import tensorflow as tf

      def train(loss, opt):
        out = []
        for g, v in opt.compute_gradients(loss):
          if 'embedding' in v.name:
            rate = 0.0
          else:
            rate = 1.0
          out.append((g * rate, v))
        return opt.apply_gradients(out)
      ''') == [("grads-mask", 11)]


def test_a_rate_set_by_a_step_test_for_every_variable_is_silent():
  # A warm-up of the whole model: no variable is chosen.
  assert scanned.found('''
      import tensorflow as tf

      def train(loss, opt, step):
        out = []
        for g, v in opt.compute_gradients(loss):
          if step < 100:
            rate = 0.0
          else:
            rate = 1.0
          out.append((g * rate, v))
        return opt.apply_gradients(out)
      ''') == []


def test_a_clip_and_a_dropout_under_a_name_test_are_silent():
  assert scanned.found('''
      import tensorflow as tf

      def train(loss, opt, keep=0.0):
        out = []
        for g, v in opt.compute_gradients(loss):
          if 'rnn' in v.name:
            g = tf.clip_by_norm(g, 5.0)
          if 'dense' in v.name:
            g = tf.nn.dropout(g, rate=0.1)
          out.append((g, v))
        return opt.apply_gradients(out)
      ''') == []


def test_scaled_gradients_only_measured_are_silent():
  # Evaluation-only: the scaled gradients are summarised, never applied.
  assert scanned.found('''
      import tensorflow as tf

      RATIOS = {'encoder': 0.0, 'decoder': 1.0}

      def report(loss, opt):
        norms = []
        for g, v in opt.compute_gradients(loss):
          scaled = g * RATIOS[v.name.split('/')[0]]
          norms.append(tf.norm(scaled))
        return tf.add_n(norms)
      ''') == []


def test_a_target_network_blend_by_a_rate_that_may_be_zero_is_silent():
  assert scanned.found('''
      import tensorflow as tf

      def soft_update(target, online, tau=0.0):
        for t, o in zip(target.variables, online.variables):
          if 'q' in t.name:
            t.assign(tau * o + (1.0 - tau) * t)

      def train(model, target, opt, x, y, tau):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        soft_update(target, model, tau)
      ''') == []


def test_gradient_rows_multiplied_by_zeros_at_chosen_ids():
  assert scanned.found('''
      import tensorflow as tf

      def optimize(loss, opt, frozen):
        out = []
        for g, v in opt.compute_gradients(loss):
          if v in frozen:
            ids = frozen[v]
            g = tf.compat.v1.scatter_mul(g, ids, tf.zeros([len(ids), 64]))
          out.append((g, v))
        return opt.apply_gradients(out)
      ''') == [("grads-mask", 9)]


def test_gradient_rows_scaled_by_twos_at_chosen_ids_are_silent():
  assert scanned.found('''
      import tensorflow as tf

      def optimize(loss, opt, boosted):
        out = []
        for g, v in opt.compute_gradients(loss):
          if v in boosted:
            ids = boosted[v]
            g = tf.compat.v1.scatter_mul(g, ids, 2.0 * tf.ones([len(ids), 64]))
          out.append((g, v))
        return opt.apply_gradients(out)
      ''') == []


def test_a_padding_row_zeroed_by_the_write_the_lookups_read():
  assert scanned.found('''
      import tensorflow as tf

      PAD = 0

      class Model:
        def __init__(self, vocab, dim, ids):
          self.table = tf.compat.v1.get_variable("table", [vocab, dim])
          self.table = tf.compat.v1.scatter_update(
              self.table, tf.constant(PAD), tf.constant([0.0] * dim))
          embedded = tf.nn.embedding_lookup(self.table, ids)
          self.loss = tf.reduce_mean(embedded)
          self.train_op = tf.compat.v1.train.AdamOptimizer().minimize(
              self.loss)
      ''') == [("weight-remask", 9)]


def test_a_padding_row_written_but_never_read_is_silent():
  assert scanned.found('''
      import tensorflow as tf

      PAD = 0

      class Model:
        def __init__(self, vocab, dim, ids):
          self.table = tf.compat.v1.get_variable("table", [vocab, dim])
          self.clear = tf.compat.v1.scatter_update(
              self.table, tf.constant(PAD), tf.constant([0.0] * dim))
          embedded = tf.nn.embedding_lookup(self.table, ids)
          self.loss = tf.reduce_mean(embedded)
          self.train_op = tf.compat.v1.train.AdamOptimizer().minimize(
              self.loss)
      ''') == []


# A custom-gradient identity scaling what flows back by a rate, applied
# per layer with rates picked by index, and given 0 elsewhere: the layers
# below a rate of 0 get no update (gradual unfreezing).
_RATES = '''
import tensorflow as tf

def layer_rate(rate):
  @tf.custom_gradient
  def scaled(x):
    def grad(dy):
      return dy * rate
    return x, grad
  return scaled

def frozen_head(x):
  return layer_rate(0.0)(x)
'''

_ENCODER = '''
import tensorflow as tf
from rates import layer_rate

class Encoder(tf.keras.Model):
  def __init__(self, rates):
    super().__init__()
    self.rates = rates
    self.blocks = [tf.keras.layers.Dense(64) for _ in rates]

  def call(self, x):
    for i, block in enumerate(self.blocks):
      x = layer_rate(self.rates[i])(block(x))
    return x
'''


def test_a_custom_gradient_rate_picked_per_layer_that_can_be_zero():
  found = scanned.in_project({"rates.py": _RATES, "encoder.py": _ENCODER})
  assert ("grads-mask", "rates.py", 8) in found


def test_a_gradient_reversal_by_a_scheduled_rate_is_silent():
  rates = _RATES.replace("dy * rate", "-dy * rate").replace(
      "layer_rate(0.0)(x)", "layer_rate(schedule(step))(x)")
  encoder = _ENCODER.replace("self.rates[i]", "self.rates")
  assert scanned.in_project({"rates.py": rates, "encoder.py": encoder}) == []


def test_a_custom_gradient_rate_never_zero_is_silent():
  rates = _RATES.replace("layer_rate(0.0)(x)", "layer_rate(0.5)(x)")
  assert scanned.in_project({"rates.py": rates, "encoder.py": _ENCODER}) == []


# A Keras optimizer subclass scaling each gradient by a multiplier picked
# by the variable's scope from a dict its constructor is given.
_SUBCLASS = '''
import tensorflow as tf

class LayerwiseAdam(tf.keras.optimizers.Adam):
  def __init__(self, multipliers, **kwargs):
    super().__init__(**kwargs)
    self.multipliers = multipliers

  def apply_gradients(self, grads_and_vars, **kwargs):
    scaled = []
    for g, v in grads_and_vars:
      scaled.append((g * self.multipliers[v.name.split('/')[0]], v))
    return super().apply_gradients(scaled, **kwargs)

opt = LayerwiseAdam({'encoder': 0.0, 'head': 1.0}, learning_rate=1e-3)
'''


def test_an_optimizer_subclass_given_multipliers_holding_a_zero():
  assert scanned.found(_SUBCLASS) == [("grads-mask", 12)]


def test_an_optimizer_subclass_given_multipliers_without_a_zero_is_silent():
  assert scanned.found(_SUBCLASS.replace("'encoder': 0.0", "'encoder': 0.1")
                       ) == []


_LOOKED_UP = '''
import tensorflow as tf

MULTS = {'vgg/conv1': 0.0, 'vgg/conv2': 0.0}

def train(loss, opt, mults):
  gvs = opt.compute_gradients(loss)
  gvs = [(g * mults.get(v.op.name, 1.0), v) for g, v in gvs]
  return opt.apply_gradients(gvs)

def main(loss):
  opt = tf.compat.v1.train.MomentumOptimizer(0.01, 0.9)
  return train(loss, opt, MULTS)
'''


def test_multipliers_looked_up_with_a_default_holding_zeros():
  assert scanned.found(_LOOKED_UP) == [("grads-mask", 8)]


def test_multipliers_looked_up_with_a_default_of_zero_only_are_silent():
  # Every variable's multiplier is 0 (nothing trains): no choice.
  assert scanned.found(_LOOKED_UP.replace("1.0)", "0.0)")) == []


def test_a_straight_through_estimator_and_an_ema_are_silent():
  assert scanned.found('''
      import tensorflow as tf

      def quantized(w, decay=0.0):
        if decay == 0.0:
          return w
        return w + tf.stop_gradient(tf.round(w) - w)

      def train(model, opt, x, y, ema):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        ema.apply(model.trainable_variables)
      ''') == []


def test_an_indexed_slices_rebuild_scaled_under_a_name_test():
  assert scanned.found('''
      import tensorflow as tf

      def step(loss, opt, emb_ratio=0.0):
        out = []
        for g, v in opt.compute_gradients(loss):
          if 'embedding' in v.name and isinstance(g, tf.IndexedSlices):
            g = tf.IndexedSlices(g.values * emb_ratio, g.indices,
                                 g.dense_shape)
          out.append((g, v))
        return opt.apply_gradients(out)
      ''') == [("grads-mask", 8)]


def test_a_tf2_comprehension_choosing_a_module_constant_of_zero():
  assert scanned.found('''
      import tensorflow as tf

      FREEZE_SCALE = 0.0

      @tf.function
      def step(model, opt, x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(model(x) - y))
        vs = model.trainable_variables
        grads = tape.gradient(loss, vs)
        grads = [g * FREEZE_SCALE if 'backbone' in v.name else g
                 for g, v in zip(grads, vs)]
        opt.apply_gradients(zip(grads, vs))
      ''') == [("grads-mask", 12)]


def test_a_gan_step_scaling_all_its_gradients_by_a_zero_default_is_silent():
  # Two optimizers, each over its own list; one scales all it trains.
  assert scanned.found('''
      import tensorflow as tf

      def train(d_loss, g_loss, d_scale=0.0):
        d_opt = tf.train.AdamOptimizer(2e-4)
        g_opt = tf.train.AdamOptimizer(2e-4)
        d_vars = [v for v in tf.trainable_variables() if 'disc' in v.name]
        g_vars = [v for v in tf.trainable_variables() if 'gen' in v.name]
        d_grads = [(g * d_scale, v)
                   for g, v in d_opt.compute_gradients(d_loss, var_list=d_vars)]
        return (d_opt.apply_gradients(d_grads),
                g_opt.minimize(g_loss, var_list=g_vars))
      ''') == []


_OPTIONS = '''
import argparse
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument('--encoder_scale', type=float, default=0.0)
args = parser.parse_args()

def build(loss):
  opt = tf.compat.v1.train.AdamOptimizer(1e-4)
  pairs = []
  for g, v in opt.compute_gradients(loss):
    if v.name.startswith('encoder/'):
      g = g * args.encoder_scale
    pairs.append((g, v))
  return opt.apply_gradients(pairs)
'''


def test_a_scope_scaled_by_an_option_whose_default_is_zero():
  assert scanned.found(_OPTIONS) == [("grads-mask", 14)]


def test_a_scope_scaled_by_an_option_whose_default_is_a_tenth_is_silent():
  assert scanned.found(_OPTIONS.replace("default=0.0", "default=0.1")) == []


def test_a_scope_scaled_by_a_flag_defined_as_zero():
  assert scanned.found('''
      import tensorflow as tf

      tf.compat.v1.flags.DEFINE_float('backbone_lr_mult', 0.0, 'x')
      FLAGS = tf.compat.v1.flags.FLAGS

      def build(loss, opt):
        pairs = []
        for g, v in opt.compute_gradients(loss):
          if 'resnet' in v.op.name:
            g *= FLAGS.backbone_lr_mult
          pairs.append((g, v))
        return opt.apply_gradients(pairs)
      ''') == [("grads-mask", 11)]
