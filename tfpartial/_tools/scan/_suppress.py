"""Inline suppressions: `# tfpartial: ignore[grads-mask]` on a finding's
line drops that finding (several ids separated by commas; a bare
`# tfpartial: ignore` drops every finding on the line), in a notebook's
cell too. As ruff's `# noqa: CODE` and pylint's `# pylint: disable=`."""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Set, Tuple

from tfpartial._tools.scan import _lines
from tfpartial._tools.scan._files import Source
from tfpartial._tools.scan._finding import Finding

MARK = re.compile(r"#\s*tfpartial:\s*ignore\b(\[[^\]]*\])?", re.IGNORECASE)
ALL = frozenset({"*"})


class FindingLines:
  """The text of each finding's line, from the sources read (each split
  into lines once)."""

  def __init__(self, sources: Mapping[str, Source]):
    self._sources = sources
    self._lines: Dict[str, List[str]] = {}

  def text(self, finding: Finding) -> str:
    """The finding's line ("" if its source is not known)."""
    source = self._sources.get(finding.path)
    if source is None:
      return ""
    if finding.path not in self._lines:
      self._lines[finding.path] = source.text.split("\n")
    lines = self._lines[finding.path]
    number = source.line_of(finding.line, finding.cell)
    return lines[number - 1] if 0 < number <= len(lines) else ""


def ignored(line: str) -> Optional[Set[str]]:
  """The idioms the line's comment ignores: `ALL` for a bare mark, None
  without one.

  >>> sorted(ignored("g * m  # tfpartial: ignore[grads-mask, write-back]"))
  ['grads-mask', 'write-back']
  >>> ignored("x = '# tfpartial: ignore'") is None
  True
  """
  if "tfpartial" not in line.lower():
    return None
  mark = MARK.search(_lines.comment(line))
  if not mark:
    return None
  if mark.group(1) is None:
    return set(ALL)
  return {part.strip().lower() for part in mark.group(1)[1:-1].split(",")
          if part.strip()}


def screen(findings: List[Finding], lines: FindingLines
           ) -> Tuple[List[Finding], int, List[str]]:
  """(kept, how many were suppressed, notes): a note for each mark that
  names other idioms than the one found on its line (a typo, often)."""
  kept = []
  notes = []
  for finding in findings:
    names = ignored(lines.text(finding))
    if names is not None and (names == ALL or finding.idiom in names):
      continue
    if names is not None:
      cell = f" (cell {finding.cell})" if finding.cell else ""
      notes.append(f"{finding.path}:{finding.line}{cell}: "
                   f"`# tfpartial: ignore[{', '.join(sorted(names))}]` does "
                   f"not name {finding.idiom}, found on this line")
    kept.append(finding)
  return kept, len(findings) - len(kept), notes
