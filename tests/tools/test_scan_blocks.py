"""`tfpartial scan` reads a file that Python refuses for one top-level
block without that block (`_blocks`): the other blocks' freezes are found
at their own lines, and the note says which lines were left out."""

import io
import json

from tfpartial._tools.scan import _blocks
from tfpartial._tools.scan import _main

_FREEZE = ("def train(opt, x):\n"
           "  loss = tf.reduce_sum(x * x)\n"
           "  mask = tf.constant([0.0, 1.0, 1.0])\n"
           "  gvs = opt.compute_gradients(loss)\n"
           "  return opt.apply_gradients([(g * mask, v) for g, v in gvs])\n")


def _json(tmp_path):
  out, err = io.StringIO(), io.StringIO()
  status = _main.run([str(tmp_path)], "json", False, out, err)
  return status, json.loads(out.getvalue()), err.getvalue()


def _places(found):
  return [(f["line"], f["idiom"]) for f in found]


def test_one_broken_function_among_good_ones_keeps_their_freezes(tmp_path):
  # A stray indent in one function (a half-edited paste) must not hide the
  # freezes of the functions before and after it.
  (tmp_path / "train.py").write_text(
      "import tensorflow as tf\n\n" + _FREEZE + "\n\n"
      "def evaluate(sess, acc):\n"
      "  total = 0\n"
      "    total += sess.run(acc)\n"
      "  return total\n\n\n"
      "@tf.function\n"
      "def step(opt, x, frozen):\n"
      "  with tf.GradientTape() as tape:\n"
      "    loss = tf.reduce_sum(x * x)\n"
      "  grads = tape.gradient(loss, [x])\n"
      "  grads = [g * frozen for g in grads]\n"
      "  opt.apply_gradients(zip(grads, [x]))\n")
  status, found, err = _json(tmp_path)
  assert status == 1, err
  assert _places(found) == [(7, "grads-mask"), (21, "grads-mask")], found
  assert (f"{tmp_path / 'train.py'}:12: skipped lines 10-15: they do not "
          "parse (unexpected indent); the rest is scanned") in err, err


def test_python_2_with_tabs_that_match_no_level_keeps_the_rest(tmp_path):
  # Python 2 read a tab as the next multiple of 8 columns; a line that
  # unindents to no level then fails in Python 2 as well (a function
  # edited in two editors), and only that function is left out.
  (tmp_path / "finetune.py").write_text(
      "import tensorflow as tf\n\n"
      "def load(path):\n"
      "\t  weights = np.load(path).item()\n"
      "\t  print type(weights)\n"
      "\t  for name in weights:\n"
      "\t  \tprint name\n"
      "\t    if name:\n"
      "\t      pass\n\n"
      "class Trainer(object):\n"
      "\tdef __init__(self, opt, loss):\n"
      "\t    train_layers = ['fc8']\n"
      "\t    var_list = [v for v in tf.trainable_variables()\n"
      "\t\t\tif v.name.split('/')[0] in train_layers]\n"
      "\t    print 'training', var_list\n"
      "\t    self.op = opt.minimize(loss, var_list=var_list)\n")
  status, found, err = _json(tmp_path)
  assert status == 1, err
  assert _places(found) == [(14, "var-list-filter")], found
  assert "finetune.py:8: skipped lines 3-10: they do not parse" in err, err


def test_a_recovered_file_without_a_freeze_stays_silent(tmp_path):
  (tmp_path / "train.py").write_text(
      "import tensorflow as tf\n\n"
      "def evaluate(sess, acc):\n"
      "  total = 0\n"
      "    total += sess.run(acc)\n"
      "  return total\n\n"
      "def train(opt, loss):\n"
      "  gvs = opt.compute_gradients(loss)\n"
      "  return opt.apply_gradients(gvs)\n")
  status, found, err = _json(tmp_path)
  assert (status, found) == (0, []), err
  assert "train.py:5: skipped lines 3-7: they do not parse" in err, err


def test_a_file_broken_beyond_recovery_is_skipped_as_before(tmp_path):
  # One block that is the whole file (or more broken blocks than a few):
  # nothing is left worth reading, and the file is reported unread.
  (tmp_path / "bad.py").write_text(
      "def train(opt, loss:\n"
      "  return opt.minimize(loss)\n")
  (tmp_path / "many.py").write_text("".join(
      f"def f{n}(:\n  pass\n" for n in range(5)) + "minimize = 1\n" * 20)
  (tmp_path / "new.py").write_text("x = 1\n")
  out, err = io.StringIO(), io.StringIO()
  assert _main.run([str(tmp_path)], "text", False, out, err) == 0
  assert f"{tmp_path / 'bad.py'}:1: skipped: does not parse (" in (
      err.getvalue())
  assert f"{tmp_path / 'many.py'}:1: skipped: does not parse (" in (
      err.getvalue())
  assert "1 file(s)" in err.getvalue()


def test_the_blocks_are_split_at_top_level_statements():
  text = ("@dec\ndef f(:\n  pass\nelse_x = 1\nif a:\n  b = (\n  1)\n"
          "else:\n  c = 2\n")
  tree, dropped = _blocks.kept(text)
  assert [node.lineno for node in tree.body] == [4, 5]
  assert dropped == [(1, 3, 2, "invalid syntax")]



def _after_a_banner(quote, closing):
  # The banner, the freeze, then a docstring in the same quotes (which a
  # banner left open would close).
  return ("import tensorflow as tf\n\n"
          f"{quote}\n"
          "CUSTOM LAYERS, CLASSES, AND OBJECTS\n"
          f"{closing}\n\n" + _FREEZE + "\n\n"
          "def evaluate(sess, acc):\n"
          f"  {quote}Accuracy on the test set.{quote}\n"
          "  return sess.run(acc)\n")


def test_a_banner_closed_by_four_quotes_keeps_the_rest(tmp_path):
  # A banner string at column 0 closed by one quote too many: the stray
  # quote opens a string Python refuses, and blocks cut inside the banner
  # leave it open; the banner is left out whole, and the freeze after it
  # is found.
  (tmp_path / "main.py").write_text(_after_a_banner("'''", "''''"))
  (tmp_path / "other.py").write_text(_after_a_banner('"""', '""""'))
  status, found, err = _json(tmp_path)
  assert status == 1, err
  assert [(f["path"].rsplit("/", 1)[-1], f["line"], f["idiom"])
          for f in found] == [("main.py", 11, "grads-mask"),
                              ("other.py", 11, "grads-mask")], found
  assert "main.py:5: skipped lines 3-6: they do not parse" in err, err
  assert "other.py:5: skipped lines 3-6: they do not parse" in err, err


def test_a_banner_closed_as_written_is_read_as_before():
  # The twin: a banner closed by three quotes parses, nothing left out.
  tree, dropped = _blocks.kept(_after_a_banner("'''", "'''"))
  assert dropped == [] and len(tree.body) == 4
