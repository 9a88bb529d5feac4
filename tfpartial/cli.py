"""The `tfpartial` command: `tfpartial demo`."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="tfpartial",
      description="Freeze part of a TensorFlow variable during training.")
  commands = parser.add_subparsers(dest="command", required=True)
  commands.add_parser(
      "demo",
      help="the two classic questions in a TF1 graph and TF2, side by side",
      description="Runs the two classic questions (fix x[0]; train only the "
      "diagonal) in a TF1 Session, eagerly and in tf.function, then the "
      "hand-made workarounds beside tfpartial, and prints the numbers.")
  return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the command line; returns the exit status."""
  args = _parser().parse_args(argv)
  if args.command == "demo":
    from tfpartial import _demo  # pylint: disable=g-import-not-at-top
    return _demo.main()
  raise AssertionError(args.command)


if __name__ == "__main__":
  sys.exit(main())
