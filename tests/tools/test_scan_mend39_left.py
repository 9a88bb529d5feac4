"""`tfpartial scan`, review m39 of `_idle_project` and `_fewer_entries`.

`_idle_project` is removed (m39-r2): a padding row stays found whatever
gates the project's steps; the cases below that assert a finding stay.
Two arms of an `if` writing the step's list from one dict are no freeze
when the short arm is a stage of its own (its own loss, a model grown
later, keys built only in some cases): `_fewer_entries` is gone, these
stay silent."""

import textwrap

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan
# deep_lip_reading, reduced: `_MODULES` (a padding row of `embedding`),
# `_GRAPH` and `_MAIN` are test_scan_idle_project's, not copies.
from test_scan_idle_project import _GRAPH, _MAIN, _MODULES

_LM = """\
    import tensorflow as tf

    class CharRnnLm:
      def __init__(self, args, training=False):
        self.training = training
        self.input_data = tf.placeholder(tf.int32, [None, 10])
        emb = tf.get_variable("emb", [args.vocab, 64])
        self.logits = tf.layers.dense(
            tf.nn.embedding_lookup(emb, self.input_data), args.vocab)

      def build_train_op(self):
        if self.training:
          self.cost = tf.reduce_mean(self.logits)
          optimizer = tf.train.AdamOptimizer(0.001)
          self.train_op = optimizer.minimize(self.cost)

    def load_lm(args, sess, path):
      model = CharRnnLm(args, training=False)
      model.build_train_op()
      tf.train.Saver().restore(sess, path)
      return model
    """

_FOUND = [("stop-gradient-mix", "modules.py", 9)]


def _lip(**changed):
  files = {"modules.py": _MODULES, "graph.py": _GRAPH, "lm.py": _LM,
           "main.py": _MAIN}
  files.update(changed)
  return scanned.in_project(files)


def _scanned(extra):
  """(findings as (idiom, path, line), errors) of the lip project with
  the sources `extra` beside it."""
  sources = [_files.Source(path, textwrap.dedent(text))
             for path, text in {"modules.py": _MODULES, "graph.py": _GRAPH,
                                "lm.py": _LM, "main.py": _MAIN}.items()]
  findings, errors = _scan.scan_project([*sources, *extra])
  return [(f.idiom, f.path, f.line) for f in findings], errors


# A training script one line of which does not parse: its function is
# left out, the rest is read (the scan notes the skipped lines).
_BROKEN_TRAIN = """\
    import tensorflow as tf
    from graph import TransformerGraph


    def run_training():
        g = TransformerGraph(x, y)
        train_op = tf.train.AdamOptimizer(0.001).minimize(tf.reduce_mean(g.logits))
        for i in range(10):
            sess.run(train_op)
        print("done" if x else)


    def load(path):
        saver = tf.train.Saver()
        saver.restore(sess, path)
        return saver


    def evaluate(path):
        g = TransformerGraph(x, y, is_training=False)
        load(path)
        acc = tf.reduce_mean(g.preds)
        return sess.run(acc)


    def report(values):
        for v in values:
            print(v)
        return len(values)


    if __name__ == "__main__":
        run_training()
    """


def test_a_training_module_read_without_a_broken_block_may_train():
  found, _ = _scanned([_files.Source(
      "train.py", textwrap.dedent(_BROKEN_TRAIN))])
  assert found == _FOUND


def test_a_notebook_whose_training_cell_was_left_out_may_train():
  # The notebook's reader keeps the cells that parse and notes the rest.
  found, _ = _scanned([_files.Source(
      "train.ipynb", "from graph import TransformerGraph\n",
      cells=((1, 1),),
      notes=("train.ipynb: cell 2, skipped: does not parse",))])
  assert found == _FOUND


def test_a_gate_of_a_function_fire_calls_is_open():
  train = """\
      import fire
      import tensorflow as tf
      from graph import TransformerGraph

      def main(train=True):
        g = TransformerGraph(x, y)
        if train:
          tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(g.logits))

      fire.Fire(main)
      """
  assert _lip(**{"train.py": train}) == _FOUND


def test_a_gate_of_a_function_app_run_calls_is_open():
  train = """\
      from absl import app
      import tensorflow as tf
      from graph import TransformerGraph

      def main(argv, train=True):
        g = TransformerGraph(x, y)
        loss = tf.reduce_mean(g.logits)
        if train:
          train_op = tf.train.AdamOptimizer(0.001).minimize(loss)

      if __name__ == "__main__":
        app.run(main)
      """
  assert _lip(**{"train.py": train}) == _FOUND


def test_a_gate_off_by_default_in_a_function_nobody_calls_is_open():
  # `--do_train` on a command line the scan cannot see.
  train = """\
      import tensorflow as tf
      from graph import TransformerGraph

      def train_model(do_train=False):
        g = TransformerGraph(x, y)
        if do_train:
          tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(g.logits))
      """
  assert _lip(**{"train.py": train}) == _FOUND


def test_a_subclass_constructing_with_training_on_is_open():
  train = """\
      from lm import CharRnnLm

      class TrainableLm(CharRnnLm):
        def __init__(self, args):
          super().__init__(args, training=True)

      def train(args):
        model = TrainableLm(args)
        model.build_train_op()
      """
  assert _lip(**{"train_lm.py": train}) == _FOUND


def test_a_partial_of_the_class_with_training_on_is_open():
  train = """\
      import functools
      from lm import CharRnnLm

      MODELS = {"lm": functools.partial(CharRnnLm, training=True)}

      def run(args):
        model = MODELS[args.model](args)
        model.build_train_op()
      """
  assert _lip(**{"train_lm.py": train}) == _FOUND


def test_an_attribute_written_from_outside_the_class_is_open():
  train = """\
      from lm import CharRnnLm

      def run(args):
        model = CharRnnLm(args)
        model.training = True
        model.build_train_op()
      """
  assert _lip(**{"train_lm.py": train}) == _FOUND


# Two arms choosing the step's list from one dict, each a stage of its
# own or a list of keys not always built: no freeze (review m39).
_STAGES = """\
    import tensorflow as tf

    class Rcnn(object):
      def __init__(self):
        self.w = {}
        self.w['rpn1'] = tf.get_variable('rpn1', [3, 3, 3, 8])
        self.w['rpn2'] = tf.get_variable('rpn2', [3, 3, 8, 8])
        self.w['head'] = tf.get_variable('head', [8, 2])
        self.rpn_loss = tf.reduce_sum(self.w['rpn1']) + tf.reduce_sum(self.w['rpn2'])
        self.head_loss = tf.reduce_sum(self.w['head'])

      def optimize(self, stage):
        if stage == 1:
          loss = self.rpn_loss
          params = [self.w['rpn1'], self.w['rpn2']]
        else:
          loss = self.rpn_loss + self.head_loss
          params = [self.w['rpn1'], self.w['rpn2'], self.w['head']]
        return tf.train.AdamOptimizer().minimize(loss, var_list=params)
    """

_ACTOR_CRITIC = """\
    import tensorflow as tf

    class ActorCritic(object):
      def __init__(self):
        self.w = {}
        self.w['critic'] = tf.get_variable('critic', [8, 1])
        self.w['actor'] = tf.get_variable('actor', [8, 4])

      def train(self, critic_loss, actor_loss, warmup):
        if warmup:
          loss = critic_loss
          params = [self.w['critic']]
        else:
          loss = critic_loss + actor_loss
          params = [self.w['critic'], self.w['actor']]
        return tf.train.AdamOptimizer().minimize(loss, var_list=params)
    """

_PROGRESSIVE = """\
    import tensorflow as tf


    class Grown(object):
      def __init__(self, stage):
        self.stage = stage
        self.w = {}
        self.w['g1'] = tf.get_variable('g1', [4, 4])
        self.w['g2'] = tf.get_variable('g2', [4, 4])

      def forward(self, x):
        h = tf.matmul(x, self.w['g1'])
        if self.stage == 2:
          h = tf.matmul(h, self.w['g2'])
        return h

      def step(self, x):
        loss = tf.reduce_mean(self.forward(x))
        if self.stage == 1:
          params = [self.w['g1']]
        else:
          params = [self.w['g1'], self.w['g2']]
        return tf.train.AdamOptimizer().minimize(loss, var_list=params)
    """

_NAMES_LISTED = """\
    import tensorflow as tf


    class Net(object):
      def __init__(self, finetune=False):
        self.names = ['conv1', 'fc']
        self.finetune = finetune
        self.w = {}
        for name in self.names:
          if name == 'fc' or not finetune:
            self.w[name] = tf.get_variable(name, [4, 4])

      def step(self, loss):
        if self.finetune:
          params = [self.w['fc']]
        else:
          params = [self.w['conv1'], self.w['fc']]
        return tf.train.AdamOptimizer().minimize(loss, var_list=params)
    """

_HELPER_CONFIG = """\
    import tensorflow as tf

    class Net(object):
      def __init__(self, with_aux=False):
        self.w = {}
        self.with_aux = with_aux
        self._backbone()
        if with_aux:
          self._aux()

      def _backbone(self):
        self.w['conv'] = tf.get_variable('conv', [3, 3, 3, 8])

      def _aux(self):
        self.w['aux'] = tf.get_variable('aux', [8, 2])

      def step(self, loss):
        if self.with_aux:
          params = [self.w['conv'], self.w['aux']]
        else:
          params = [self.w['conv']]
        grads = tf.gradients(loss, params)
        return tf.train.AdamOptimizer().apply_gradients(zip(grads, params))
    """


def test_an_arm_with_its_own_loss_is_a_stage_not_a_freeze():
  assert scanned.found(_STAGES) == []


def test_a_warm_up_arm_training_the_critic_alone_is_silent():
  assert scanned.found(_ACTOR_CRITIC) == []


def test_a_grown_model_s_first_stage_is_silent():
  assert scanned.found(_PROGRESSIVE) == []


def test_keys_listed_as_names_but_built_under_an_if_are_silent():
  assert scanned.found(_NAMES_LISTED) == []


def test_a_key_built_by_a_helper_called_under_an_if_is_silent():
  assert scanned.found(_HELPER_CONFIG) == []
