"""`tfpartial scan`'s `var-list-filter` where one half of a pair of
trainings (a GAN's generator beside its discriminator) is narrowed again
by a name test that keeps (part sixteen's spatial-transformer GAN: only
the last warp predictor of the geometric half trains): the pair leaves
the rest of that half out. Each source is synthetic."""

import scanned

_LAST_WARP = """\
    import tensorflow as tf


    def build(opt, loss_GP, loss_D):
      varsGP = [v for v in tf.global_variables() if "geometric" in v.name]
      varsGPcur = [v for v in varsGP if "geometric/warp{0}".format(opt.warpN - 1) in v.name]
      varsD = [v for v in tf.global_variables() if "discrim" in v.name]
      optimGP = tf.train.AdamOptimizer(1e-4).minimize(loss_GP, var_list=varsGPcur)
      optimD = tf.train.AdamOptimizer(1e-4).minimize(loss_D, var_list=varsD)
      return optimGP, optimD
    """


def test_a_half_narrowed_by_name_is_found_at_its_narrowing():
  assert scanned.found(_LAST_WARP) == [("var-list-filter", 6)]


def test_the_whole_half_beside_the_other_stays_silent():
  text = _LAST_WARP.replace("var_list=varsGPcur", "var_list=varsGP")
  assert scanned.found(text) == []


def test_the_rest_of_the_half_trained_by_the_other_side_stays_silent():
  # The discriminator's step trains every variable the narrowed half
  # leaves out: between them the pair trains all.
  text = _LAST_WARP.replace(
      '[v for v in tf.global_variables() if "discrim" in v.name]',
      "[v for v in tf.global_variables() if v not in varsGPcur]")
  assert scanned.found(text) == []


def test_a_half_narrowed_by_dropping_a_name_stays_a_half():
  # `not in` drops names by itself: not a narrowing that keeps.
  text = _LAST_WARP.replace(
      '"geometric/warp{0}".format(opt.warpN - 1) in v.name',
      '"geometric/warp0" not in v.name')
  assert scanned.found(text) == []
