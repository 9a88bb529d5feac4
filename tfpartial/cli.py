"""The `tfpartial` command: `demo`, `verify` and `bench`."""

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
  verify = commands.add_parser(
      "verify",
      help="prove from two checkpoints that no frozen element changed",
      description="Compares BEFORE and AFTER (TF1 Saver or TF2 "
      "tf.train.Checkpoint prefixes or folders, or Keras .weights.h5 files) "
      "variable by variable under SPEC, bit for bit. Exit 0 when every "
      "frozen element is unchanged, 1 when one changed, 2 on bad input.")
  verify.add_argument("before", help="the checkpoint before training")
  verify.add_argument("after", help="the checkpoint after training")
  verify.add_argument("--spec", required=True,
                      help="the spec file (JSON) saying what is frozen")
  bench = commands.add_parser(
      "bench",
      help="the overhead of partial freezing on this machine, as ratios",
      description="Times the same training steps with and without "
      "tfpartial, interleaved in one process, and prints the median ratios "
      "and optimizer-state sizes: (a) an MLP with 30% of each kernel "
      "frozen, Keras AdamW, tf.function; (b) the same in a TF1 graph; (c) a "
      "500,000 x 64 embedding with 1,000 trainable rows, compact; (d) (a) "
      "with the hand-written grads * mask; (e) (a) compiled by XLA; (f) (b) "
      "with the hand-written grads * mask; (g) (b) without tfpartial's "
      "compiled kernel; (h) (b) with TF1 ref variables; (i) (a) without the "
      "compiled kernel; (j) 50 Dense(128) layers, first column of every "
      "kernel frozen, Keras SGD momentum, Adam, AdamW and v1 Momentum in a "
      "TF1 graph; (k) the MLP of (a) 1%, 50% and 99.9% frozen, Keras SGD; "
      "(l) (c) without compact; (m) peak memory above plain for one large "
      "variable, a fresh process per configuration; (n) the time to build a "
      "TF1 train op and a first tf.function step, ResNet50 and others.")
  bench.add_argument("--quick", action="store_true",
                     help="tiny sizes, to check that every case runs (no "
                     "targets: the numbers mean nothing)")
  bench.add_argument("--rounds", type=_positive, default=None,
                     help="rounds of one plain and one tfpartial step per case "
                     "(default 200)")
  bench.add_argument("--case", type=_bench_cases, default=None,
                     help="the cases to run, by letter, e.g. 'j,k' (default "
                     f"all: {','.join(_BENCH_CASES)})")
  return parser


_BENCH_CASES = "abcdefghijklmn"  # As _bench.LETTERS, without importing it.


def _bench_cases(text: str) -> str:
  letters = [part.strip().lower() for part in text.split(",") if part.strip()]
  unknown = [letter for letter in letters if letter not in _BENCH_CASES]
  if not letters or unknown or any(len(l) != 1 for l in letters):
    raise argparse.ArgumentTypeError(
        f"must be case letters from {_BENCH_CASES[0]} to {_BENCH_CASES[-1]} "
        f"separated by commas, e.g. 'j,k'; not {text!r}")
  return "".join(letters)


def _positive(text: str) -> int:
  try:
    number = int(text)
  except ValueError:
    number = 0
  if number < 1:
    raise argparse.ArgumentTypeError(f"must be a whole number >= 1, not {text!r}")
  return number


def _verify(args) -> int:
  from tfpartial import _verify as verify  # pylint: disable=g-import-not-at-top
  try:
    return verify.verify(args.before, args.after, args.spec)
  except (ValueError, TypeError, IndexError, OSError, KeyError) as error:
    print(f"\ntfpartial verify: error: {error}", file=sys.stderr)
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the command line; returns the exit status."""
  args = _parser().parse_args(argv)
  if args.command == "demo":
    from tfpartial import _demo  # pylint: disable=g-import-not-at-top
    return _demo.main()
  if args.command == "verify":
    return _verify(args)
  if args.command == "bench":
    from tfpartial import _bench  # pylint: disable=g-import-not-at-top
    _bench.run(quick=args.quick, rounds=args.rounds, cases=args.case)
    return 0
  raise AssertionError(args.command)


if __name__ == "__main__":
  sys.exit(main())
