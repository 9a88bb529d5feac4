"""`tfpartial scan` reads safely: never imports or runs what it scans,
skips what does not parse, and survives pathological files."""

import io
import json
import os

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _main
from tests.tools import scan_scripts


def _run(paths):
  out, err = io.StringIO(), io.StringIO()
  return _main.run(paths, "text", False, out, err), out.getvalue(), \
      err.getvalue()


def test_what_is_scanned_is_never_run(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "evil.py").write_text(scan_scripts.SIDE_EFFECTS)
  status, out, _ = _run(["evil.py"])
  assert status == 1 and ": grads-mask: " in out
  assert sorted(os.listdir(tmp_path)) == ["evil.py"]


def test_python_2_is_read_and_ported_by_hand(tmp_path):
  (tmp_path / "old.py").write_text(
      "import tensorflow as tf\nprint 'training', 3,\n"
      "gvs = opt.compute_gradients(loss)\n"
      "train_op = opt.apply_gradients([(g * mask, v) for g, v in gvs])\n"
      "try:\n  pass\nexcept IOError, e:\n  print >>sys.stderr, e\n")
  out, err = io.StringIO(), io.StringIO()
  status = _main.run([str(tmp_path)], "json", False, out, err)
  assert status == 1, err.getvalue()
  found = json.loads(out.getvalue())
  assert [(f["line"], f["idiom"]) for f in found] == [(4, "grads-mask")]
  assert found[0]["by_hand"].startswith("a Python 2 file"), found
  assert not found[0]["mechanical"]


def test_a_file_that_does_not_parse_is_reported_and_skipped(tmp_path):
  (tmp_path / "bad.py").write_text(
      "print 'training'\ndef (:\ntrain_op = optimizer.minimize(loss)\n")
  (tmp_path / "new.py").write_text("x = 1\n")
  status, _, err = _run([str(tmp_path)])
  assert status == 0
  assert f"{tmp_path / 'bad.py'}:1: skipped: does not parse" in err
  assert "1 file(s)" in err


def test_deep_nesting_and_huge_files_are_skipped(tmp_path):
  (tmp_path / "deep.py").write_text("x = " + "(" * 5000 + ")" * 5000 +
                                    "\nstop_gradient\n")
  (tmp_path / "huge.py").write_text("# apply_gradients\n" * (
      _files.MAX_BYTES // 18 + 10))
  (tmp_path / "ok.py").write_text("x = 1\n")
  status, _, err = _run([str(tmp_path)])
  assert status == 0
  assert "deep.py" in err and "huge.py: skipped: larger than" in err


def test_encodings_binary_fifos_and_links_out_of_the_tree(tmp_path):
  (tmp_path / "latin.py").write_bytes(
      b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
  (tmp_path / "broken.py").write_bytes(b"name = '\xff\xfe'\n")
  (tmp_path / "blob.py").write_bytes(b"\x00" * 10)
  os.mkfifo(tmp_path / "pipe.py")
  outside = tmp_path.parent / f"{tmp_path.name}-outside"
  outside.mkdir()
  (outside / "secret.py").write_text(scan_scripts.SIDE_EFFECTS)
  (tmp_path / "link").symlink_to(outside)
  (tmp_path / "link.py").symlink_to(outside / "secret.py")
  assert sorted(os.path.basename(p) for p in _files.walk(str(tmp_path))) == [
      "blob.py", "broken.py", "latin.py", "pipe.py"]
  status, _, err = _run([str(tmp_path)])
  assert status == 0, err
  assert "blob.py: skipped: a binary file" in err
  assert "broken.py: skipped: not text" in err
  assert "pipe.py: skipped: not a regular file" in err
  assert "secret" not in err


def test_notebook_code_cells_are_scanned_with_their_cell(tmp_path):
  cells = [
      {"cell_type": "markdown", "source": ["# stop_gradient\n"]},
      {"cell_type": "code", "source": ["%matplotlib inline\n",
                                       "x = tf.Variable([1.0, 2.0])\n"]},
      {"cell_type": "code", "source": [
          "mask = tf.constant([0.0, 1.0])\n",
          "used = mask * x + (1 - mask) * tf.stop_gradient(x)\n"]},
  ]
  (tmp_path / "n.ipynb").write_text(json.dumps({"cells": cells}))
  (tmp_path / "bad.ipynb").write_text("{not json")
  status, out, err = _run([str(tmp_path)])
  assert status == 1
  assert out.startswith(f"{tmp_path / 'n.ipynb'}:2:8: stop-gradient-mix: "
                        "(cell 3) "), out
  assert "bad.ipynb: skipped: not a notebook" in err


def test_link_loops_are_reported_and_skipped(tmp_path):
  (tmp_path / "real").mkdir()
  (tmp_path / "real" / "train.py").write_text(scan_scripts.SIDE_EFFECTS)
  (tmp_path / "x.py").symlink_to("x.py")
  (tmp_path / "a.py").symlink_to("b.py")
  (tmp_path / "b.py").symlink_to("a.py")
  (tmp_path / "real" / "up").symlink_to("..")
  (tmp_path / "real" / "self").symlink_to(".")
  status, out, err = _run([str(tmp_path)])
  assert status == 1 and out.count(": grads-mask: ") == 1, out
  for link in ("x.py", "a.py", "b.py"):
    assert f"{tmp_path / link}: skipped: a symbolic link loop\n" in err
  for link in ("real/up", "real/self"):
    assert f"{tmp_path / link}: skipped: a symbolic link loop (it leads " \
           "back to a folder that holds it)\n" in err
  assert "Traceback" not in err


def test_a_loop_named_on_the_command_line_is_reported(tmp_path):
  (tmp_path / "x.py").symlink_to("x.py")
  (tmp_path / "ok.py").write_text(scan_scripts.SIDE_EFFECTS)
  status, _, err = _run([str(tmp_path / "x.py"), str(tmp_path / "ok.py")])
  assert status == 1
  assert f"{tmp_path / 'x.py'}: skipped: a symbolic link loop\n" in err


def test_a_file_reached_twice_is_scanned_once_by_its_own_name(tmp_path,
                                                             monkeypatch):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "src").mkdir()
  (tmp_path / "src" / "train.py").write_text(scan_scripts.SIDE_EFFECTS)
  (tmp_path / "a_link").symlink_to("src")  # Walked first, by name.
  (tmp_path / "alias.py").symlink_to("src/train.py")
  os.link(tmp_path / "src" / "train.py", tmp_path / "hard.py")
  for paths in (["."], ["src", "."], ["src/train.py", "./src/train.py",
                                      "src"]):
    status, out, err = _run(paths)
    assert status == 1, err
    assert out.count(": grads-mask: ") == 1, (paths, out)
    assert out.startswith(("src/train.py:", "./hard.py:", "./src/train.py",
                           "hard.py")), out
    assert "a_link" not in out + err and "alias" not in out + err


def test_the_walk_reads_real_files_before_links(tmp_path):
  (tmp_path / "src").mkdir()
  (tmp_path / "src" / "m.py").write_text("x = 1\n")
  (tmp_path / "a_link").symlink_to("src")
  (tmp_path / ".hidden").mkdir()
  (tmp_path / ".hidden" / "h.py").write_text("x = 1\n")
  (tmp_path / "b_link").symlink_to(".hidden")  # Inside, not yet walked.
  assert [os.path.relpath(p, tmp_path) for p in _files.walk(str(tmp_path))] \
      == ["src/m.py", "b_link/h.py"]
