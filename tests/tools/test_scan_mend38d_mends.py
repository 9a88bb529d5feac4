"""`tfpartial scan` after the review of the second mends: both sides of a
conflict binding one attribute (`self.head =`) bind a name in common, so
each side is read as its own version; a `tf.cond`'s branches are steps of
one training only when its predicate reads the counter and literals alone
and repeats with it (`tf.mod`, `%`); a per-element list of steps is run
element by element only when indexed inside a loop over `range(n)`; a
joined list reaches a step only through flows carrying its items (not a
reduction, not a return beside the step), each statement asked again only
when a name it reads joins; a mask a base class gives the library is the
subclass's too, and a collection read back only to be logged is none a
`Pruning` reads. Reduced from the reviewer's probes."""

import textwrap

import pytest

import scanned
import test_scan_mend38_masks as masks
import test_scan_whole_splits as whole_splits

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _scan_of(text):
  scan = _scan.scan([_files.Source("train.py", textwrap.dedent(text))])
  return [(f.idiom, f.line) for f in scan.findings]


def test_both_sides_binding_one_attribute_are_read_apart():
  assert _scan_of('''\
      import tensorflow as tf


      class Trainer(object):
        def build(self, model, loss):
      <<<<<<< HEAD
          self.head = [v for v in model.trainable_variables if "head" in v.name]
      =======
          self.head = model.trainable_variables
      >>>>>>> feature
          self.train_op = tf.train.AdamOptimizer().minimize(
              loss, var_list=self.head)
      ''') == [("var-list-filter", 7)]



@pytest.mark.parametrize("phase", [
    "tf.constant(FLAGS.discriminator_only)",
    "tf.logical_and(tf.constant(FLAGS.discriminator_only), "
    "tf.greater_equal(counter, 0))",
    "tf.less(counter, 10 ** 12)",
    "counter >= 0",
    "tf.equal(tf.mod(counter, 2), 0) | tf.constant(FLAGS.dis_only)",
])
def test_a_cond_that_does_not_repeat_with_the_counter_is_found(phase):
  assert _scan_of(whole_splits.gan(phase, flags=True)) == [
      ("var-list-filter", 28), ("var-list-filter", 29)]


@pytest.mark.parametrize("phase", [
    "tf.less(tf.mod(counter, 2), 1)",
    "tf.equal(counter % 2, 0)",
    "tf.equal(tf.math.floormod(counter, 5), 0)",
    # analytics-zoo's GANEstimator: a phase length of the estimator's own.
    "tf.less(tf.mod(counter, self.dis_steps + self.gen_steps), "
    "self.dis_steps)",
])
def test_a_cond_that_repeats_with_the_counter_stays_silent(phase):
  assert _scan_of(whole_splits.gan(phase, flags=True)) == []


_STYLES = textwrap.dedent('''\
    import tensorflow as tf
    def train(losses, sess, styles, steps):
      opt = tf.train.AdamOptimizer(1e-3)
      head = [v for v in tf.trainable_variables() if 'head' in v.name]
      ops = [opt.minimize(loss, var_list=head) if i != 0 else
             opt.minimize(loss) for i, loss in enumerate(losses)]
    ''')


@pytest.mark.parametrize("loop", [
    "for style_i in range(len(styles)):\n  sess.run(ops[style_i])\n",
    "for style_i in range(0, len(styles)):\n  sess.run(ops[style_i])\n",
    "for _ in range(steps):\n"
    "  for style_i in range(len(styles)):\n"
    "    sess.run(ops[style_i])\n",
])
def test_each_element_run_in_turn_stays_silent(loop):
  assert _scan_of(_STYLES + textwrap.indent(loop, "  ")) == []


@pytest.mark.parametrize("loop", [
    "for style_i in range(1, len(styles)):\n  sess.run(ops[style_i])\n",
    "for style_i in range(0, len(styles), 2):\n  sess.run(ops[style_i])\n",
    "for i in range(len(styles)):\n  print(styles[i])\n"
    "for _ in range(steps):\n  sess.run(ops[i])\n",
])
def test_some_elements_run_apart_are_found(loop):
  assert _scan_of(_STYLES + textwrap.indent(loop, "  ")) == [
      ("var-list-filter", 4)]


_NORMS = textwrap.dedent('''\
    import tensorflow as tf
    def build(loss, opt, frozen_names):
      grads_and_vars = opt.compute_gradients(loss)
      train, frozen, norms = [], [], []
      for gv in grads_and_vars:
        if gv[1].name in frozen_names:
          frozen.append(gv)
        else:
          train.append(gv)
      for g, v in train:
        norms.append(tf.norm(g))
      for g, v in frozen:
        norms.append(tf.norm(g))
    ''')


@pytest.mark.parametrize("tail", [
    "  return opt.apply_gradients(train), norms\n",
    "  gn = tf.add_n(norms)\n"
    "  train = [(g * 5.0 / gn, v) for g, v in train]\n"
    "  return opt.apply_gradients(train)\n",
    "  tf.summary.scalar('grad_norm', tf.add_n(norms))\n"
    "  return opt.apply_gradients(train)\n",
])
def test_a_joined_list_reduced_or_returned_beside_the_step_is_found(tail):
  assert _scan_of(_NORMS + tail) == [("var-list-filter", 9)]


_JOINED = textwrap.dedent('''\
    import tensorflow as tf
    def build(loss, opt, frozen_names):
      grads_and_vars = opt.compute_gradients(loss)
      train, frozen, joined = [], [], []
      for i, gv in enumerate(grads_and_vars):
        if gv[1].name in frozen_names:
          frozen.append((i, gv))
        else:
          train.append((i, gv))
      for pair in train:
        joined.append(pair)
      for pair in frozen:
        joined.append(pair)
    ''')


@pytest.mark.parametrize("tail", [
    "  _, pairs = zip(*sorted(joined))\n  return pairs\n",
    "  pairs = [gv for _, gv in sorted(joined)]\n"
    "  return opt.apply_gradients(pairs)\n",
    "  pairs = list(joined)\n  return opt.apply_gradients(pairs)\n",
])
def test_a_joined_list_carried_to_the_step_stays_silent(tail):
  assert _scan_of(_JOINED + tail) == []


def _reverse_chain(n):
  """The joined list copied through `n` names assigned in reverse order
  in a loop (each name is known only after the next), none given to the
  step: all are followed to find that none reaches it."""
  return (_NORMS + "  for _ in range(2):\n" + "".join(
      f"    a{k} = a{k - 1}\n" for k in range(n, 1, -1))
          + "    a1 = norms\n  return opt.apply_gradients(train)\n")


def test_a_long_chain_to_a_joined_list_costs_its_length():
  # Was quadratic: each pass over the function resolved one more name
  # (x12.4 in time for four times the chain at 674a6ad).
  small, large = (scanned.scan_work(_reverse_chain(n)) for n in (25, 100))
  assert large <= 6 * small, (small, large)


def _frozen_rows(added, call_in="FrozenRowsDense"):
  """masks._OWN_MASK with `added` after the mask is made, and its `call`
  moved to a subclass `Frozen2` when `call_in` names it."""
  code = masks._OWN_MASK.replace(
      "                                    trainable=False)\n",
      "                                    trainable=False)\n" + added, 1)
  if call_in != "FrozenRowsDense":
    code = code.replace(
        "        def call(self, inputs):\n",
        f"\n    class {call_in}(FrozenRowsDense):\n"
        "        def call(self, inputs):\n", 1)
  return code


def test_a_mask_a_base_class_gives_the_library_is_the_subclasss_too():
  added = ("            tf.add_to_collection(pruning.MASK_COLLECTION, "
           "self.mask)\n")
  assert scanned.in_project({
      "layers.py": _frozen_rows(added, "Frozen2"),
      "train.py": masks._UPDATING.replace("FrozenRowsDense", "Frozen2")
  }) == []


_LOGGED = '''

    def log_masks():
        tf.logging.info("%d frozen masks",
                        len(tf.get_collection('frozen_masks')))
    '''


def test_a_collection_read_back_only_to_be_logged_is_found():
  added = "            tf.add_to_collection('frozen_masks', self.mask)\n"
  assert scanned.in_project({
      "layers.py": _frozen_rows(added),
      "train.py": masks._UPDATING + _LOGGED}) == [
          ("stop-gradient-mix", "layers.py", 15)]
