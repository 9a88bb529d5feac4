"""The examples of docs-notes/spec.md run as printed."""

import contextlib
import io
import pathlib
import re

import pytest

NOTES = pathlib.Path(__file__).parent.parent / "docs-notes" / "spec.md"
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", NOTES.read_text(), re.S)
EXAMPLES = [(code, following[1] if following and following[0] == "text"
             else None)
            for (kind, code), following in zip(BLOCKS, BLOCKS[1:] + [None])
            if kind == "python"]


@pytest.mark.parametrize("code, printed", EXAMPLES,
                         ids=[f"example {n}" for n in range(len(EXAMPLES))])
def test_example_prints_what_the_notes_show(code, printed):
  output = io.StringIO()
  with contextlib.redirect_stdout(output):
    exec(compile(code, str(NOTES), "exec"), {})  # pylint: disable=exec-used
  if printed is not None:
    assert output.getvalue().strip() == printed.strip()


def test_every_example_is_found():
  assert len(EXAMPLES) == 4
