"""The built site as a reader sees it: every page opened in headless Chromium.

At a laptop's width (1280 px) and a narrow window's (800 px), on every page:

- no code block (or table) hides part of its content in a sideways scroll
  (`scrollWidth` beyond `clientWidth`): code blocks wrap their long lines
  (docs/stylesheets/extra.css), and copying one still gives its lines as
  written (its `innerText`, which Material's copy button takes, is its
  text);
- no `\\|` shows: a table cell's `\\|` is a `|` (docs/site_hooks.py);
- each Returns section of the API reference is one item holding the
  docstring's whole Returns text (`returns_multiple_items` in mkdocs.yml).

Chromium is driven through its DevTools protocol over a pipe
(`--remote-debugging-pipe`: JSON messages ending in a NUL byte on file
descriptors 3 and 4), with the standard library alone: no WebDriver, no
pip package, only Debian's `chromium`. One browser opens every page once,
with the network off: the site's web fonts give way to the system's
monospace font, about as wide (a code character's width is checked, so a
browser with no font at all fails rather than passes).
Where Chromium is not installed the test is skipped, saying so; `.ci/run`
installs it and sets TFPARTIAL_NEED_CHROMIUM=1, which makes a missing
Chromium a failure.
"""

from __future__ import annotations

import ast
import fcntl
import importlib.util
import inspect
import json
import os
import pathlib
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any, Dict, Optional

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent
WIDTHS = (1280, 800)
HEIGHT = 900
TIMEOUT = 60  # Seconds for any one answer of the browser.

# What a page shows, read in the page once it has loaded: the code blocks
# and tables whose content is wider than their box, the code blocks whose
# copied text differs from their text, each Returns section's items (with
# the id of the object it documents), and every `\|` in the visible text.
MEASURE = r"""
document.fonts.ready.then(() => {
  const column = document.querySelector('.md-content__inner');
  const longest = (el) => el.textContent.split('\n').reduce(
      (a, b) => (b.length > a.length ? b : a), '').trim().slice(0, 90);
  const hidden = [];
  for (const el of column.querySelectorAll(
      'pre, pre > code, .md-typeset__scrollwrap')) {
    if (el.scrollWidth > el.clientWidth + 1) {
      hidden.push(`${el.tagName.toLowerCase()} ${el.scrollWidth} px in ` +
                  `${el.clientWidth} px: ${longest(el)}`);
    }
  }
  const copied = [...column.querySelectorAll('pre > code')]
      .filter((code) => code.innerText.trimEnd() !== code.textContent.trimEnd())
      .map(longest);
  const returns = [];
  for (const title of column.querySelectorAll('.doc-section-title')) {
    if (title.textContent.trim() !== 'Returns:') continue;
    const object = title.closest('.doc-object');
    const heading = object && object.querySelector(':scope > .doc-heading');
    // A table (Material wraps it in a div) or, in the list style, a list.
    const section = title.closest('p').nextElementSibling;
    const items = section.querySelector('tbody') ?
        section.querySelectorAll('tbody > tr') : section.querySelectorAll('li');
    returns.push({
      id: heading ? heading.id : '?',
      items: [...items].map((item) => (
          item.querySelector('.doc-md-description') || item).innerText)});
  }
  const text = document.body.innerText;
  const pipes = [...text.matchAll(/\\\|/g)].map(
      (m) => text.slice(Math.max(0, m.index - 30), m.index + 30));
  // The width of a code block's character: a browser without fonts lays
  // text out at no width, and nothing would ever overflow.
  const probe = document.createElement('pre');
  probe.innerHTML = '<code><span>' + '0'.repeat(20) + '</span></code>';
  column.appendChild(probe);
  const charWidth =
      probe.querySelector('span').getBoundingClientRect().width / 20;
  probe.remove();
  return {hidden, copied, returns, pipes, charWidth};
})
"""


class Chromium:
  """A headless Chromium, driven over its DevTools pipe."""

  def __init__(self, binary: str):
    self._profile = tempfile.TemporaryDirectory(prefix="tfpartial-chromium-")
    commands_read, self._commands = os.pipe()
    self._answers, answers_write = os.pipe()

    def on_fds_3_and_4() -> None:  # In the child, before Chromium starts.
      high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
              for fd in (commands_read, answers_write)]
      os.dup2(high[0], 3)
      os.dup2(high[1], 4)

    args = [binary, "--headless", "--remote-debugging-pipe", "--disable-gpu",
            "--no-first-run", "--no-default-browser-check",
            f"--user-data-dir={self._profile.name}",
            # No network: the site's pages are files; the web fonts they
            # ask for fail at once instead of waiting.
            "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"]
    if os.geteuid() == 0:  # Chromium's sandbox refuses to run as root (CI).
      args.insert(1, "--no-sandbox")
    self._log = open(pathlib.Path(self._profile.name) / "stderr.txt", "wb")
    self.process = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=self._log, pass_fds=(3, 4), preexec_fn=on_fds_3_and_4,
        start_new_session=True)
    os.close(commands_read)
    os.close(answers_write)
    self._buffer, self._next_id, self._events = b"", 0, []
    try:
      target = self.send("Target.createTarget", url="about:blank")["targetId"]
      self._session = self.send("Target.attachToTarget", targetId=target,
                                flatten=True)["sessionId"]
      self.send("Page.enable", self._session)
    except BaseException:
      self.close()
      raise

  def _message(self) -> Dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while b"\0" not in self._buffer:
      left = deadline - time.monotonic()
      if left <= 0 or not select.select([self._answers], [], [], left)[0]:
        raise TimeoutError(f"Chromium did not answer in {TIMEOUT} s")
      chunk = os.read(self._answers, 1 << 16)
      if not chunk:
        raise RuntimeError(f"Chromium exited: {self._stderr()}")
      self._buffer += chunk
    message, _, self._buffer = self._buffer.partition(b"\0")
    return json.loads(message)

  def _stderr(self) -> str:
    self._log.flush()
    return (pathlib.Path(self._profile.name) / "stderr.txt").read_text(
        errors="replace")[-2000:]

  def send(self, method: str, session: Optional[str] = None,
           **params: Any) -> Dict[str, Any]:
    """The result of one DevTools command; events meanwhile are kept."""
    self._next_id += 1
    message: Dict[str, Any] = {"id": self._next_id, "method": method,
                               "params": params}
    if session:
      message["sessionId"] = session
    os.write(self._commands, json.dumps(message).encode() + b"\0")
    while True:
      answer = self._message()
      if answer.get("id") == self._next_id:
        if "error" in answer:
          raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]
      self._events.append(answer)

  def open(self, url: str) -> None:
    """Loads `url` in the page and waits for its load event."""
    self._events.clear()
    result = self.send("Page.navigate", self._session, url=url)
    assert "errorText" not in result, (url, result)
    while not any(event.get("method") == "Page.loadEventFired"
                  for event in self._events):
      self._events.append(self._message())

  def resize(self, width: int) -> None:
    self.send("Emulation.setDeviceMetricsOverride", self._session,
              width=width, height=HEIGHT, deviceScaleFactor=1, mobile=False)

  def evaluate(self, expression: str) -> Any:
    """The value of a JavaScript expression (a promise's, awaited)."""
    result = self.send("Runtime.evaluate", self._session,
                       expression=expression, returnByValue=True,
                       awaitPromise=True)
    assert "exceptionDetails" not in result, result["exceptionDetails"]
    return result["result"]["value"]

  def close(self) -> None:
    try:
      self.send("Browser.close")
      self.process.wait(timeout=10)
    except (OSError, RuntimeError, TimeoutError, subprocess.TimeoutExpired):
      try:
        os.killpg(self.process.pid, signal.SIGKILL)  # Its own process group.
      except ProcessLookupError:
        pass
      self.process.wait()
    os.close(self._commands)
    os.close(self._answers)
    self._log.close()
    self._profile.cleanup()


def _chromium_binary() -> str:
  """Chromium's path; the test is skipped (or, in CI, fails) without it."""
  for name in ("chromium", "chromium-browser"):
    found = shutil.which(name)
    if found:
      return found
  if os.environ.get("TFPARTIAL_NEED_CHROMIUM") == "1":
    pytest.fail("TFPARTIAL_NEED_CHROMIUM=1 (.ci/run sets it) but no "
                "chromium is on PATH: .ci/run installs Debian's chromium")
  pytest.skip("Chromium is not installed, so the site's pages are not "
              "opened in a browser (Debian: apt-get install chromium)")


@pytest.fixture(scope="module")
def pages(built_site) -> Dict[str, Dict[int, Dict[str, Any]]]:
  """What each page of the built site shows at each width: MEASURE's
  result, by page (its path in the site) and width."""
  binary = _chromium_binary()
  assert built_site.returncode == 0, (
      "the site does not build (test_docs.py::test_the_site_builds_strictly "
      "says why):\n" + built_site.log[-3000:])
  files = sorted(path for path in built_site.folder.rglob("index.html")
                 if not {"assets", "search"} & set(path.parts))
  assert len(files) >= 20, files  # The nav's pages, not a few of them.
  browser = Chromium(binary)
  measured: Dict[str, Dict[int, Dict[str, Any]]] = {}
  try:
    for path in files:
      page = path.relative_to(built_site.folder).as_posix()
      browser.resize(WIDTHS[0])
      browser.open(path.as_uri())
      measured[page] = {}
      for width in WIDTHS:
        browser.resize(width)
        measured[page][width] = browser.evaluate(MEASURE)
  finally:
    browser.close()
  return measured


def test_code_blocks_show_their_whole_lines_at_every_width(pages):
  """No code block or table scrolls sideways (its ends hidden from a reader
  who does not notice the scroll); copying a wrapped block gives its lines
  as written."""
  char_widths = {round(shown["charWidth"], 1) for page in pages.values()
                 for shown in page.values()}
  assert min(char_widths) >= 5 and max(char_widths) <= 16, (
      f"a code character is {sorted(char_widths)} px wide: no font?")
  hidden = [f"{page} at {width} px: {what}"
            for page, widths in pages.items()
            for width, shown in widths.items() for what in shown["hidden"]]
  assert not hidden, ("content wider than its box, scrolled out of sight:\n"
                      + "\n".join(hidden))
  copied = [f"{page}: {what}" for page, widths in pages.items()
            for what in widths[WIDTHS[0]]["copied"]]
  assert not copied, ("copying these code blocks does not give their text:\n"
                      + "\n".join(copied))


def test_no_page_shows_an_escaped_pipe(pages):
  shown = [f"{page}: ...{text}..." for page, widths in pages.items()
           for text in widths[WIDTHS[0]]["pipes"]]
  assert not shown, "`\\|` shows on the site:\n" + "\n".join(shown)


def _plain(text: str) -> str:
  """Text as the site shows it, Markdown's marks and line breaks gone."""
  return " ".join(re.sub(r"[`*]", "", text).split())


def documented_returns() -> Dict[str, str]:
  """The Returns text of each public function and method of `tfpartial`,
  by its id in the API reference (`tfpartial.FreezeSpec.wrap`), read from
  the source."""
  init = ast.parse((ROOT / "tfpartial" / "__init__.py").read_text())
  public = next(ast.literal_eval(node.value) for node in init.body
                if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", "") == "_PUBLIC")
  found = {}
  for name, module in public.items():
    source = ROOT / (module.replace(".", "/") + ".py")
    for node in ast.parse(source.read_text()).body:
      if getattr(node, "name", None) != name:
        continue
      members = [(f"tfpartial.{name}", node)]
      if isinstance(node, ast.ClassDef):  # Its public methods, as listed.
        members += [(f"tfpartial.{name}.{member.name}", member)
                    for member in node.body
                    if isinstance(member, ast.FunctionDef)
                    and not member.name.startswith("_")]
      for key, member in members:
        returns = _returns_of(ast.get_docstring(member) or "")
        if returns is not None:
          found[key] = returns
  return found


def _returns_of(docstring: str) -> Optional[str]:
  """The text of a Google-style docstring's Returns section, or None."""
  lines = inspect.cleandoc(docstring).splitlines()
  if "Returns:" not in lines:
    return None
  section = []
  for line in lines[lines.index("Returns:") + 1:]:
    if line.strip() and not line.startswith(" "):
      break
    section.append(line)
  return _plain(" ".join(section))


def test_documented_returns_reads_the_source():
  returns = documented_returns()
  assert {"tfpartial.freeze", "tfpartial.spec_of",
          "tfpartial.FreezeSpec.apply_gradients",
          "tfpartial.FreezeSpec.minimize"} <= set(returns), sorted(returns)
  assert _returns_of("Sum.\n\n  Returns:\n    A `b`\n    c.\n\n"
                     "  Raises:\n    d.") == "A b c."
  assert _returns_of("Sum.") is None


def test_each_returns_section_is_the_one_sentence_written(pages):
  """A Returns section renders as one item, the docstring's whole text:
  not a typed row per line."""
  written = documented_returns()
  shown = {section["id"]: section["items"]
           for widths in pages.values()
           for section in widths[WIDTHS[0]]["returns"]}
  assert len(shown) >= 8, shown  # The reference's functions and methods.
  wrong = [f"{key}: the page shows {len(items)} items {items}; the "
           f"docstring says {written.get(key)!r}"
           for key, items in shown.items()
           if [_plain(item) for item in items] != [written.get(key)]]
  assert not wrong, "\n".join(wrong)
  unshown = sorted(key for key in written if key not in shown)
  assert not unshown, f"Returns sections missing from the site: {unshown}"


def test_table_pipes_read_as_on_github():
  """docs/site_hooks.py: a table cell's `\\|` is a `|`, code spans too;
  elsewhere a backslash stays."""
  spec = importlib.util.spec_from_file_location(
      "site_hooks", ROOT / "docs" / "site_hooks.py")
  hooks = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(hooks)
  html = ("<table><tr><th>x \\| y</th></tr><tr><td><code>a \\| b</code></td>"
          "<td align=\"left\">c</td></tr></table><p><code>d \\| e</code></p>")
  assert hooks.on_page_content(html, page=None, config={}, files=[]) == (
      "<table><tr><th>x | y</th></tr><tr><td><code>a | b</code></td>"
      "<td align=\"left\">c</td></tr></table><p><code>d \\| e</code></p>")
