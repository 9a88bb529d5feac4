"""A griffe extension: docstring `>>>` examples render as code in the site.

Under a Google-style `Examples:` heading griffe shows doctests as code; a
`>>>` block in a docstring's free text would otherwise be read as Markdown
(`>>>` a nested quote, `[array(...)]` a link). This fences each such block
as `pycon`, for the API reference only: doctest still runs the docstring
as written. Listed under `extensions:` in mkdocs.yml.
"""

from __future__ import annotations

from typing import Any, List

import griffe


def fence_doctests(text: str) -> str:
  """`text` with each unindented run of `>>>` lines and their output fenced."""
  lines, out, index = text.split("\n"), [], 0
  while index < len(lines):
    if not lines[index].startswith(">>>"):
      out.append(lines[index])
      index += 1
      continue
    block: List[str] = []
    while index < len(lines) and lines[index].strip():
      block.append(lines[index])
      index += 1
    out += ["```pycon", *block, "```"]
  return "\n".join(out)


class DoctestBlocks(griffe.Extension):
  """Fences the free-text doctests of every documented object."""

  def on_object(self, *, obj: Any, **kwargs: Any) -> None:
    del kwargs  # The loader; nothing else is needed.
    if obj.docstring is not None:
      obj.docstring.value = fence_doctests(obj.docstring.value)
