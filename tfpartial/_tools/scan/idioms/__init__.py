"""The idioms `tfpartial scan` finds, one module each (as pyupgrade keeps
one rewrite per file): each defines `IDIOM`, whose class holds the
idiom's detection, explanation, catalogue entry, SARIF rule and port. A
new idiom is a new module here and its (source, expected) test pairs."""

from __future__ import annotations

import importlib
import pkgutil
from typing import List

from tfpartial._tools.scan.idioms._idiom import Idiom


def all_idioms() -> List[Idiom]:
  """Every idiom of this folder, in the contract's order.

  >>> [i.id for i in all_idioms()][:2]
  ['grads-mask', 'stop-gradient-mix']
  """
  found = []
  for info in pkgutil.iter_modules(__path__):
    if info.name.startswith("_"):
      continue
    module = importlib.import_module(f"{__name__}.{info.name}")
    found.append(getattr(module, "IDIOM"))
  return sorted(found, key=lambda idiom: idiom.order)
