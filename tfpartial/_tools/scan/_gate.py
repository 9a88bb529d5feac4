"""What a scan in CI reports: findings less those suppressed inline
(`_suppress`) and those a baseline knows (`_baseline`), each with its
fingerprint; and the exit status (`--exit-zero` keeps 2 for bad input)."""

from __future__ import annotations

import dataclasses
from typing import Counter, List, Optional, Sequence

from tfpartial._tools.scan import _baseline
from tfpartial._tools.scan import _suppress
from tfpartial._tools.scan._files import Source
from tfpartial._tools.scan._finding import Finding


@dataclasses.dataclass(frozen=True)
class Options:
  """The command line's CI flags.

  Attributes:
    baseline: `--baseline FILE`: report only findings it does not hold.
    write_baseline: `--write-baseline FILE`: write every finding there.
    exit_zero: `--exit-zero`: exit 0 even with findings.
  """

  baseline: Optional[str] = None
  write_baseline: Optional[str] = None
  exit_zero: bool = False

  def known(self) -> Optional[Counter[_baseline.Key]]:
    """The baseline's findings (None without one); `ValueError` naming
    the flag and the file when it cannot be read."""
    if self.baseline is None or self.write_baseline is not None:
      return None
    try:
      return _baseline.load(self.baseline)
    except ValueError as error:
      raise ValueError(f"--baseline {self.baseline}: {error}") from None

  def status(self, findings: Sequence[Finding]) -> int:
    """0 without findings (or with `--exit-zero`), 1 with."""
    return 1 if findings and not self.exit_zero else 0


@dataclasses.dataclass
class Screened:
  """The findings to report, with what was left out."""

  findings: List[Finding]
  fingerprints: List[str]
  suppressed: int = 0
  known: Optional[int] = None  # None without a baseline.
  gone: int = 0
  notes: List[str] = dataclasses.field(default_factory=list)

  def summary(self, files: int) -> str:
    """The closing line on stderr."""
    line = f"tfpartial scan: {len(self.findings)} finding(s) in {files} file(s)"
    if self.known is not None:
      line += f"; {self.known} more known from the baseline"
      if self.gone:
        line += f" ({self.gone} of its findings no longer found)"
    if self.suppressed:
      line += f"; {self.suppressed} suppressed by `# tfpartial: ignore`"
    return line


def screen(findings: List[Finding], sources: Sequence[Source],
           known: Optional[Counter[_baseline.Key]]) -> Screened:
  """`findings` less those suppressed inline and those `known`."""
  lines = _suppress.FindingLines({s.path: s for s in sources})
  kept, suppressed, notes = _suppress.screen(findings, lines)
  prints = _baseline.fingerprints(kept, lines)
  if known is None:
    return Screened(kept, prints, suppressed, None, 0, notes)
  new, count, gone = _baseline.split(kept, prints, known,
                                     (s.path for s in sources))
  return Screened([kept[n] for n in new], [prints[n] for n in new],
                  suppressed, count, gone, notes)
