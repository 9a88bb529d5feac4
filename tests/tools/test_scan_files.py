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


def test_python_2_is_reported_and_skipped(tmp_path):
  (tmp_path / "old.py").write_text(
      "print 'training'\ntrain_op = optimizer.minimize(loss)\n")
  (tmp_path / "new.py").write_text("x = 1\n")
  status, _, err = _run([str(tmp_path)])
  assert status == 0
  assert f"{tmp_path / 'old.py'}:1: skipped: does not parse" in err
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
