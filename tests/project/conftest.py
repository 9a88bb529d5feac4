"""The documentation site, built once for the tests that read it.

`test_docs.py::test_the_site_builds_strictly` checks the build;
`test_site_in_browser.py` opens its pages in Chromium. Both take this one
build, so a run builds the site once.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent


@dataclasses.dataclass(frozen=True)
class Site:
  """What `mkdocs build --strict` made, and what it said."""

  folder: pathlib.Path
  returncode: int
  log: str


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Site:
  """The site as `mkdocs build --strict` builds it; skipped where the docs
  extra is not installed (the 2.21 env installs it)."""
  missing = [name for name in ("mkdocs", "material", "mkdocstrings_handlers")
             if importlib.util.find_spec(name) is None]
  if missing:
    pytest.skip(f"the docs extra is not installed ({', '.join(missing)} "
                "missing): pip install '.[docs]'")
  folder = tmp_path_factory.mktemp("site") / "site"
  result = subprocess.run(
      [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
       str(ROOT / "mkdocs.yml"), "--site-dir", str(folder)],
      capture_output=True, text=True, timeout=600, check=False,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
           "NO_MKDOCS_2_WARNING": "1"})
  return Site(folder, result.returncode, result.stdout + result.stderr)
