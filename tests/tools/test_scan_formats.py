"""`tfpartial scan`: the text, JSON and SARIF reports and the exit codes."""

import ast
import io
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from tfpartial._tools.scan import _main
from tests.tools import scan_scripts

IDIOMS = ["grads-mask", "stop-gradient-mix", "shadow-variable", "write-back",
          "var-list-filter", "weight-remask"]


def _run(paths, form="text", diff=False):
  out, err = io.StringIO(), io.StringIO()
  status = _main.run(paths, form, diff, out, err, version="1.2")
  return status, out.getvalue(), err.getvalue()


@pytest.fixture(name="script")
def _script(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  return "train.py"


def test_text_is_one_line_per_finding_then_drift_and_port(script):
  status, out, err = _run([script])
  assert status == 1
  first, drift, port = out.splitlines()
  assert first.startswith("train.py:13:7: grads-mask: gradients zeroed by a "
                          "mask before `apply_gradients` (line 12)")
  assert first.endswith("(see docs/migration.md#gradient-masks)")
  assert drift.startswith("  drift: `FtrlOptimizer` (line 9) computes each "
                          "weight from its accumulators"), drift
  assert "`l1_regularization_strength=0.5` sets it to 0" in drift
  assert "becomes NaN (0 * Inf)" in drift
  assert port.startswith("  port: ") and port.endswith("(mechanical: --diff)")
  assert err == "tfpartial scan: 1 finding(s) in 1 file(s)\n"


def test_json_lists_the_contract_s_fields(script):
  status, out, _ = _run([script], "json")
  (item,) = json.loads(out)
  assert status == 1
  assert {"path", "line", "col", "idiom", "message", "drift",
          "port"} <= set(item)
  assert (item["path"], item["line"], item["col"], item["idiom"]) == (
      "train.py", 13, 7, "grads-mask")


def test_sarif_is_2_1_0_with_a_rule_per_idiom(script):
  status, out, _ = _run([script], "sarif")
  log = json.loads(out)
  assert status == 1
  assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
  (run,) = log["runs"]
  rules = run["tool"]["driver"]["rules"]
  assert [rule["id"] for rule in rules] == IDIOMS
  for rule in rules:
    # No published address is known: the help names the guide's section.
    assert "helpUri" not in rule
    assert re.fullmatch(r"See docs/migration\.md#[\w-]+", rule["help"]["text"])
  (result,) = run["results"]
  assert result["ruleId"] == "grads-mask"
  assert rules[result["ruleIndex"]]["id"] == "grads-mask"
  assert result["message"]["text"]
  location = result["locations"][0]["physicalLocation"]
  assert location["artifactLocation"]["uri"] == "train.py"
  assert location["region"] == {"startLine": 13, "startColumn": 7}


def _anchor(heading):
  """The id Python-Markdown's toc gives a heading (underscores kept)."""
  text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
  return re.sub(r"[-\s]+", "-", text)


def test_every_help_link_is_a_section_of_the_migration_guide():
  from tfpartial._tools.scan.idioms import all_idioms  # pylint: disable=g-import-not-at-top
  guide = pathlib.Path(__file__).parent.parent.parent / "docs/migration.md"
  headings = {_anchor(h) for h in re.findall(r"^#+ (.*)$", guide.read_text(),
                                             re.M)}
  idioms = all_idioms()
  assert [idiom.id for idiom in idioms] == IDIOMS
  for idiom in idioms:
    assert idiom.entry.link.split("#")[1] in headings, idiom.id


def test_exit_0_when_nothing_is_found(tmp_path):
  (tmp_path / "ok.py").write_text("x = 1\n")
  assert _run([str(tmp_path)]) == (
      0, "", "tfpartial scan: 0 finding(s) in 1 file(s)\n")


def test_exit_2_on_a_path_that_is_not_there(tmp_path):
  status, out, err = _run([str(tmp_path / "nope")])
  assert (status, out) == (2, "")
  assert err == f"tfpartial scan: error: no such file or folder: " \
                f"{tmp_path / 'nope'}\n"


def test_exit_2_when_nothing_is_readable(tmp_path):
  (tmp_path / "bad.py").write_bytes(b"\x00\x01binary")
  status, _, err = _run([str(tmp_path)])
  assert status == 2 and "nothing readable" in err


def test_the_command_scans_without_importing_tensorflow(tmp_path):
  (tmp_path / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  result = subprocess.run(
      [sys.executable, "-X", "importtime", "-m", "tfpartial", "scan",
       str(tmp_path)], capture_output=True, text=True, timeout=120,
      check=False, env={k: v for k, v in os.environ.items()})
  assert result.returncode == 1, result.stderr[-2000:]
  imported = {line.rsplit("|", 1)[-1].strip() for line in
              result.stderr.splitlines() if line.startswith("import time:")}
  assert "tfpartial._tools.scan._main" in imported
  assert not {"tensorflow", "numpy", "keras"} & imported
  ours = {name for name in imported if name.startswith("tfpartial")}
  assert {name for name in ours if not name.startswith(
      "tfpartial._tools.scan")} == {"tfpartial", "tfpartial.cli",
                                    "tfpartial._tools"}, ours


def test_scan_help():
  result = subprocess.run([sys.executable, "-m", "tfpartial", "scan",
                           "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
  assert result.returncode == 0 and "--format {text,json,sarif}" in (
      result.stdout)


def test_sarif_uris_are_percent_encoded_references(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  folder = tmp_path / "my code"
  folder.mkdir()
  (folder / "#1 100% é.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  _, out, _ = _run(["my code"], "sarif")
  (run,) = json.loads(out)["runs"]
  (result,) = run["results"]
  location = result["locations"][0]["physicalLocation"]["artifactLocation"]
  assert location == {"uri": "my%20code/%231%20100%25%20%C3%A9.py",
                      "uriBaseId": "%SRCROOT%"}
  assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (
      pathlib.Path.cwd().as_uri() + "/")
  _, out, _ = _run([str(folder)], "sarif")
  (result,) = json.loads(out)["runs"][0]["results"]
  assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
      "uri": (folder / "#1 100% é.py").as_uri()}


def test_a_pipe_closed_early_keeps_the_verdict(tmp_path):
  (tmp_path / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  read, write = os.pipe()
  os.close(read)  # As `| head -1` once it has its line.
  try:
    result = subprocess.run(
        [sys.executable, "-m", "tfpartial", "scan", "train.py"],
        cwd=tmp_path, stdout=write, stderr=subprocess.PIPE, text=True,
        timeout=120, check=False)
  finally:
    os.close(write)
  assert result.returncode == 1
  assert result.stderr == "tfpartial scan: 1 finding(s) in 1 file(s)\n", (
      result.stderr)


def test_a_full_disk_is_one_line_and_keeps_the_verdict(tmp_path):
  (tmp_path / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  with open("/dev/full", "w") as full:
    result = subprocess.run(
        [sys.executable, "-m", "tfpartial", "scan", "--format", "sarif",
         "train.py"], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE,
        text=True, timeout=120, check=False)
  assert result.returncode == 1
  assert result.stderr == (
      "tfpartial scan: the output could not be written to stdout (No space "
      "left on device); the exit status is still the command's own\n"), (
          result.stderr)


def test_with_stderr_closed_stdout_holds_only_the_report(tmp_path):
  (tmp_path / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  (tmp_path / "old.py").write_text("print 'Python 2'\n")
  result = subprocess.run(
      [sys.executable, "-m", "tfpartial", "scan", "."], cwd=tmp_path,
      capture_output=True, text=True, timeout=120, check=False,
      preexec_fn=lambda: os.close(2))  # `2>&-`
  assert result.returncode == 1
  assert "tfpartial scan:" not in result.stdout
  assert result.stdout.startswith("./train.py:13:7: grads-mask: ")


# Modules a scanned tree may hold that Python or the scan would import.
PLANTED = ["concurrent/__init__.py", "json/__init__.py", "ast.py",
           "tensorflow/__init__.py", "typing.py", "argparse.py", "enum.py",
           "tokenize.py", "dataclasses.py", "hashlib.py", "urllib/__init__.py",
           "difflib.py", "numpy/__init__.py", "tfpartial_cli.py"]


def test_the_tree_scanned_is_never_imported_from_the_current_folder(
    tmp_path):
  (tmp_path / "train.py").write_text(scan_scripts.TF1_GRADS_MASK_FTRL)
  for name in PLANTED:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("import pathlib\n(pathlib.Path(__file__).parent / "
                    f"'IMPORTED-{name.replace('/', '-')}').touch()\n"
                    "raise SystemExit('imported from the scanned tree')\n")
  for form in ("text", "sarif"):
    result = subprocess.run(
        [sys.executable, "-m", "tfpartial", "scan", "--format", form, "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        check=False)
    assert result.returncode == 1, result.stderr
  help_ = subprocess.run([sys.executable, "-m", "tfpartial", "--help"],
                         cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=False)
  assert help_.returncode == 0, help_.stderr
  assert not list(tmp_path.glob("**/IMPORTED-*"))


def test_scan_imports_only_the_standard_library_and_itself():
  """Static: the scan's modules import nothing outside the standard
  library and `tfpartial._tools.scan` (no TensorFlow, no other layer)."""
  folder = pathlib.Path(__file__).resolve().parents[2] / "tfpartial" / \
      "_tools" / "scan"
  outside = []
  for path in folder.rglob("*.py"):
    for node in ast.walk(ast.parse(path.read_text())):
      names = ([a.name for a in node.names] if isinstance(node, ast.Import)
               else [node.module or ""] if isinstance(node, ast.ImportFrom)
               and not node.level else [])
      for name in names:
        top = name.split(".")[0]
        if top not in sys.stdlib_module_names and not name.startswith(
            "tfpartial._tools.scan") and name != "__future__":
          outside.append(f"{path.name}: {name}")
  assert not outside, outside


def test_the_guarded_stdout_passes_bytes_through_in_order():
  """A diff keeps its files' bytes (a latin-1 file's): the command line's
  guarded stdout has a binary side, guarded the same way."""
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  raw = io.BytesIO()
  out = cli._Output(io.TextIOWrapper(raw, encoding="utf-8"))  # pylint: disable=protected-access
  out.write("--- a/l.py\n")
  out.flush()
  out.buffer.write(b"+name = 'caf\xe9'\n")
  out.buffer.flush()
  assert raw.getvalue() == b"--- a/l.py\n+name = 'caf\xe9'\n"
  assert out.failure is None
  assert cli._Output(io.StringIO()).buffer is None  # pylint: disable=protected-access
