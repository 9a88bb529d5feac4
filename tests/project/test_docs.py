"""The README and the docs site: every example runs as printed, the site builds.

How a page's blocks are tested (docs/writing-docs.md says it for writers):

- ```` ```python ````: run as a script in a fresh process, in a temporary
  folder shared by the blocks of its page (run in page order), with
  `TF_CPP_MIN_LOG_LEVEL=3`; it must exit 0. Its printed output is checked
  where the text shows it: `# prints TEXT` comments (continued on the next
  lines by comment lines indented to the same `#`), or a ```` ```text
  title="Output" ```` block right after it.
- ```` ```console ````: each `$ COMMAND` line runs (`tfpartial` as
  `python -m tfpartial`, `python` as this interpreter), in the page's folder
  with copies of `legacy_examples/` and `docs/examples/`; the lines after it
  are its stdout, or,
  when it failed with nothing on stdout, how its stderr ends; `$ echo $?`
  shows the exit status.
- ```` ```diff ````: a unified diff whose `+++` file is in the repository;
  the diff must apply in reverse to that file as it stands, and the file it
  gives (the `---` name) is written to the page's folder for the blocks
  after it to run.
- ```` ```sh ````: commands to type (installing, the whole test suite), not run.
- An HTML comment on the line before a fence changes that: `<!-- docs-test:
  no-run: REASON -->` (not run, and rare), `<!-- docs-test: keras3 -->` or
  `<!-- docs-test: tf_keras -->` (skipped, saying why, where that Keras is
  missing), `<!-- docs-test: tfmot -->` (a tfmot-pruned tf_keras model on
  Keras 3: skipped where tfmot, tf_keras or Keras 3 is missing),
  `<!-- docs-test: keras_hub -->` (skipped where the keras_hub package is
  missing), `<!-- docs-test: tf_estimator -->` (skipped where TensorFlow
  has no `tf.estimator`: after 2.15), `<!-- docs-test: bench -->` (a
  `tfpartial bench` table measured once: its cases and columns are
  checked, not its timings; the bench tables of a page together show
  every case; `<!-- docs-test: bench tf_estimator -->` for rows only a
  TensorFlow with `tf.estimator` runs).

In the output shown, `...` on a line of its own stands for any lines, and
`...` inside a line for any text; a TensorFlow version matches any version.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

import pytest

import processes

ROOT = pathlib.Path(__file__).parent.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# Runnable scripts the pages' diffs are against and their commands run.
EXAMPLE_FOLDERS = ("legacy_examples", "docs/examples")
TIMEOUT = 600
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
RUN_LANGS = {"python", "console", "diff"}
SHOWN_LANGS = {"sh", "text", "json", "yaml", "ini", "cfg", "toml"}
DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
# TensorFlow's own C++ start-up log, which TF_CPP_MIN_LOG_LEVEL does not
# silence in every release.
TF_LOG = re.compile(r"^(WARNING: All log messages before absl|[IWEF]\d{4} )")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)(.*)$")


@dataclasses.dataclass
class Block:
  """One fenced code block of a page."""

  page: pathlib.Path
  line: int  # 1-based line of the opening fence.
  end: int  # 1-based line of the closing fence.
  lang: str
  info: str  # What follows the language on the fence line.
  code: str
  directive: str = ""
  output: Optional[str] = None  # The output block shown right after it.

  @property
  def id(self) -> str:
    return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: pathlib.Path) -> List[Block]:
  """The fenced blocks of a Markdown page, with directives and outputs."""
  lines = page.read_text(encoding="utf-8").splitlines()
  blocks, index = [], 0
  while index < len(lines):
    match = FENCE.match(lines[index])
    if not match:
      index += 1
      continue
    indent, fence, lang, info = match.groups()
    end = index + 1
    while end < len(lines) and not (
        lines[end].strip().startswith(fence[0] * len(fence))
        and lines[end].strip().strip(fence[0]) == ""):
      end += 1
    assert end < len(lines), f"{page}:{index + 1}: the fence is never closed"
    body = [line[len(indent):] if line.startswith(indent) else line.lstrip()
            for line in lines[index + 1:end]]
    previous = next((lines[i] for i in range(index - 1, -1, -1)
                     if lines[i].strip()), "")
    directive = DIRECTIVE.match(previous)
    blocks.append(Block(page, index + 1, end + 1, lang, info.strip(),
                        "\n".join(body) + "\n",
                        directive.group(1) if directive else ""))
    index = end + 1
  for block, after in zip(blocks, blocks[1:]):
    between = lines[block.end:after.line - 1]
    if (block.lang == "python" and after.lang == "text"
        and 'title="Output"' in after.info
        and not any(line.strip() for line in between)):
      block.output = after.code
      after.directive = "output"  # Checked as the python block's output.
  return blocks


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]
RUN_BLOCKS = [b for b in ALL_BLOCKS if b.lang in RUN_LANGS]


# --- Comparing output ------------------------------------------------------


def _normalise(text: str) -> List[str]:
  text = re.sub(r"TensorFlow \d+\.\d+\.\d+\S*", "TensorFlow <version>", text)
  lines = [line.rstrip() for line in text.splitlines()]
  while lines and not lines[0]:
    lines.pop(0)
  while lines and not lines[-1]:
    lines.pop()
  return lines


def _line_pattern(expected: str) -> re.Pattern:
  return re.compile(".*?".join(re.escape(part) for part in expected.split("..."))
                    + r"\Z")


def matches(expected: str, actual: str) -> bool:
  """Whether `actual` is what `expected` shows, `...` standing for the rest."""
  want, got = _normalise(expected), _normalise(actual)

  @functools.lru_cache(maxsize=None)
  def match(i: int, j: int) -> bool:
    if i == len(want):
      return j == len(got)
    if want[i].strip() == "...":
      return any(match(i + 1, k) for k in range(j, len(got) + 1))
    return (j < len(got) and _line_pattern(want[i]).match(got[j]) is not None
            and match(i + 1, j + 1))

  return match(0, 0)


def printed_comments(code: str) -> Optional[str]:
  """What the `# prints ...` comments of a block say it prints, in order."""
  lines, shown, index = code.splitlines(), [], 0
  found = False
  while index < len(lines):
    match = re.search(r"#\s?prints\s?(.*)$", lines[index])
    index += 1
    if not match:
      continue
    found = True
    column = lines[index - 1].index("#", match.start())
    text_column = match.start(1) - column
    shown.append(match.group(1))
    while index < len(lines):  # Comment lines continuing it, same `#`.
      line = lines[index]
      if not (line[:column].strip() == "" and line[column:column + 1] == "#"):
        break
      shown.append(line[column + text_column:] if len(line) > column + 1
                   else "")
      index += 1
  return "\n".join(shown) if found else None


# --- Running ---------------------------------------------------------------


@pytest.fixture(scope="module")
def page_folders(tmp_path_factory) -> Dict[pathlib.Path, pathlib.Path]:
  """One temporary folder per page, with copies of the example scripts
  (`legacy_examples/`, `docs/examples/`) where a clone has them."""
  folders = {}
  for page in PAGES:
    folder = tmp_path_factory.mktemp(page.stem.replace(".", "_"))
    for examples in EXAMPLE_FOLDERS:
      shutil.copytree(ROOT / examples, folder / examples)
    folders[page] = folder
  return folders


def _skip_for(directive: str) -> Optional[str]:
  """Why a block is skipped here, or None."""
  if directive.startswith("no-run"):
    return None  # Checked, and not run, by test_blocks_not_run_say_why.
  if directive == "keras3":
    import keras  # pylint: disable=g-import-not-at-top
    if int(keras.__version__.split(".")[0]) < 3:
      return f"a Keras 3 example; this TensorFlow ships Keras {keras.__version__}"
  if directive == "tf_keras" and importlib.util.find_spec("tf_keras") is None:
    return "a tf_keras example; the tf_keras package is not installed"
  if directive == "tfmot":  # A tf_keras model pruned by tfmot, on Keras 3.
    missing = [name for name in ("tensorflow_model_optimization", "tf_keras")
               if importlib.util.find_spec(name) is None]
    if missing or _skip_for("keras3"):
      return ("a tfmot example on Keras 3; "
              + (f"{', '.join(missing)} not installed" if missing
                 else str(_skip_for("keras3"))))
  if directive == "keras_hub" and importlib.util.find_spec(
      "keras_hub") is None:
    return "a keras_hub example; the keras_hub package is not installed"
  if directive == "tf_estimator":
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    if not hasattr(tf, "estimator"):
      return (f"a tf.estimator example; TensorFlow {tf.__version__} has no "
              "tf.estimator (2.15 is the last that has)")
  return None


def _run_python(block: Block, folder: pathlib.Path) -> str:
  script = folder / f"docs_block_{block.line}.py"
  script.write_text(block.code, encoding="utf-8")
  result = processes.until_ports_bind(lambda: processes.run(
      [sys.executable, script.name], cwd=folder, env=ENV, timeout=TIMEOUT))
  assert result.returncode == 0, (
      f"{block.id} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
  return result.stdout


@functools.lru_cache(maxsize=None)
def _run_pure(command: Tuple[str, ...]) -> Tuple[int, str, str]:
  """Runs a command whose output depends on no file (`tfpartial demo`), once."""
  result = processes.run(command, env=ENV, timeout=TIMEOUT)
  return result.returncode, result.stdout, result.stderr


def _command(text: str) -> List[str]:
  words = shlex.split(text)
  if words[0] == "tfpartial":
    return [sys.executable, "-m", "tfpartial", *words[1:]]
  if words[0] in ("python", "python3"):
    return [sys.executable, *words[1:]]
  raise AssertionError(f"a console block runs tfpartial or python, not {text!r}")


def _run_console(block: Block, folder: pathlib.Path) -> None:
  sessions, status = [], 0
  for line in block.code.splitlines():
    if line.startswith("$ "):
      sessions.append((line[2:], []))
    else:
      assert sessions, f"{block.id}: output before any `$ ` command"
      sessions[-1][1].append(line)
  for text, shown in sessions:
    if text.strip() == "echo $?":
      out, err = f"{status}\n", ""
    elif text.strip() == "tfpartial demo":
      status, out, err = _run_pure(tuple(_command(text)))
    else:
      result = processes.run(_command(text), cwd=folder, env=ENV,
                             timeout=TIMEOUT)
      status, out, err = result.returncode, result.stdout, result.stderr
    if out.strip() or status == 0:
      printed, expected = out, "\n".join(shown)
    else:  # A failure: the page shows how stderr ends.
      printed = "\n".join(line for line in err.replace("\r", "\n").splitlines()
                          if not TF_LOG.match(line))
      expected = "\n".join(["...", *shown])
    assert matches(expected, printed), (
        f"{block.id}: `{text}` printed (exit {status}):\n{printed}\n"
        f"stderr:\n{err[-3000:]}\nbut the page shows:\n" + "\n".join(shown))


def reverse_apply(diff: str, new_text: str) -> Tuple[str, str, str]:
  """The old file a unified diff was made from: (old name, new name, text)."""
  lines = diff.splitlines()
  assert lines[0].startswith("--- ") and lines[1].startswith("+++ "), lines[:2]
  old_name, new_name = lines[0][4:].split("\t")[0], lines[1][4:].split("\t")[0]
  new, result, position, index = new_text.splitlines(), [], 0, 2
  while index < len(lines):
    header = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[index])
    assert header, f"not a hunk header: {lines[index]!r}"
    old_count = int(header.group(2) or 1)
    new_start, new_count = int(header.group(3)), int(header.group(4) or 1)
    index += 1
    old_part, new_part = [], []
    while index < len(lines) and not lines[index].startswith("@@"):
      tag, text = lines[index][:1], lines[index][1:]
      assert tag in " -+", f"not a diff line: {lines[index]!r}"
      if tag in " -":
        old_part.append(text)
      if tag in " +":
        new_part.append(text)
      index += 1
    assert (len(old_part), len(new_part)) == (old_count, new_count), (
        f"hunk {header.group(0)} counts {len(old_part)}, {len(new_part)} lines")
    start = new_start - 1 if new_count else new_start
    assert new[start:start + new_count] == new_part, (
        f"{new_name} no longer has the lines of hunk {header.group(0)}")
    result += new[position:start] + old_part
    position = start + new_count
  result += new[position:]
  return old_name, new_name, "\n".join(result) + "\n"


def _apply_diff(block: Block, folder: pathlib.Path) -> None:
  header = block.code.splitlines()[1][4:].split("\t")[0]
  port = ROOT / header
  assert port.is_file(), f"{block.id}: {header} is not a file of the repository"
  old_name, _, old_text = reverse_apply(block.code, port.read_text())
  target = folder / old_name
  target.parent.mkdir(parents=True, exist_ok=True)
  target.write_text(old_text)


# A row of `tfpartial bench`'s table: the case, then its numbers.
_BENCH_ROW = re.compile(
    r"^(\(\w\) .*?)\s{2,}\d+(?:\.\d+)?(?: (?:ms|s|MiB))?\s")


def _bench_cases(text: str) -> List[str]:
  """Each row's case, its sizes left out (`--quick` runs tiny ones)."""
  cases = []
  for line in text.splitlines():
    match = _BENCH_ROW.match(line)
    if match:
      # --quick builds a tiny conv net where the full run builds ResNet50.
      cases.append(re.sub(r"\d[\d,.]*", "N", match.group(1)).replace(
          "no compiled kernel", "compiled kernel").replace(
              "ResNetN (NxN)", "tiny conv net"))
  return cases


@functools.lru_cache(maxsize=None)
def _quick_bench() -> Tuple[str, str]:
  """`tfpartial bench --quick --rounds 1`: its stdout and stderr."""
  result = processes.run(
      [sys.executable, "-m", "tfpartial", "bench", "--quick", "--rounds", "1"],
      env=ENV, timeout=TIMEOUT)
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout, result.stderr


def _check_bench(block: Block) -> None:
  """A measured bench table shows only cases `tfpartial bench` has today,
  and the page's bench tables together show every one of them."""
  stdout, stderr = _quick_bench()
  shown = _bench_cases(block.code)
  assert shown, block.code
  missing = set(shown) - set(_bench_cases(stdout))
  assert not missing, (
      f"{block.id} shows cases `tfpartial bench` does not have today: "
      f"{sorted(missing)}\n{stdout}")
  if "left out" not in stdout + stderr:
    on_page = set().union(*(
        _bench_cases(other.code) for other in RUN_BLOCKS
        if other.page == block.page and other.directive.startswith("bench")))
    unshown = set(_bench_cases(stdout)) - on_page
    assert not unshown, (
        f"{block.page.name} does not show cases `tfpartial bench` has: "
        f"{sorted(unshown)}\n{stdout}")


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=lambda block: block.id)
def test_block(block: Block, page_folders):
  """Each python, console and diff block runs, and prints what it shows."""
  if block.directive.startswith("no-run"):
    pytest.skip(f"not run: {block.directive}")
  if block.directive.startswith("bench"):
    # "bench": the table of a run; "bench tf_estimator": rows of a run on a
    # TensorFlow with tf.estimator (2.15), skipped elsewhere.
    reason = _skip_for(block.directive[len("bench"):].strip())
    if reason:
      pytest.skip(reason)
    _check_bench(block)
    return
  reason = _skip_for(block.directive)
  if reason:
    pytest.skip(reason)
  folder = page_folders[block.page]
  if block.lang == "diff":
    _apply_diff(block, folder)
  elif block.lang == "console":
    _run_console(block, folder)
  else:
    shown = printed_comments(block.code)
    assert shown is None or block.output is None, (
        f"{block.id}: `# prints` comments and an output block; choose one")
    out = _run_python(block, folder)
    if block.output is not None:
      shown = block.output
    if shown is not None:
      assert matches(shown, out), (
          f"{block.id} printed:\n{out}\nbut the page shows:\n{shown}")


# --- What the pages are made of --------------------------------------------


def test_every_block_is_run_or_shown_for_a_reason():
  for block in ALL_BLOCKS:
    assert block.lang in RUN_LANGS | SHOWN_LANGS, (
        f"{block.id}: a ```{block.lang} block; use one of "
        f"{sorted(RUN_LANGS | SHOWN_LANGS)} (tests/project/test_docs.py says "
        "how each is tested)")
    if 'title="Output"' in block.info:
      assert block.directive == "output", (
          f"{block.id}: an output block must follow its python block")
      continue
    assert block.directive in ("", "keras3", "tf_keras", "keras_hub",
                               "tf_estimator", "tfmot", "bench",
                               "bench tf_estimator") or (
        block.directive.startswith("no-run: ")
        and len(block.directive) > len("no-run: ") + 10), (
            f"{block.id}: unknown docs-test directive {block.directive!r}")


def test_blocks_not_run_say_why_and_are_rare():
  not_run = [b for b in ALL_BLOCKS if b.directive.startswith("no-run")]
  assert all(b.lang == "python" for b in not_run)
  assert len(not_run) <= 3, [b.id for b in not_run]


def test_every_example_script_is_a_port_shown_and_run():
  """Each script of docs/examples/ is the `+++` file of a diff on a page,
  and a console block of that page runs it."""
  for script in sorted((ROOT / "docs" / "examples").glob("*.py")):
    name = script.relative_to(ROOT).as_posix()
    pages = {block.page for block in ALL_BLOCKS if block.lang == "diff"
             and f"+++ {name}" in block.code}
    assert pages, f"no diff on any page ports to {name}"
    assert any(block.lang == "console" and f"python {name}" in block.code
               for block in ALL_BLOCKS if block.page in pages), (
                   f"no console block runs {name}")


def test_python_blocks_are_most_blocks():
  python = [b for b in RUN_BLOCKS if b.lang == "python"]
  assert len(python) >= 20  # The finder finds them: a bad fence hides blocks.


def test_readme_is_short_and_keeps_the_two_setup_commands():
  readme = (ROOT / "README.md").read_text()
  assert len(readme.splitlines()) < 200
  shell = [b.code.strip() for b in blocks_of(ROOT / "README.md")
           if b.lang == "sh"]
  assert ("python3 -m venv .venv && .venv/bin/pip install . && "
          ".venv/bin/tfpartial demo") in shell
  tox = ".venv/bin/tox run-parallel --parallel 2"
  assert f"python3 -m venv .venv && .venv/bin/pip install tox && {tox}" \
      in shell
  ci = (ROOT / ".ci" / "run").read_text()
  assert ".venv/bin/pip install --quiet tox" in ci
  assert ci.strip().splitlines()[-1] == tox  # CI runs the README's command.


def test_readme_links_and_images_exist():
  readme = (ROOT / "README.md").read_text()
  targets = re.findall(r"\]\(([^)\s]+)\)", readme)
  assert targets
  for target in targets:
    if re.match(r"[a-z]+://", target):
      continue
    path, _, anchor = target.partition("#")
    assert (ROOT / path).exists(), f"README links to a missing {path}"
    if anchor:
      headings = {_slug(h) for h in re.findall(
          r"^#+ (.*)$", (ROOT / path).read_text(), re.M)}
      assert anchor in headings, f"README links to a missing {target}"


def _slug(heading: str) -> str:
  """The anchor MkDocs (and GitHub) give a heading."""
  text = re.sub(r"[`*_]", "", heading).strip().lower()
  text = re.sub(r"[^\w\- ]", "", text)
  return re.sub(r"[\s]+", "-", text)


def test_matches_understands_the_ellipsis():
  assert matches("a\n...\nd", "a\nb\nc\nd")
  assert matches("x = ...]", "x = [1, 2]")
  assert matches("tfpartial demo, TensorFlow 2.21.0", "tfpartial demo, TensorFlow 2.15.1")
  assert not matches("a\nb", "a\nc")
  assert not matches("a", "a\nb")


def test_printed_comments_read_continuation_lines():
  code = ("print(1)  # prints [[1 2]\n"
          "          #         [3 4]]\n"
          "print(2)  # prints 2\n")
  assert printed_comments(code) == "[[1 2]\n [3 4]]\n2"


def test_reverse_apply_gives_the_old_file():
  diff = ("--- before/a.py\n+++ a.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
  assert reverse_apply(diff, "a\nB\nc\n") == ("before/a.py", "a.py", "a\nb\nc\n")
  with pytest.raises(AssertionError, match="no longer has the lines"):
    reverse_apply(diff, "a\nX\nc\n")


# --- The site ----------------------------------------------------------------


def test_docstring_doctests_are_fenced_for_the_site():
  pytest.importorskip("griffe", reason="the docs extra is not installed: "
                      "pip install '.[docs]'")
  spec = importlib.util.spec_from_file_location(
      "griffe_doctests", ROOT / "docs" / "griffe_doctests.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  text = "Summary.\n\n>>> f(1)\n[array(2)]\n\nArgs:\n  x: y.\n\n  >>> kept\n"
  assert module.fence_doctests(text) == (
      "Summary.\n\n```pycon\n>>> f(1)\n[array(2)]\n```\n\nArgs:\n  x: y.\n\n"
      "  >>> kept\n")


def test_the_site_builds_strictly(built_site):
  """`mkdocs build --strict`: no broken link, no missing API reference
  (the build is conftest.py's, shared with test_site_in_browser.py)."""
  assert built_site.returncode == 0, built_site.log
  site = built_site.folder
  reference = (site / "reference" / "index.html").read_text()
  for name in ("tfpartial.freeze", "tfpartial.train_only", "tfpartial.load_spec",
               "tfpartial.spec_of", "tfpartial.FreezeSpec.mask",
               "tfpartial.FreezeSpec.apply_gradients", "tfpartial.FreezeSpec.wrap"):
    assert f'id="{name}"' in reference, name
  assert (site / "drift.png").is_file()
