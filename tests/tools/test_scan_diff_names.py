"""`tfpartial scan --diff` on files whose paths hold a space (8% of the
.py and .ipynb files of the 494 public repositories mirrored for the scan
corpus, in 56 of them: `Week 2/`, `Course 1 - Neural Networks/`): GNU
`patch` reads a header's name up to the first blank, so it found no file
to patch, while `git apply` took the diff. A tab now follows a name
that holds a space (or a vertical tab or a form feed); a name that holds
a tab, a newline or a carriage return is in double quotes, C-escaped,
as `git -c core.quotePath=false diff` writes it; any other name (a
quote, a backslash, DEL included: BusyBox's `patch` never removes
quotes) is bare, as before. The headers are the file system's bytes for
the path, the body the file's own encoding. Both tools then apply the
port, from the folder the scan ran in and from the one the note names,
and the ported file compiles.
"""

import pathlib
import shlex
import subprocess

import pytest

from tests.tools import scan_scripts
from tests.tools.test_scan_ports import _diff_from

HERE = pathlib.Path(__file__).parent


def _both_check(folder, diff):
  """`git apply --check` and `patch -p1 --dry-run` take `diff` in
  `folder`."""
  for command in (["git", "apply", "--check"],
                  ["patch", "-p1", "--dry-run"]):
    done = subprocess.run(command, input=diff, cwd=folder,
                          capture_output=True, check=False)
    assert done.returncode == 0, (command, done.stdout, done.stderr, diff)


def _applies(folder, diff, name):
  """Both tools check the diff in `folder`; `patch` applies it; the file
  at `name` compiles and imports tfpartial."""
  _both_check(folder, diff)
  subprocess.run(["patch", "-p1", "-s"], input=diff, cwd=folder,
                 check=True, capture_output=True)
  text = (folder / name).read_text()
  compile(text, name, "exec")
  assert "import tfpartial" in text


def _real_model():
  """nmasse/Short-term-plasticity-RNN's `model.py`, as the real-port test
  scans it (`test_scan_real_stp_rnn.py` says where it is from)."""
  text = (HERE / "scan_real" / "nmasse_stp_model.py.txt").read_text()
  return text.replace("import tensorflow as tf\n",
                      "import tensorflow.compat.v1 as tf\n")


@pytest.mark.parametrize("folder", [
    "Week 2", "Course 1 - RNNs/lab 3", "stp rnn/中文 目录"])
def test_a_real_file_under_a_folder_with_a_space_applies_with_both_tools(
    tmp_path, monkeypatch, folder):
  (tmp_path / folder).mkdir(parents=True)
  (tmp_path / folder / "model.py").write_text(_real_model())
  diff, _ = _diff_from(tmp_path, ["."], monkeypatch)
  name = f"{folder}/model.py"
  assert diff.startswith(f"--- a/{name}\t\n+++ b/{name}\t\n".encode()), (
      diff[:120])
  _applies(tmp_path, diff, name)


@pytest.mark.parametrize("name", [
    "my train.py", 'say "hi".py', 'say"hi".py', "back\\slash.py",
    "tab\there.py", "line\x7fend.py", "two  spaces .py"])
def test_a_file_name_with_a_space_a_quote_or_a_tab_applies(
    tmp_path, monkeypatch, name):
  (tmp_path / name).write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, _ = _diff_from(tmp_path, [name], monkeypatch)
  _applies(tmp_path, diff, name)


def test_from_outside_the_note_names_the_folder_as_a_shell_reads_it(
    tmp_path, monkeypatch):
  # The note's commands, pasted into a shell with the diff's file, apply
  # it in the folder the paths are relative to.
  here = tmp_path / "here"
  here.mkdir()
  for applier in ("git", "patch"):
    src = tmp_path / f"{applier} tree" / "my src"
    src.mkdir(parents=True)
    (src / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, err = _diff_from(here, ["../git tree/my src"], monkeypatch)
  (here / "port.diff").write_bytes(diff)
  note = err.split("apply it there, with ")[1]
  for applier, command in zip(("patch", "git"), note.split("` or `")):
    command = command.strip("`\n").replace("FILE", "port.diff").replace(
        "git tree", f"{applier} tree")
    assert shlex.split(command)[-2:] == ["<", "port.diff"], command
    subprocess.run(["sh", "-c", command], cwd=here, check=True,
                   capture_output=True)
    assert "import tfpartial" in (
        tmp_path / f"{applier} tree" / "my src" / "train.py").read_text()


def test_a_notebook_under_a_folder_with_a_space_applies(
    tmp_path, monkeypatch):
  import json  # pylint: disable=g-import-not-at-top
  folder = tmp_path / "Week 3 notebooks"
  folder.mkdir()
  lines = scan_scripts.TF1_GRADS_MASK_FTRL.splitlines(keepends=True)
  (folder / "lab.ipynb").write_text(json.dumps({
      "cells": [{"cell_type": "code", "execution_count": None,
                 "metadata": {}, "outputs": [], "source": lines}],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
  diff, _ = _diff_from(tmp_path, ["."], monkeypatch)
  assert diff.startswith(b"--- a/Week 3 notebooks/lab.ipynb\t\n"), diff[:80]
  _both_check(tmp_path, diff)


@pytest.mark.parametrize("folder", ["plain", "中文目录", "a-b_c.d"])
def test_a_name_without_a_space_or_a_quote_is_written_as_before(
    tmp_path, monkeypatch, folder):
  # Look-alikes: no tab, no quotes, non-ASCII kept as it is (readable;
  # both tools take it so).
  (tmp_path / folder).mkdir()
  (tmp_path / folder / "train.py").write_text(
      scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, _ = _diff_from(tmp_path, ["."], monkeypatch)
  name = f"{folder}/train.py"
  assert diff.startswith(f"--- a/{name}\n+++ b/{name}\n".encode()), (
      diff[:80])
  _applies(tmp_path, diff, name)


def test_the_names_cost_two_calls_per_ported_file(tmp_path, monkeypatch):
  # Each ported file's two header names are written once: the cost is
  # linear in the number of files in the diff (a name rebuilt for every
  # other file, or per line of the diff, fails this count).
  from tfpartial._tools.scan import _diff  # pylint: disable=g-import-not-at-top
  calls = []
  real = _diff.header_name

  def counted(name):
    calls.append(name)
    return real(name)

  monkeypatch.setattr(_diff, "header_name", counted)
  for i in range(6):
    (tmp_path / f"dir {i}").mkdir()
    (tmp_path / f"dir {i}" / "train.py").write_text(
        scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, _ = _diff_from(tmp_path, ["."], monkeypatch)
  assert diff.count(b"\n--- a/") + diff.startswith(b"--- a/") == 6
  assert len(calls) == 12, calls


def _busybox_finds(folder, diff):
  """BusyBox's `patch` (and older toybox) as the read simulated it: a
  header's name is the text after `--- `/`+++ ` up to the first tab (or
  the line's end), quotes kept, less its first folder."""
  for line in diff.split(b"\n"):
    if line.startswith((b"--- ", b"+++ ")):
      name = line[4:].split(b"\t")[0].split(b"/", 1)[1]
      if not (folder / name.decode("utf-8", "surrogateescape")).exists():
        return False
  return True


@pytest.mark.parametrize("name", [
    'say"hi".py', "back\\slash.py", "line\x7fend.py", "file\x1csep.py",
    'say "hi" now.py', "back\\sl ash.py", "v\x0btab.py", "form\x0cfeed.py"])
def test_a_quote_a_backslash_or_del_stays_bare_for_busybox(
    tmp_path, monkeypatch, name):
  # git apply and GNU patch read these names bare (a tab after one that
  # holds a space, a vertical tab or a form feed); BusyBox reads a name up
  # to its first tab and never removes quotes, so a quoted name is lost.
  (tmp_path / name).write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, _ = _diff_from(tmp_path, [name], monkeypatch)
  assert diff.split(b"\n")[0].split(b"\t")[0] == b"--- a/" + name.encode()
  assert _busybox_finds(tmp_path, diff), diff[:80]
  _applies(tmp_path, diff, name)


@pytest.mark.parametrize("name, header", [
    ("tab\there.py", '"a/tab\\there.py"'),
    ("new\nline.py", '"a/new\\nline.py"'),
    ("cr\rx.py", '"a/cr\\rx.py"'),
    ("tab\tand space.py", '"a/tab\\tand space.py"\t'),
    ('q"\t\\.py', '"a/q\\"\\t\\\\.py"')])
def test_a_tab_a_newline_or_a_cr_is_c_quoted(
    tmp_path, monkeypatch, name, header):
  # Bare, these end the name (or the line) for both tools; quoted and
  # C-escaped as git writes them, both read them whole.
  (tmp_path / name).write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, _ = _diff_from(tmp_path, [name], monkeypatch)
  assert diff.startswith(f"--- {header}\n".encode()), diff[:80]
  _both_check(tmp_path, diff)


@pytest.mark.parametrize("folder", ["café dir", "中文", "plain"])
def test_a_latin_1_file_under_a_non_ascii_folder_applies(
    tmp_path, monkeypatch, folder):
  # The headers are the file system's bytes for the path; the body stays
  # in the file's own encoding (a latin-1 `é` is one byte).
  (tmp_path / folder).mkdir()
  lines = scan_scripts.TF1_GRADS_MASK_FTRL.splitlines(keepends=True)
  text = "".join(["# -*- coding: latin-1 -*-\n", lines[0], "# café\n",
                  *lines[1:]])
  (tmp_path / folder / "train.py").write_bytes(text.encode("latin-1"))
  diff, _ = _diff_from(tmp_path, ["."], monkeypatch)
  head = f"--- a/{folder}/train.py".encode()
  assert diff.split(b"\n")[0].split(b"\t")[0] == head, diff[:80]
  assert b"\n # caf\xe9\n" in diff
  _both_check(tmp_path, diff)
  subprocess.run(["patch", "-p1", "-s"], input=diff, cwd=tmp_path,
                 check=True, capture_output=True)
  ported = (tmp_path / folder / "train.py").read_bytes().decode("latin-1")
  compile(ported, "train.py", "exec")
  assert "import tfpartial" in ported and "# café\n" in ported


def test_a_name_costs_one_escape_per_character_when_quoted():
  # Linear: a plain name is looked at once and not escaped; a quoted one
  # escapes each character once (4 times as long, 4 times the calls).
  from tfpartial._tools.scan import _diff  # pylint: disable=g-import-not-at-top
  calls = []
  real = _diff._escaped  # pylint: disable=protected-access

  def counted(char):
    calls.append(char)
    return real(char)

  with pytest.MonkeyPatch.context() as patched:
    patched.setattr(_diff, "_escaped", counted)
    counts = []
    for size in (50, 200):
      for body in ("x" * size, '"x' * (size // 2), "\tx" * (size // 2)):
        calls.clear()
        _diff.header_name("a/" + body)
        counts.append(len(calls))
  assert counts == [0, 0, 52, 0, 0, 202], counts
