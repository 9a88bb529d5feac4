"""`tfpartial scan` on a pipeline object whose step trains a list that
adds one part's variables only under a constructor flag (the read of
t61-objparts, rd-objparts.md, M-A..M-E). The rule that reported such a
part as left fixed (`_object_parts`) is removed: none of these projects
freezes anything by hand, and none may be reported. Self-written
projects, no fetched code."""

import ast
import textwrap

import scanned

# A part of the project wrapping a Keras network (or, below, no weights).
_PARTS = """\
    import tensorflow as tf

    class Stage(object):
      def __init__(self, units):
        self.body = tf.keras.Sequential([tf.keras.layers.Dense(units)])
    {EXTRA}
      @property
      def weights(self):
        return self.body.trainable_variables

      def forward(self, x):
        return self.body(x)

    class Curve(object):
      def __init__(self, units):
        self.power = 0.5

      @property
      def weights(self):
        return []

      def forward(self, x):
        return tf.pow(x, self.power)

    class Scaled(object):
      def __init__(self, units):
        self.body = tf.keras.layers.Rescaling(0.5)

      @property
      def weights(self):
        return self.body.trainable_variables

      def forward(self, x):
        return self.body(x)
    """

_PIPE = """\
    import tensorflow as tf
    from parts import Stage, Curve, Scaled

    class Pipe(object):
      def __init__(self, units, train=None):
        self.front = {FRONT}(units)
        self.back = Stage(3)
        self.tuned = []
        self.tuned.extend(self.back.weights)
        if 'front' in train:
          self.tuned.extend(self.front.weights)
        self.opt = tf.keras.optimizers.SGD()

      def predict(self, x):
        return self.back.forward(self.front.forward(x))

      def step(self, x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(self.predict(x) - y))
        grads = tape.gradient(loss, self.tuned)
        self.opt.apply_gradients(zip(grads, self.tuned))
        return loss
    """

_MAIN = """\
    import argparse
    from pipe import Pipe

    ap = argparse.ArgumentParser()
    ap.add_argument('--train', action='append', default=[])
    opts = ap.parse_args()
    pipe = Pipe(5, train=opts.train)
    for x, y in []:
      pipe.step(x, y)
    """


def _files(front="Stage", extra="", main=_MAIN, more=None):
  files = {"parts.py": _PARTS.replace("{EXTRA}", extra),
           "pipe.py": _PIPE.replace("{FRONT}", front),
           "main.py": main}
  files.update(more or {})
  return files


def _reported(files):
  for text in files.values():  # Every file parses: nothing passes by error.
    ast.parse(textwrap.dedent(text))
  return [f for f in scanned.in_project(files)
          if f[0] == "var-list-filter" and f[1] == "pipe.py"]


def test_m44_a_front_part_of_fixed_ops_is_not_reported():
  """M-A: the left-out part is a fixed curve (`tf.pow`), no weights."""
  assert _reported(_files(front="Curve")) == []


def test_m44_a_front_part_of_a_weightless_layer_is_not_reported():
  """M-A: the left-out part wraps a preprocessing layer with no weights."""
  assert _reported(_files(front="Scaled")) == []


def test_m44_a_front_part_set_untrainable_is_not_reported():
  """M-A: the part's network is set untrainable where it is built (a
  Keras freeze, not a hand-made one)."""
  files = _files(extra="    self.body.trainable = units != 5")
  assert _reported(files) == []


def test_m44_b_a_flag_turned_on_by_an_argparse_default_is_not_reported():
  """M-B: `default=['front']` turns the flag on in every run."""
  main = _MAIN.replace("default=[]", "default=['front']")
  assert _reported(_files(main=main)) == []


def test_m44_b_a_flag_read_from_a_config_file_is_not_reported():
  """M-B: the flag's value comes from a file; unknown is not off."""
  main = """\
    import json
    from pipe import Pipe

    conf = json.load(open('conf.json'))
    pipe = Pipe(5, train=conf['train'])
    for x, y in []:
      pipe.step(x, y)
    """
  assert _reported(_files(main=main)) == []


def test_m44_c_the_whole_object_handed_to_a_step_of_its_front():
  """M-C: each iteration hands the object whole to a function that
  trains its front part, before the object's own step."""
  main = _MAIN.replace("from pipe import Pipe",
                       "from pipe import Pipe\n    from tune import tune_front")
  main = main.replace("  pipe.step(x, y)", "  tune_front(pipe, x, y)\n"
                      "      pipe.step(x, y)")
  tune = """\
    import tensorflow as tf
    sgd = tf.keras.optimizers.SGD()

    def tune_front(p, x, y):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(p.front.forward(x) - y))
      ws = p.front.weights
      sgd.apply_gradients(zip(tape.gradient(loss, ws), ws))
    """
  assert _reported(_files(main=main, more={"tune.py": tune})) == []


def test_m44_c_the_front_parts_network_fitted_one_attribute_deeper():
  """M-C: the part's inner Keras network is compiled and fitted each
  iteration (`pipe.front.body.fit`)."""
  main = _MAIN.replace("pipe = Pipe(5, train=opts.train)",
                       "pipe = Pipe(5, train=opts.train)\n"
                       "    pipe.front.body.compile('sgd', 'mse')")
  main = main.replace("  pipe.step(x, y)", "  pipe.front.body.fit(x, y)\n"
                      "      pipe.step(x, y)")
  assert _reported(_files(main=main)) == []


def test_m44_e_a_construction_that_only_evaluates_is_not_reported():
  """M-E: training always turns the flag on; the construction leaving
  it off only predicts, never steps."""
  main = _MAIN.replace("train=opts.train", "train=['front', 'back']")
  evaluate = """\
    from pipe import Pipe

    pipe = Pipe(5, train=[])
    for x, y in []:
      print(pipe.predict(x))
    """
  assert _reported(_files(main=main, more={"evaluate.py": evaluate})) == []
