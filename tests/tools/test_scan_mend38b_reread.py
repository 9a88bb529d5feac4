"""`tfpartial scan` after the second review of the conflict reader and the
pruning library's mask gate: a conflict on a docstring's first line is a
conflict (only one string holding a conflict whole is text); both sides
of a conflict are kept only when they bind no name in common, else the
second side would hide the first (each side is read as its own version
then); the note names the outermost conflicts in one pass however many
there are; a mask counts as one the library recomputes only in a
collection a `Pruning` reads (the library's, or one the project reads
back beside the library or in a `Pruning` subclass), and only the mask of
the class that adds it. Reduced from the reviewer's probes."""

import textwrap

import pytest

import scanned
import test_scan_mend38_masks as masks

from tfpartial._tools.scan import _conflicts
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _reread
from tfpartial._tools.scan import _scan

_TWICE = ("read twice, on the first side of each and on the second, the "
          "findings of either reported (the file cannot run as committed); "
          "the rest is scanned")


def _scan_of(text):
  scan = _scan.scan([_files.Source("train.py", textwrap.dedent(text))])
  return [(f.idiom, f.line) for f in scan.findings], scan.partly


def test_a_conflict_on_a_docstrings_first_line_is_read():
  found, partly = _scan_of('''\
      import tensorflow as tf


      def step(model, loss, opt):
      <<<<<<< HEAD
        """Train the head only.
      =======
        """Train the head only (frozen body).
      >>>>>>> feature
        """
        head = [v for v in model.trainable_variables if "head" in v.name]
        return opt.minimize(loss, var_list=head)
      ''')
  assert found == [("var-list-filter", 11)]
  assert partly == [
      f"train.py:5: unresolved merge conflicts at lines 5-9: {_TWICE}"]


def test_a_docstring_showing_a_conflict_is_no_conflict():
  found, partly = _scan_of('''\
      """Resolve merge conflicts in config files.

      <<<<<<< HEAD
      learning_rate = 0.1
      =======
      learning_rate = 0.2
      >>>>>>> feature
      """
      import tensorflow as tf
      head = [v for v in tf.trainable_variables() if "head" in v.name]
      op = tf.train.AdamOptimizer().minimize(loss, var_list=head)
      ''')
  assert found == [("var-list-filter", 10)]
  assert partly == []


def test_a_function_defined_on_both_sides_is_read_on_each():
  found, partly = _scan_of("""\
      import tensorflow as tf

      <<<<<<< HEAD
      def head_vars(model):
        return [v for v in model.trainable_variables if "head" in v.name]
      =======
      def head_vars(model):
        return model.trainable_variables
      >>>>>>> feature


      def step(model, loss, opt):
        return opt.minimize(loss, var_list=head_vars(model))
      """)
  assert found == [("var-list-filter", 5)]
  assert partly == [
      f"train.py:3: unresolved merge conflicts at lines 3-9: {_TWICE}"]


def test_a_name_assigned_on_both_sides_is_read_on_each():
  found, partly = _scan_of("""\
      import tensorflow as tf

      model = tf.keras.Sequential()
      <<<<<<< HEAD
      head = [v for v in model.trainable_variables if "head" in v.name]
      =======
      head = model.trainable_variables
      >>>>>>> feature
      train_op = tf.train.AdamOptimizer().minimize(loss, var_list=head)
      """)
  assert found == [("var-list-filter", 5)]
  assert partly == [
      f"train.py:4: unresolved merge conflicts at lines 4-8: {_TWICE}"]


def test_sides_binding_other_names_are_both_kept():
  found, partly = _scan_of("""\
      import tensorflow as tf

      model = tf.keras.Sequential()
      <<<<<<< HEAD
      rate = 1e-3
      =======
      head = [v for v in model.trainable_variables if "head" in v.name]
      >>>>>>> feature
      train_op = tf.train.AdamOptimizer().minimize(loss, var_list=head)
      """)
  assert found == [("var-list-filter", 7)]
  assert partly == [
      "train.py:4: unresolved merge conflicts at lines 4-8: read with both "
      "sides of each kept (the file cannot run as committed); the rest is "
      "scanned"]


def _flat_conflicts(n):
  return "".join(f"<<<<<<< HEAD\na{i} = 1\n=======\na{i} = 2\n>>>>>>> x\n"
                 for i in range(n))


def _nested_conflicts(n):
  """`n` conflicts, each holding one more on its first side."""
  return "".join(f"<<<<<<< HEAD\n<<<<<<< b\na{i} = 1\n=======\na{i} = 3\n"
                 f">>>>>>> b\n=======\na{i} = 2\n>>>>>>> x\n"
                 for i in range(n))


def _note_work(conflicts, n):
  text = "x = 1\n" + conflicts(n)
  return [scanned.calls_made(lambda: _reread.read(text, "t.py"), where)[0]
          for where in ("_conflicts.py", "_reread.py")]


@pytest.mark.parametrize("conflicts", [_flat_conflicts, _nested_conflicts],
                         ids=["flat", "nested"])
def test_the_note_on_many_conflicts_costs_the_same_per_conflict(conflicts):
  small, large = _note_work(conflicts, 150), _note_work(conflicts, 600)
  for at_n, at_4n in zip(small, large):
    assert at_4n < 5 * at_n, (small, large)


def test_the_note_names_the_outermost_conflict_only():
  found, partly = _scan_of("""\
      import tensorflow as tf
      <<<<<<< a
      <<<<<<< b
      head = [v for v in model.trainable_variables if "head" in v.name]
      =======
      head = model.trainable_variables
      >>>>>>> b
      =======
      head = model.trainable_variables[1:]
      >>>>>>> a
      train_op = tf.train.AdamOptimizer().minimize(loss, var_list=head)
      """)
  assert partly == [
      f"train.py:2: unresolved merge conflicts at lines 2-10: {_TWICE}"]


def _own_mask(added):
  return masks._OWN_MASK.replace(
      "                                    trainable=False)\n",
      "                                    trainable=False)\n" + added, 1)


def test_a_mask_put_in_a_collection_no_pruning_reads_is_found():
  added = "            tf.add_to_collection('frozen_masks', self.mask)\n"
  assert scanned.in_project({"layers.py": _own_mask(added),
                             "train.py": masks._UPDATING}) == [
                                 ("stop-gradient-mix", "layers.py", 15)]


def test_a_mask_put_in_the_librarys_collection_is_silent():
  added = ("            tf.add_to_collection(pruning.MASK_COLLECTION, "
           "self.mask)\n")
  assert scanned.in_project({"layers.py": _own_mask(added),
                             "train.py": masks._UPDATING}) == []


@pytest.mark.parametrize("reader", [
    "def my_masks():\n    return tf.get_collection('frozen_masks')\n\n\n"
    "def pruner(spec):\n    return pruning.Pruning(spec, masks=my_masks())\n",
    "class MyPruning(Pruning):\n    def update(self):\n"
    "        for m in tf.get_collection('frozen_masks'):\n"
    "            m.assign(m)\n"])
def test_a_collection_read_back_for_the_library_is_one_it_recomputes(
    reader):
  added = "            tf.add_to_collection('frozen_masks', self.mask)\n"
  where = "layers.py" if reader.startswith("def") else "prune.py"
  files = {"layers.py": _own_mask(added), "train.py": masks._UPDATING}
  if where == "prune.py":
    files[where] = ("import tensorflow as tf\nfrom base import Pruning\n\n"
                    + reader)
  else:
    files[where] = files[where] + "\n\n    " + reader.replace(
        "\n", "\n    ")
  assert scanned.in_project(files) == []


def test_another_classs_mask_in_the_collection_is_not_this_one():
  other = ("\n\n    class Other(object):\n        def __init__(self):\n"
           "            self.mask = tf.ones([4, 4])\n"
           "            tf.add_to_collection(pruning.MASK_COLLECTION, "
           "self.mask)\n")
  assert scanned.in_project({"layers.py": masks._OWN_MASK + other,
                             "train.py": masks._UPDATING}) == [
                                 ("stop-gradient-mix", "layers.py", 14)]
