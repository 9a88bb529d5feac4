"""What the docs' text must say, beside the examples `test_docs.py` runs.

A TF1 lead opens the migration guide first; a reader of an Estimator page
can install what it needs and run what it shows; a contributor finds the
test commands and what the whole run costs.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent
ESTIMATOR_SECTIONS = {"docs/migration.md": "## The TF1 Estimator",
                      "docs/guides/tf1.md": "## The Estimator"}


def _nav_pages():
  """The pages of mkdocs.yml's nav, in order (read as text: the 2.15 env
  has no YAML reader)."""
  text = (ROOT / "mkdocs.yml").read_text()
  nav = text[text.index("\nnav:\n"):]
  nav = nav[:re.search(r"\n\S", nav[1:]).start() + 1]
  return re.findall(r"^\s*- (?:[^:\n]+|\"[^\"]+\"): (\S+\.md)$", nav, re.M)


def test_the_migration_guide_is_the_first_page_after_home():
  pages = _nav_pages()
  assert pages[:3] == ["index.md", "migration.md", "getting-started.md"], (
      pages)
  assert pages.index("migration.md") < min(
      pages.index(page) for page in pages if page.startswith("guides/"))


def _section(page, heading):
  text = (ROOT / page).read_text()
  start = text.index(heading)
  end = text.find("\n## ", start + len(heading))
  return text[start:] if end < 0 else text[start:end]


@pytest.mark.parametrize("page", ESTIMATOR_SECTIONS)
def test_estimator_pages_say_how_to_install_tensorflow_2_15(page):
  section = _section(page, ESTIMATOR_SECTIONS[page])
  assert 'pip install "tensorflow~=2.15.0"' in section, section[:400]
  assert "Python 3.9 to 3.11 only" in section, section[:400]
  assert "python3.11 -m venv" in section, section[:400]


@pytest.mark.parametrize("page", ESTIMATOR_SECTIONS)
def test_estimator_pages_run_and_name_only_files_that_exist(page):
  """Every script a command runs and every repository file the text
  names is in the repository (a diff's `---` side is the file before the
  port, which the page shows, not one it runs)."""
  section = _section(page, ESTIMATOR_SECTIONS[page])
  run = re.findall(r"^\$ python (\S+\.py)", section, re.M)
  named = re.findall(r"`((?:docs|tests|legacy_examples|tfpartial)/[\w/.]+"
                     r"\.(?:py|md))`", section)
  assert run or named, section[:400]
  missing = [path for path in run + named if not (ROOT / path).is_file()]
  assert not missing, missing


def test_contributing_gives_the_quick_and_the_whole_test_run():
  text = (ROOT / "docs/contributing.md").read_text()
  section = text[text.index("## Running the tests"):]
  section = section[:section.index("\n## ", 1)]
  quick = re.search(r"tox -e (py\S+) -- (tests/\S+\.py) -k \S+", section)
  assert quick, section
  assert quick.group(1) in (ROOT / "tox.ini").read_text()
  assert (ROOT / quick.group(2)).is_file(), quick.group(2)
  assert "tox run-parallel --parallel 2" in section, section
  assert re.search(r"about \d+ minutes on 2 cores", section), section


def test_contributing_names_every_family_of_the_conformance_suite():
  """Each `conformance.Suite` subclass, in the file the section says."""
  text = (ROOT / "docs/contributing.md").read_text()
  section = text[text.index("## Adding an optimizer family"):]
  section = section[:section.index("\n## ", 1)]
  named = dict(re.findall(r"`(Test\w+)` in `(tests/\S+\.py)`", section))
  found = {}
  for path in (ROOT / "tests").rglob("test_*.py"):
    for name in re.findall(r"^class (Test\w+)\(conformance\.Suite\)",
                           path.read_text(), re.M):
      found[name] = str(path.relative_to(ROOT))
  assert found and named == found, (named, found)
