"""What an idiom is: its catalogue entry, how it is found, explained and
ported, and the hit it finds. Each idiom is one module of this folder
defining `IDIOM`, an instance of an `Idiom` subclass."""

from __future__ import annotations

import abc
import ast
import dataclasses
from typing import ClassVar, Dict, List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._edits import Port
from tfpartial._tools.scan._labels import Labels

# The guide's page in the repository (and in the docs site built from it).
# No published address is known, so SARIF gets no `helpUri` (an absolute
# URI there would be a guess); each rule's help names this page instead.
GUIDE = "docs/migration.md"
PLAIN = ("holds only as long as nothing but the gradient moves these "
         "elements (plain SGD, finite gradients, no restore)")


@dataclasses.dataclass(frozen=True)
class Entry:
  """An idiom's line in the catalogue.

  Attributes:
    what: What the hand-made code does, in a phrase.
    anchor: The migration guide's section for it.
    port: The tfpartial port, in words.
    level: Its SARIF level.
  """

  what: str
  anchor: str
  port: str
  level: str = "warning"

  @property
  def link(self) -> str:
    """The guide's section, as a path in the repository."""
    return f"{GUIDE}#{self.anchor}"


@dataclasses.dataclass
class Hit:
  """One idiom at one node, before it is explained.

  Attributes:
    node: Where it is reported (the masking op, the mix, the write, the
      filter); it has a line and a column.
    scope: The function `node` is in.
    sink: The call that makes it matter (the apply, the write), if any.
    labels: The labels of what was masked, mixed or written.
  """

  node: ast.expr
  scope: _scopes.Scope
  sink: Optional[ast.Call] = None
  labels: Labels = dataclasses.field(default_factory=dict)

  @property
  def where(self) -> Tuple[int, int]:
    return (self.node.lineno, self.node.col_offset)


class Idiom(abc.ABC):
  """One hand-made idiom: found, explained and ported together."""

  id: ClassVar[str]
  order: ClassVar[int]  # Its place in the contract's table.
  entry: ClassVar[Entry]

  @abc.abstractmethod
  def detect(self, analysis: Analysis) -> Sequence[Hit]:
    """Every hit in the project."""

  @abc.abstractmethod
  def explain(self, hit: Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    """(what the code does, the reasons it drifts) for `hit`."""

  def port(self, hit: Hit, analysis: Analysis) -> Port:
    """The edits porting `hit`, or the reason it is by hand."""
    del hit, analysis
    return self.by_hand

  by_hand: ClassVar[str] = "port it as the guide's section says"

  def advice(self, hit: Hit) -> Tuple[str, str]:
    """(the guide's section, the port in words) for `hit`: the entry's,
    unless a kind of hit has its own."""
    del hit
    return self.entry.link, self.entry.port

  def rule(self) -> Dict[str, object]:
    """The idiom's SARIF rule."""
    return {
        "id": self.id,
        "name": "".join(part.title() for part in self.id.split("-")),
        "shortDescription": {"text": self.entry.what},
        "fullDescription": {"text": f"{self.entry.what}; port: "
                                    f"{self.entry.port}"},
        "help": {"text": f"See {self.entry.link}",
                 "markdown": f"See [the migration guide]({self.entry.link})."},
        "defaultConfiguration": {"level": self.entry.level},
    }


def line(node: object) -> int:
  return int(getattr(node, "lineno", 0))


def short(node: ast.AST) -> str:
  text = ast.unparse(node)
  return text if len(text) <= 50 else text[:47] + "..."


def restores(context: _context.Context) -> List[str]:
  """Why a restore undoes a write-back, if the module restores."""
  if not context.restores:
    return []
  first = context.restores[0]
  return [f"after `{short(first)}` (line {line(first)}) the next step "
          "writes the stale copy back over what was restored"]


def position(node: ast.AST) -> Tuple[int, int]:
  return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
