"""`tfpartial scan` in CI, run as users run it (`python -m tfpartial
scan`): inline suppressions, a baseline of known findings, `--exit-zero`,
and the pre-commit hook."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import tfpartial
from tfpartial import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]

HEAD = """\
import tensorflow.compat.v1 as tf

optimizer = tf.train.AdamOptimizer(0.1)
mask = tf.constant([0.0, 1.0])
gv = optimizer.compute_gradients(loss)
"""
# One grads-mask per line that has this.
STEP = "optimizer.apply_gradients([(g * mask, v) for g, v in gv])"


def _scan(*arguments, cwd):
  """`python -m tfpartial scan ARGUMENTS` in `cwd`."""
  return subprocess.run(
      [sys.executable, "-m", "tfpartial", "scan", *map(str, arguments)],
      cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(name="scan")
def _in_process(monkeypatch, capsys):
  """The same command line run in this process (no interpreter to start),
  for the tests that run it many times."""

  def scan(*arguments, cwd):
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    status = cli.main(["scan", *map(str, arguments)])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(arguments, status, out, err)

  return scan


def _lines(out):
  """(line, idiom) of each finding in a text report."""
  return [(int(line), idiom) for line, idiom in
          re.findall(r"^[^\s:]+:(\d+):\d+: ([\w-]+): ", out, re.M)]


def test_inline_suppressions(tmp_path):
  (tmp_path / "train.py").write_text(HEAD + "\n".join([
      f"a = {STEP}  # tfpartial: ignore[grads-mask]",
      f"b = {STEP}  # tfpartial: ignore",
      f"c = {STEP}  # tfpartial: ignore[write-back]",
      f"d = {STEP}",
      f"e = {STEP}  # TFPARTIAL: IGNORE[weight-remask, grads-mask]",
      f"s = '# tfpartial: ignore'; f = {STEP}",
  ]) + "\n")
  result = _scan("train.py", cwd=tmp_path)
  assert result.returncode == 1, result.stderr
  assert _lines(result.stdout) == [(8, "grads-mask"), (9, "grads-mask"),
                                   (11, "grads-mask")]
  assert result.stderr.splitlines() == [
      "tfpartial scan: train.py:8: `# tfpartial: ignore[write-back]` does "
      "not name grads-mask, found on this line",
      "tfpartial scan: 3 finding(s) in 1 file(s); 3 suppressed by "
      "`# tfpartial: ignore`"]


def test_inline_suppressions_in_a_notebook(tmp_path):
  cells = [HEAD, f"x = {STEP}\ny = {STEP}  # tfpartial: ignore[grads-mask]\n"]
  (tmp_path / "n.ipynb").write_text(json.dumps({"cells": [
      {"cell_type": "code", "source": cell} for cell in cells]}))
  result = _scan("n.ipynb", cwd=tmp_path)
  assert result.returncode == 1, result.stderr
  assert result.stdout.startswith("n.ipynb:1:33: grads-mask: (cell 2) ")
  assert _lines(result.stdout) == [(1, "grads-mask")]
  assert "1 suppressed" in result.stderr


def _project(folder, *steps):
  (folder / "train.py").write_text(HEAD + "".join(
      f"{name} = {STEP}\n" for name in steps))


def test_a_baseline_fails_ci_only_on_new_findings(tmp_path, scan):
  _project(tmp_path, "old")
  written = scan("--write-baseline", "known.json", ".", cwd=tmp_path)
  assert (written.returncode, written.stdout) == (0, ""), written.stderr
  assert written.stderr == ("tfpartial scan: wrote 1 finding(s) to "
                            "known.json\n")
  (entry,) = json.loads((tmp_path / "known.json").read_text())
  # As the scan names it; compared from the current folder.
  assert (entry["path"], entry["idiom"]) == ("./train.py", "grads-mask")
  assert re.fullmatch(r"[0-9a-f]{16}", entry["fingerprint"])

  same = scan("--baseline", "known.json", ".", cwd=tmp_path)
  assert (same.returncode, same.stdout) == (0, ""), same.stderr
  assert same.stderr == ("tfpartial scan: 0 finding(s) in 1 file(s); 1 "
                         "more known from the baseline\n")

  # Lines moved above it (and its spaces and comment changed): still known.
  text = (tmp_path / "train.py").read_text()
  (tmp_path / "train.py").write_text(
      "# A new header.\n\n\n" + text.replace(
          "old = optimizer", "old  =  optimizer").replace(
              "gv])\n", "gv])  # reviewed\n"))
  moved = scan("--baseline", "known.json", ".", cwd=tmp_path)
  assert (moved.returncode, moved.stdout) == (0, ""), moved.stderr

  # A new finding, and a copy of the known line: both new.
  with open(tmp_path / "train.py", "a") as file:
    file.write(f"new = {STEP}\nold = {STEP}\n")
  new = scan("--baseline", "known.json", ".", cwd=tmp_path)
  assert new.returncode == 1
  assert _lines(new.stdout) == [(10, "grads-mask"), (11, "grads-mask")]
  assert new.stderr.endswith("2 finding(s) in 1 file(s); 1 more known from "
                             "the baseline\n")


def test_the_json_report_serves_as_a_baseline_and_sarif_has_its_prints(
    tmp_path, scan):
  _project(tmp_path, "a", "b")
  report = scan("--format", "json", "train.py", cwd=tmp_path)
  (tmp_path / "report.json").write_text(report.stdout)
  prints = [item["fingerprint"] for item in json.loads(report.stdout)]
  assert len(set(prints)) == 2
  sarif = json.loads(scan("--format", "sarif", "train.py",
                          cwd=tmp_path).stdout)
  assert [r["partialFingerprints"]["tfpartialScan/v1"]
          for r in sarif["runs"][0]["results"]] == prints
  assert sarif["runs"][0]["tool"]["driver"]["version"] == (
      tfpartial.__version__)
  known = scan("--baseline", "report.json", "train.py", cwd=tmp_path)
  assert (known.returncode, known.stdout) == (0, ""), known.stderr
  # One fixed: the baseline says one of its findings is gone.
  _project(tmp_path, "a")
  fixed = scan("--baseline", "report.json", "train.py", cwd=tmp_path)
  assert fixed.returncode == 0
  assert "(1 of its findings no longer found)" in fixed.stderr


def test_exit_zero(tmp_path, scan):
  _project(tmp_path, "a")
  found = _scan("--exit-zero", "train.py", cwd=tmp_path)
  assert found.returncode == 0 and _lines(found.stdout) == [
      (6, "grads-mask")]
  missing = scan("--exit-zero", "nope.py", cwd=tmp_path)
  assert missing.returncode == 2
  (tmp_path / "bad.json").write_text("{")
  bad = scan("--exit-zero", "--baseline", "bad.json", "train.py",
             cwd=tmp_path)
  assert bad.returncode == 2


def _bad_baselines(folder):
  (folder / "folder.json").mkdir()
  os.mkfifo(folder / "fifo.json")
  (folder / "large.json").write_bytes(b" " * (16 * 2**20 + 1))
  (folder / "text.json").write_text("known findings\n")
  (folder / "latin.json").write_bytes(b'[{"path": "\xe9"}]')
  (folder / "object.json").write_text('{"findings": []}')
  (folder / "old.json").write_text('[{"path": "train.py", "idiom": '
                                   '"grads-mask", "line": 6}]')
  (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
  (folder / "many.json").write_text("[" + ",".join(["{}"] * 100_001) + "]")
  return {
      "missing.json": "No such file or directory",
      "folder.json": "not a regular file",
      "fifo.json": "not a regular file",
      "large.json": "larger than 16 MiB",
      "text.json": "not JSON (Expecting value: line 1 column 1 (char 0))",
      "latin.json": "not JSON ('utf-8' codec can't decode byte 0xe9",
      "object.json": "not a list of findings (write one with "
                     "--write-baseline FILE)",
      "old.json": "finding 1 has no path, idiom and fingerprint (write the "
                  "baseline again with --write-baseline FILE)",
      "deep.json": "not JSON (maximum recursion depth exceeded",
      "many.json": "more than 100,000 findings",
  }


def test_a_bad_baseline_is_one_line_and_exit_2(tmp_path, scan):
  _project(tmp_path, "a")
  for name, why in _bad_baselines(tmp_path).items():
    result = scan("--baseline", name, "train.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, ""), name
    assert result.stderr.startswith(
        f"tfpartial scan: error: --baseline {name}: {why}"), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr


def test_a_baseline_that_cannot_be_written_is_exit_2(tmp_path, scan):
  _project(tmp_path, "a")
  (tmp_path / "folder").mkdir()
  for target, why in (("folder", "not a regular file"),
                      ("no/such/known.json", "there is no folder")):
    result = scan("--write-baseline", target, "train.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(
        f"tfpartial scan: error: --write-baseline {target}: {why}")
  assert sorted(os.listdir(tmp_path)) == ["folder", "train.py"]


def _hooks():
  """`.pre-commit-hooks.yaml`, read as the flat list of mappings it is."""
  hooks = []
  for line in (ROOT / ".pre-commit-hooks.yaml").read_text().splitlines():
    item = re.fullmatch(r"(- |  )(\w+): (.*)", line)
    if line.startswith("#") or not line.strip():
      continue
    assert item, f"not a flat mapping line: {line!r}"
    if item.group(1) == "- ":
      hooks.append({})
    value = item.group(3)
    hooks[-1][item.group(2)] = (
        [part.strip() for part in value[1:-1].split(",")]
        if value.startswith("[") else value.strip("'\""))
  return hooks


def test_the_pre_commit_hook_runs_scan_on_the_files_it_is_given(tmp_path):
  (hook,) = _hooks()
  assert hook["id"] == "tfpartial-scan"
  assert hook["language"] == "python"
  assert hook["types_or"] == ["python", "jupyter"]
  assert hook["require_serial"] == "true"  # One project, read together.
  command, *arguments = hook["entry"].split()
  setup = (ROOT / "setup.cfg").read_text()
  assert re.search(rf"^\s*{command} = tfpartial\.cli:main$", setup, re.M)
  # pre-commit adds the staged files' names to the entry's arguments.
  _project(tmp_path, "a")
  (tmp_path / "clean.py").write_text("x = 1\n")
  assert arguments[0] == "scan"
  result = _scan(*arguments[1:], "clean.py", "train.py", cwd=tmp_path)
  assert result.returncode == 1 and _lines(result.stdout) == [
      (6, "grads-mask")]


def test_scan_help_names_the_ci_flags():
  result = subprocess.run([sys.executable, "-m", "tfpartial", "scan",
                           "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
  for flag in ("--baseline FILE", "--write-baseline FILE", "--exit-zero",
               "# tfpartial: ignore"):
    assert flag in result.stdout, flag
