"""`tfpartial scan` on a file committed with unresolved merge-conflict
markers (`<<<<<<< HEAD` ... `=======` ... `>>>>>>> sha`): Python refuses
the whole file, so every freeze in it was hidden. Such a file is read with
both sides of each conflict kept (or each side as its own version of the
file, `test_scan_mend38_conflicts`), line for line, and a note says so.
A freeze on either side is found; a look-alike (a GAN's two halves, a
restore of the front-end, a whole-model step) stays silent; a conflict
left open is still a file that does not parse. Synthetic
sources in the shape of real code (a CSRNet back-end fine-tuned on a
VGG front-end)."""

import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_TRAIN = """\
    import tensorflow as tf
    from csrnet import create_full_model, loss_funcs

    if __name__ == '__main__':
        with tf.Graph().as_default():
            images, labels = next_batch()
            model_b = create_full_model(images, 'b')
            loss_b = loss_funcs(model_b, labels)
            step = tf.train.get_or_create_global_step()
            {filtered}
            optimizer = tf.train.AdamOptimizer(learning_rate=1e-6)
    {conflict}
        with tf.Session() as sess:
            for _ in range(10):
                sess.run(op)
    """

_MODEL = """\
    import tensorflow as tf
    from tensorflow.keras import applications, layers, models

    def create_full_model(images, c='a'):
        base = applications.VGG16(input_tensor=images, weights='imagenet',
                                  include_top=False)
        x = layers.Conv2D(1, 3, dilation_rate=2, name='dil_1')(base.output)
        return models.Model(images, x)

    def loss_funcs(b, labels):
        return tf.losses.mean_squared_error(b.output, labels)
    """

_FILTER = ("back_end = [v for v in tf.trainable_variables() "
           "if v.name.startswith('dil')]")
_ALL = "back_end = tf.trainable_variables()"
_FILTERED_STEP = "op = optimizer.minimize(loss_b, step, var_list=back_end)"
_WHOLE_STEP = "op = optimizer.minimize(loss_b, step)"


def _conflict(first, other, base=None):
  lines = ["<<<<<<< HEAD", f"        {first}"]
  if base is not None:
    lines += ["||||||| merged common ancestors", f"        {base}"]
  lines += ["=======", f"        {other}",
            ">>>>>>> 7952acaa234ba84ddc616cc82e9b3560c88ae96c"]
  return "\n".join(lines)


def _scanned(first, other, filtered=_FILTER, base=None, model=_MODEL):
  train = textwrap.dedent(_TRAIN).format(
      filtered=filtered, conflict=_conflict(first, other, base))
  sources = [_files.Source("train.py", train),
             _files.Source("csrnet.py", textwrap.dedent(model))]
  return _scan.scan(sources)


def _found(scan):
  return [(f.idiom, f.path, f.line) for f in scan.findings]


def test_a_filter_on_the_first_side_is_found_at_its_own_line():
  scan = _scanned(_FILTERED_STEP, _WHOLE_STEP)
  assert _found(scan) == [("var-list-filter", "train.py", 10)]
  assert not scan.unread


def test_the_note_names_the_conflict_and_what_was_read():
  scan = _scanned(_FILTERED_STEP, _WHOLE_STEP)
  assert scan.partly == [
      "train.py:12: unresolved merge conflicts at lines 12-16: read twice, "
      "on the first side of each and on the second, the findings of either "
      "reported (the file cannot run as committed); the rest is scanned"]


def test_a_diff3_base_is_not_read():
  scan = _scanned(_FILTERED_STEP, _WHOLE_STEP, base=_WHOLE_STEP)
  assert _found(scan) == [("var-list-filter", "train.py", 10)]


def test_a_filter_on_the_other_side_only_is_found():
  assert _found(_scanned(_WHOLE_STEP, _FILTERED_STEP)) == [
      ("var-list-filter", "train.py", 10)]


def test_a_first_side_that_trains_every_variable_is_silent():
  assert _found(_scanned(_FILTERED_STEP, _WHOLE_STEP, filtered=_ALL)) == []


_GAN = """\
    import tensorflow as tf

    def create_full_model(images, name):
        with tf.variable_scope('gen'):
            x = tf.layers.conv2d(images, 64, 3)
        with tf.variable_scope('dis'):
            return tf.layers.conv2d(x, 1, 3)

    def loss_funcs(model, labels):
        return tf.reduce_mean(tf.square(model - labels))
    """

_GAN_STEPS = (
    "g_op = optimizer.minimize(loss_b, var_list=[v for v in "
    "tf.trainable_variables() if v.name.startswith('gen')]); "
    "op = optimizer.minimize(-loss_b, var_list=[v for v in "
    "tf.trainable_variables() if v.name.startswith('dis')])")


def test_a_gans_two_halves_on_the_first_side_are_silent():
  scan = _scanned(_GAN_STEPS, _WHOLE_STEP, filtered=_ALL, model=_GAN)
  assert _found(scan) == []


_RESTORE = ("op = optimizer.minimize(loss_b, step); saver = "
            "tf.train.Saver([v for v in tf.global_variables() "
            "if v.name.startswith('block')])")


def test_a_restore_of_the_front_end_on_the_first_side_is_silent():
  assert _found(_scanned(_RESTORE, _FILTERED_STEP, filtered=_ALL)) == []


def test_a_conflict_left_open_is_read_as_before_without_its_blocks():
  train = textwrap.dedent(_TRAIN).format(
      filtered=_FILTER, conflict="<<<<<<< HEAD\n        " + _FILTERED_STEP)
  scan = _scan.scan([_files.Source("train.py", train),
                     _files.Source("csrnet.py", textwrap.dedent(_MODEL))])
  assert scan.findings == []
  assert [line.split(": they")[0] for line in scan.partly] == [
      "train.py:12: skipped lines 12-17"]


@pytest.mark.parametrize("text", [
    # Python 2 files (they do not parse as written): a docstring's
    # underline, a conflict shown in a docstring, markers in comments.
    '"""Usage\n=======\n"""\nprint "x"\n',
    '"""Usage\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n"""\nprint "x"\n',
    'print "x"\n# <<<<<<< HEAD\n# =======\n# >>>>>>> abc\n',
])
def test_marker_look_alikes_are_left_as_they_are(text):
  step = "import tensorflow as tf\nop = tf.train.AdamOptimizer().minimize(l)\n"
  scan = _scan.scan([_files.Source("t.py", text + step)])
  assert (scan.findings, scan.unread, scan.partly) == ([], [], [])
