"""`tfpartial scan`'s `var-list-filter` on curriculum upsampling (3PU):
each stage grows a list over every level built so far (`for k in
range(i + 1): var_all += [... 'level_%d' % (k + 1) ...]`), and while
the newest level fades in a step of the same loss trains that level
alone (`'level_%d' % (i + 1)`): the earlier levels, which feed it, stay
fixed. Found at the newest level's filter. Silent twins: a stage that
trains every level it has built, a progressive GAN whose halves each
grow over every level (or one half over a scope), a moving average of
the grown list, and both arms of the fade-in over every level."""

from tests.tools import scanned

_CURRICULUM = """
import tensorflow as tf


class Model(object):
    def build(self):
        self.pred = get_gen_model(self.inputs, scope="generator")
        optimizer = tf.train.AdamOptimizer(1e-3)

        def create_train_op(i):
            loss = self.get_loss(self.pred, self.gt)
            combined = self.blend >= 1.0
            var_all = []
            for k in range(i + 1):
                var_all += [var for var in tf.trainable_variables()
                            if ('level_%d' % (k + 1)) in var.name]
            gen_tvars_level = [var for var in tf.trainable_variables()
                               if ('level_%d' % (i + 1)) in var.name]
            grad_var_all = [(g, v) for g, v in optimizer.compute_gradients(
                loss, var_all) if g is not None]
            grad_var_level = [(g, v) for g, v in optimizer.compute_gradients(
                loss, gen_tvars_level) if g is not None]
            gen_train = tf.cond(
                combined, lambda: optimizer.apply_gradients(grad_var_all),
                lambda: optimizer.apply_gradients(grad_var_level))
            return loss, gen_train

        cases = [(tf.equal(self.idx, i), lambda i=i: create_train_op(i))
                 for i in range(3)]
        self.loss, self.train_op = tf.case(cases)
"""


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def test_the_newest_level_trained_alone_beside_every_level_is_found():
  assert _found(_CURRICULUM) == [("var-list-filter", 17)]


def test_a_stage_training_every_level_it_built_is_silent():
  code = _CURRICULUM.replace("loss, gen_tvars_level)", "loss, var_all)")
  assert _found(code) == []


def test_a_stage_with_one_step_over_every_level_is_silent():
  code = _CURRICULUM.replace(
      """gen_train = tf.cond(
                combined, lambda: optimizer.apply_gradients(grad_var_all),
                lambda: optimizer.apply_gradients(grad_var_level))""",
      "gen_train = optimizer.apply_gradients(grad_var_all)").replace(
          """            grad_var_level = [(g, v) for g, v in optimizer.compute_gradients(
                loss, gen_tvars_level) if g is not None]
""", "")
  assert "grad_var_level" not in code
  assert _found(code) == []


def test_a_list_grown_with_format_and_extend_over_every_level_is_silent():
  # Its stage's newest block fades in alone (found there); a list grown
  # with no such filter beside it is the first blocks, a filter
  # (test_scan_mend37_whole_lists).
  code = """
import tensorflow as tf


def stage_step(loss, stage, fading):
    trained = []
    for k in range(0, stage + 1):
        trained.extend(tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, 'block_{}'.format(k)))
    newest = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               'block_{}'.format(stage))
    opt = tf.train.AdamOptimizer(1e-3)
    grads_all = opt.compute_gradients(loss, trained)
    grads_newest = opt.compute_gradients(loss, newest)
    return tf.cond(fading, lambda: opt.apply_gradients(grads_newest),
                   lambda: opt.apply_gradients(grads_all))
"""
  assert _found(code) == [("var-list-filter", 10)]


_GAN = """
import tensorflow as tf


class PGGAN(object):
    def build(self, stage):
        fake = self.generator(self.z, stage)
        real_logit = self.discriminator(self.x, stage)
        fake_logit = self.discriminator(fake, stage, reuse=True)
        d_loss = tf.reduce_mean(fake_logit) - tf.reduce_mean(real_logit)
        g_loss = -tf.reduce_mean(fake_logit)
        g_vars = []
        d_vars = []
        for k in range(stage + 1):
            g_vars += [v for v in tf.trainable_variables()
                       if 'gen_level_%d' % k in v.name]
            d_vars += [v for v in tf.trainable_variables()
                       if 'dis_level_%d' % k in v.name]
        self.d_train = tf.train.AdamOptimizer(1e-3).minimize(
            d_loss, var_list=d_vars)
        self.g_train = tf.train.AdamOptimizer(1e-3).minimize(
            g_loss, var_list=g_vars)
"""


def test_a_progressive_gan_whose_halves_grow_over_every_level_is_silent():
  assert _found(_GAN) == []


def test_a_progressive_gan_with_one_half_by_scope_is_silent():
  code = _GAN.replace("        d_vars = []\n", (
      "        d_vars = [v for v in tf.trainable_variables()\n"
      "                  if 'discriminator' in v.name]\n")).replace(
          """            d_vars += [v for v in tf.trainable_variables()
                       if 'dis_level_%d' % k in v.name]
""", "")
  assert "dis_level" not in code
  assert _found(code) == []


def test_a_moving_average_of_the_grown_list_is_silent():
  code = _GAN.replace(
      "        self.g_train",
      "        ema = tf.train.ExponentialMovingAverage(0.999)\n"
      "        self.g_average = ema.apply(g_vars)\n"
      "        self.g_train")
  assert _found(code) == []
