"""`tfpartial scan` after the final review of the m39 mends (m39-fin):
two rules that hid real partial freezes, made narrow or removed.

Sections:
- straight-through cuts (`_custom_gradients`): a range test is a cut
  only when every bound is a number of at least 1e-3 written there; a
  bound the scan cannot read (`epsilon() * 10`, an absl flag) may be a
  float-safe `w == 0`, so the PackNet mask stays found (p16, p17); a
  bound of 1 stays a silent cut;
- the canned-estimator scope (`_outer_scope`, removed): a head scope
  around a backbone imported from another module, by name or through
  the module, keeps the step found (p6, p8).
"""

import pytest

import scanned
import test_scan_mend39_silencers as silencers


_cut = silencers._cut


_FLAG = ("from absl import flags; FLAGS = flags.FLAGS; "
         "flags.DEFINE_float('prune_eps', 1e-8, '')")


@pytest.mark.parametrize("test, head", [
    ("tf.abs(w) < tf.keras.backend.epsilon() * 10", ""),  # p16
    ("tf.abs(w) < FLAGS.prune_eps", _FLAG),  # p17
    ("-cfg.eps < w < cfg.eps", ""),
    ("tf.less(tf.abs(w), cfg.eps)", ""),
], ids=["p16_epsilon_times", "p17_flag", "chain_attribute", "less_attribute"])
def test_a_range_test_with_an_unknown_bound_is_a_zero_test(test, head):
  assert scanned.found(_cut(test, head)) == [("grads-mask", 7)]


@pytest.mark.parametrize("test", ["tf.abs(w) <= 1", "-1.0 < w < 1.0",
                                  "tf.less_equal(tf.abs(w), 0.5)"])
def test_a_range_test_with_large_written_bounds_stays_silent(test):
  assert scanned.found(_cut(test)) == []


_HEAD = """\
    import tensorflow as tf
    IMPORT


    def model_fn(features, labels, mode):
""" + silencers.head_scope(
    'logits = tf.layers.dense(BACKBONE(features["image"]), 10)') + """

    est = tf.estimator.Estimator(model_fn)
    est.train(input_fn)
    """

_NETS = """\
    import tensorflow_hub as hub
    backbone = hub.Module("https://tfhub.dev/x/1", trainable=True)
    """


@pytest.mark.parametrize("imported, called", [
    ("from nets import backbone", "backbone"),  # p6
    ("import nets", "nets.backbone"),  # p8
], ids=["p6_from_import", "p8_module_import"])
def test_a_head_scope_around_an_imported_backbone_is_found(imported, called):
  main = _HEAD.replace("IMPORT", imported).replace("BACKBONE", called)
  assert scanned.in_project({"m.py": main, "nets.py": _NETS}) == [
      ("var-list-filter", "m.py", 12)]
