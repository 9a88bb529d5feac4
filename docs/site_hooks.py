r"""MkDocs hooks for the site; listed under `hooks:` in mkdocs.yml.

In a Markdown table a `|` inside a cell is written `\|`, also inside a
code span (`` `a \| b` ``): GitHub reads it so (the tables of the GFM
spec) and shows `a | b`. Python-Markdown, which MkDocs uses, keeps
the backslash inside a code span, so the site would show `a \| b`. This
hook gives table cells GitHub's reading, so a page reads the same on
GitHub and on the site.
"""

from __future__ import annotations

import re
from typing import Any

_CELL = re.compile(r"(<t[dh][^>]*>)(.*?)(</t[dh]>)", re.DOTALL)


def unescape_table_pipes(html: str) -> str:
  r"""`html` with each `\|` of a table cell made `|`."""
  return _CELL.sub(
      lambda cell: cell[1] + cell[2].replace("\\|", "|") + cell[3], html)


def on_page_content(html: str, **kwargs: Any) -> str:
  del kwargs  # The page, config and files; only the HTML changes.
  return unescape_table_pipes(html)
