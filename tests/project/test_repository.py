"""What git tracks: nothing a build or a test run writes."""

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent


@pytest.mark.parametrize("written", [
    "site/index.html",  # `mkdocs build` (mkdocs.yml sets no site_dir).
    "build/lib/tfpartial/cli.py", "tfpartial.egg-info/PKG-INFO",
    ".tox/py311-tf221/log", ".pytest_cache/README.md",
    ".hypothesis/examples/x", "tfpartial/__pycache__/cli.cpython-311.pyc",
])
def test_what_builds_and_test_runs_write_is_ignored(written):
  if shutil.which("git") is None or not (ROOT / ".git").exists():
    pytest.skip("not a git checkout: nothing to ask git")
  result = subprocess.run(["git", "check-ignore", "--no-index", written],
                          cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
  assert result.returncode == 0, f"git would track {written}"
