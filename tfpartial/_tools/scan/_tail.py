"""A file whose last block holds only comments: its body was commented
out (`for w in weights:` over `# print(w)`) or the file stops there, and
Python refuses the whole file for that one empty block. Read with a
`pass` closing the block, after the last line, the file keeps every line
where it was.

>>> print(closed("for w in ws:\\n    # print(w)\\n"), end="")
for w in ws:
    # print(w)
    pass
>>> closed("x = 1\\n") is None
True
"""

from __future__ import annotations

import re
from typing import Optional

_OPENS = re.compile(r"^(\s*)(?:(?:async\s+)?(?:for|while|with|def)\b|if\b|"
                    r"elif\b|else\b|try\b|except\b|finally\b|class\b).*:"
                    r"\s*(?:#.*)?$")


def closed(text: str) -> Optional[str]:
  """`text` with a `pass` closing its last block when that block opens
  on the last line of code and nothing but comments follows it (None
  otherwise)."""
  lines = text.rstrip().split("\n")
  last = len(lines) - 1
  while last >= 0 and (not lines[last].strip() or
                       lines[last].lstrip().startswith("#")):
    last -= 1
  found = _OPENS.match(lines[last]) if last >= 0 else None
  if found is None:
    return None
  indent = found.group(1).expandtabs(8) + "    "
  return "\n".join(lines) + f"\n{indent}pass\n"
