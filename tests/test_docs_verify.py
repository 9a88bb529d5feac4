"""The examples of docs-notes/verify.md run as printed, with that output."""

import os
import pathlib
import re
import shlex

import pytest

import helpers
from tfpartial import cli

PAGE = pathlib.Path(__file__).parent.parent / "docs-notes" / "verify.md"


def _blocks(language):
  return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)


def _same(actual, expected):
  """Line by line, word by word; numbers within round-off of each other
  (the printed changes are float32 arithmetic)."""
  actual, expected = actual.splitlines(), expected.splitlines()
  assert len(actual) == len(expected), (actual, expected)
  for got, want in zip(actual, expected):
    got_words, want_words = got.split(), want.split()
    assert len(got_words) == len(want_words), (got, want)
    for a, b in zip(got_words, want_words):
      if re.fullmatch(r"-?\d+\.\d+", b):
        assert float(a) == pytest.approx(float(b), rel=1e-3), (got, want)
      else:
        assert a == b, (got, want)


@helpers.needs_keras_3
def test_every_example_runs_and_prints_what_the_page_says(
    tmp_path, monkeypatch, capsys):
  import keras  # pylint: disable=g-import-not-at-top
  keras.backend.clear_session()  # Layer names as in a fresh process.
  monkeypatch.chdir(tmp_path)
  namespace = {}
  for code in _blocks("python"):
    exec(compile(code, str(PAGE), "exec"), namespace)  # pylint: disable=exec-used
  capsys.readouterr()
  commands = 0
  for session in _blocks("console"):
    status = None
    for command, output in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)",
                                      session, re.M):
      if command == "echo $?":
        assert output == f"{status}\n", (command, status)
        continue
      words = shlex.split(command)
      assert words[0] == "tfpartial", command
      status = cli.main(words[1:])
      _same(capsys.readouterr().out, output)
      commands += 1
  assert commands == 4 and os.path.exists("after.weights.h5")
