"""`tfpartial scan`'s `var-list-filter` where a flag or a configured value
narrows by name a list a model's method returns (`if FLAGS.bn_freeze:
tvars = [t for t in tvars if 'batch_normalization' not in t.name]`, part
twenty-four's RetinaNet/TextBoxes++ trainer): the method's list trains
with the flag off, so the flag's filter, in the trainer, is the choice a
reader changes; the finding is there, not at the method's collection.
The look-alikes narrow a list no step trains (a restore list, an
average's), narrow without a name test, or narrow a list a literal scope
already chose (`scope='detector/head'`). Each source is synthetic, in
the shape of real code."""

import pytest
import scanned


_in_project = scanned.in_project

DETECTOR = """\
    import tensorflow as tf

    class Detector:
      def __init__(self, scope):
        self.scope = scope

      def get_loss(self, logits, labels):
        loss = tf.reduce_mean(tf.square(logits - labels))
        tvars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                  scope=self.scope)
        return loss, tvars
    """

POSITIVE = {
    # RetinaNet/TextBoxes++: batch norm dropped from a tower's list by a
    # command-line flag.
    "batch norm dropped under a command-line flag": ({
        "detector.py": DETECTOR,
        "train.py": """\
            import tensorflow as tf
            from detector import Detector

            FLAGS = tf.app.flags.FLAGS

            def tower(net, logits, labels):
              loss, tvars = net.get_loss(logits, labels)
              if FLAGS.bn_freeze:
                tvars = [t for t in tvars if 'batch_normalization' not in t.name]
              optimizer = tf.train.MomentumOptimizer(0.01, 0.9)
              return optimizer.compute_gradients(loss, tvars)
            """}, [("var-list-filter", "train.py", 9)]),
    # Another team: a backbone dropped by a configured value, from a
    # model's own method, by a prefix test.
    "a backbone dropped under a configured value": ({
        "seg.py": """\
            import tensorflow as tf

            class Segmenter:
              def __init__(self, name):
                self.name = name

              def trainable_params(self):
                return tf.trainable_variables(scope=self.name)
            """,
        "fit.py": """\
            import tensorflow as tf
            from seg import Segmenter

            def build_train_op(cfg, model, loss):
              params = model.trainable_params()
              if cfg['freeze_backbone']:
                params = [p for p in params
                          if not p.name.startswith('backbone/')]
              return tf.train.AdamOptimizer(cfg['lr']).minimize(
                  loss, var_list=params)
            """}, [("var-list-filter", "fit.py", 7)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_flag_s_narrowing_is_shown_where_it_is_made(name):
  files, expected = POSITIVE[name]
  assert _in_project(files) == expected


def _trainer(narrowed: str, used: str) -> str:
  return f"""\
      import tensorflow as tf
      from detector import Detector

      FLAGS = tf.app.flags.FLAGS

      def tower(net, logits, labels):
        loss, tvars = net.get_loss(logits, labels)
        if FLAGS.bn_freeze:
          tvars = {narrowed}
        {used}
      """


NEGATIVE = {
    # A restore list narrowed under a flag; the step trains everything.
    "a restore list narrowed under a flag": _trainer(
        "[t for t in tvars if 'batch_normalization' not in t.name]",
        "saver = tf.train.Saver(var_list=tvars)\n"
        "        return saver, tf.train.AdamOptimizer(1e-3).minimize(loss)"),
    # The variables an average keeps, narrowed under a flag.
    "an average's list narrowed under a flag": _trainer(
        "[t for t in tvars if 'batch_normalization' not in t.name]",
        "ema = tf.train.ExponentialMovingAverage(0.999)\n"
        "        step = tf.train.AdamOptimizer(1e-3).minimize(loss)\n"
        "        return tf.group(step, ema.apply(tvars))"),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_narrowed_list_no_step_trains_is_silent(name):
  assert _in_project({"detector.py": DETECTOR,
                      "train.py": NEGATIVE[name]}) == []


def test_a_narrowing_of_a_literal_scope_s_list_stays_at_the_scope():
  # `scope='detector/head'` names a part: it leaves the rest out with the
  # flag off too, so it stays the choice shown.
  detector = DETECTOR.replace("scope=self.scope", "scope='detector/head'")
  found = _in_project({"detector.py": detector, "train.py": _trainer(
      "[t for t in tvars if 'batch_normalization' not in t.name]",
      "return tf.train.AdamOptimizer(1e-3).compute_gradients(loss, tvars)")})
  assert found == [("var-list-filter", "detector.py", 9)]


def test_a_narrowing_without_a_name_test_stays_at_the_collection():
  # Not a choice by name: the method's scope stays the filter shown.
  found = _in_project({"detector.py": DETECTOR, "train.py": _trainer(
      "[t for t in tvars if t.dtype.base_dtype == tf.float32]",
      "return tf.train.AdamOptimizer(1e-3).compute_gradients(loss, tvars)")})
  assert found == [("var-list-filter", "detector.py", 9)]
