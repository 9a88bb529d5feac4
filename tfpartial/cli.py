"""The `tfpartial` command: `demo`, `verify`, `bench` and `scan`.

Only the standard library is imported here, so that `--help` and usage
errors answer at once; TensorFlow is imported when a command runs, quietly
(see `_import_tensorflow_quietly`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import importlib.util
import io
import os
import re
import signal
import sys
import tempfile
from typing import (Any, Callable, NoReturn, Optional, Sequence, TextIO,
                    cast)


class _Parser(argparse.ArgumentParser):
  """argparse, with a usage error as one line that points to `--help`."""

  def error(self, message: str) -> NoReturn:
    if message == "the following arguments are required: command":
      message = "name a command: demo, verify, bench or scan"
    unknown = re.match(r"argument command: invalid choice: (\S+)", message)
    if unknown:
      message = (f"unknown command {unknown.group(1)}: the commands are "
                 "demo, verify, bench and scan")
    self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} "
              "--help')\n")


def _parser() -> argparse.ArgumentParser:
  parser = _Parser(
      prog="tfpartial",
      description="Freeze part of a TensorFlow variable during training.")
  commands = parser.add_subparsers(dest="command", required=True)
  for add in (_add_demo, _add_verify, _add_bench, _add_scan):
    add(commands)
  return parser


def _add_demo(commands: Any) -> None:
  demo = commands.add_parser(
      "demo",
      help="the two classic questions in a TF1 graph and TF2, side by side",
      description="Runs the two classic questions (fix x[0]; train only the "
      "diagonal) in a TF1 Session, eagerly and in tf.function, then the "
      "hand-made workarounds beside tfpartial, and prints the numbers.")
  demo.add_argument(
      "--plot", metavar="FILE.png",
      help="also draw the frozen element's drift, step by step, into "
      "FILE.png (needs matplotlib: pip install 'tfpartial[plot]')")


def _add_verify(commands: Any) -> None:
  verify = commands.add_parser(
      "verify",
      help="prove from two checkpoints that no frozen element changed",
      description="Compares BEFORE and AFTER (TF1 Saver or TF2 "
      "tf.train.Checkpoint prefixes or folders, Keras .keras archives or "
      ".weights.h5 files) variable by variable under SPEC, bit for bit, "
      "with the names spec.to_json() writes. Exit 0 when every frozen "
      "element is unchanged, 1 when one changed, 2 on bad input.")
  verify.add_argument("before", help="the checkpoint before training")
  verify.add_argument("after", help="the checkpoint after training")
  verify.add_argument("--spec", required=True,
                      help="the spec file (JSON) saying what is frozen; a "
                      "key may be a pattern: * within a name segment, ** "
                      "across segments, ? one character")
  verify.add_argument("--explain", action="store_true",
                      help="also print which names each key of the spec "
                      "matched")


def _add_bench(commands: Any) -> None:
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
      "TF1 train op and a first tf.function step, ResNet50 and others; (o) "
      "sparse fine-tuning: a 10M-element variable 0.1% to 50% trainable at "
      "scattered positions, compact, Keras Adam and v1 Adam, against plain "
      "and against the default spec; (p) wrap().minimize against "
      "spec.minimize in a TF1 graph; (q) a canned DNNClassifier with the "
      "legacy Adam (TensorFlow 2.15: tf.estimator).")
  bench.add_argument("--quick", action="store_true",
                     help="tiny sizes, to check that every case runs (no "
                     "targets: the numbers mean nothing)")
  bench.add_argument("--rounds", type=_positive, default=None,
                     help="rounds of one plain and one tfpartial step per case, "
                     "exactly (default 200, fewer for slow steps)")
  bench.add_argument("--case", type=_bench_cases, default=None,
                     help="the cases to run, by letter, e.g. 'j,k' (default "
                     f"all: {','.join(_BENCH_CASES)})")


def _add_scan(commands: Any) -> None:
  scan = commands.add_parser(
      "scan",
      help="find hand-made partial freezing in code, say why it drifts, "
      "print the port",
      description="Reads the .py files and notebook code cells under each "
      "PATH, without importing or running them, and reports each "
      "hand-made partial freeze (grads-mask, stop-gradient-mix, "
      "shadow-variable, write-back, var-list-filter, weight-remask): "
      "where, what it does, why it drifts with what is in scope, and its "
      "tfpartial port. A comment '# tfpartial: ignore[ID,...]' (or a bare "
      "'# tfpartial: ignore') on a finding's line suppresses it. Exit 0 "
      "when nothing is found, 1 when something is, 2 on bad input.")
  scan.add_argument("paths", nargs="+", metavar="PATH",
                    help="files or folders to scan")
  scan.add_argument("--format", choices=("text", "json", "sarif"),
                    default="text", help="the report's format (default "
                    "text: path:line:col: id: message, then the port)")
  scan.add_argument("--diff", action="store_true",
                    help="print one unified diff porting every finding "
                    "that ports mechanically (git apply, patch -p1); the "
                    "others are listed on stderr as 'port by hand'")
  scan.add_argument("--baseline", metavar="FILE",
                    help="report only the findings FILE does not hold (a "
                    "file written by --write-baseline or --format json), "
                    "so that CI fails only on new findings")
  scan.add_argument("--write-baseline", metavar="FILE",
                    help="write every finding to FILE, as the baseline for "
                    "--baseline, and exit 0")
  scan.add_argument("--exit-zero", action="store_true",
                    help="exit 0 even when something is found (bad input "
                    "is still 2)")


_BENCH_CASES = "abcdefghijklmnopqr"  # As _bench.LETTERS, without importing it.


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


# What TensorFlow's libraries log through absl before anything can set
# absl's threshold (absl prints it all until InitializeLog is called).
_ABSL_BANNER = "WARNING: All log messages before absl::InitializeLog()"
_ABSL_RECORD = re.compile(r"^([IWEF])\d{4} ")
_LEVELS = "IWEF"  # TF_CPP_MIN_LOG_LEVEL 1 hides I, 2 hides W too, 3 hides E.


def _import_tensorflow_quietly() -> None:
  """Imports TensorFlow for a command without its C++ start-up log.

  Sets TF_CPP_MIN_LOG_LEVEL=3 for this process unless the user set it
  (tfpartial the library never touches the environment). That level does
  not reach what TensorFlow's libraries log while they load, before absl's
  logging is set up (oneDNN, "Could not find cuda drivers"): those records
  go to file descriptor 2 directly. So the import runs with descriptor 2
  sent to a temporary file, and what it wrote is then passed on, less the
  records below the level.
  """
  if "tensorflow" in sys.modules:
    return  # Imported already: the process is someone else's.
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  try:
    hidden = int(os.environ["TF_CPP_MIN_LOG_LEVEL"])
  except ValueError:
    hidden = 0
  try:
    sys.stderr.flush()
    saved = os.dup(2)
  except (OSError, ValueError, AttributeError):  # No descriptor 2.
    importlib.import_module("tensorflow")
    return
  with tempfile.TemporaryFile(mode="w+b") as log:
    os.dup2(log.fileno(), 2)
    try:
      importlib.import_module("tensorflow")
    finally:
      sys.stderr.flush()
      os.dup2(saved, 2)
      os.close(saved)
      log.seek(0)
      kept = _kept_records(log.read().decode("utf-8", "replace"), hidden)
      if kept:
        sys.stderr.write(kept)
        sys.stderr.flush()


def _kept_records(text: str, hidden: int) -> str:
  """`text` less absl's banner and the absl records TF_CPP_MIN_LOG_LEVEL
  hides; any other line (a Python warning, say) is kept."""
  kept = []
  for line in text.splitlines(keepends=True):
    if line.startswith(_ABSL_BANNER) and hidden >= 1:
      continue
    record = _ABSL_RECORD.match(line)
    if record and _LEVELS.index(record.group(1)) < hidden:
      continue
    kept.append(line)
  return "".join(kept)


def _say(line: str) -> None:
  """`line` on stderr, if there is one: never on stdout instead (`print`
  writes to stdout when `sys.stderr` is None, as with `2>&-`)."""
  if sys.stderr is None:
    return
  try:
    print(line, file=sys.stderr, flush=True)
  except (OSError, ValueError):
    pass  # Nowhere to say it.


class _Output(io.TextIOBase):
  """stdout for every command: a closed pipe (`| head -1`) or a full disk
  stops the output, never the command, so the exit status stays the
  command's own (verify's and scan's verdict, demo's)."""

  def __init__(self, stream: Optional[TextIO]):
    super().__init__()
    self._stream = stream
    self.failure: Optional[OSError] = None

  def write(self, text: str) -> int:
    self._guard(lambda stream: stream.write(text))
    return len(text)

  def flush(self) -> None:
    self._guard(lambda stream: stream.flush())

  @property
  def buffer(self) -> Optional["_Bytes"]:
    """The stream's bytes, guarded the same way (None if it has none)."""
    if getattr(self._stream, "buffer", None) is None:
      return None
    return _Bytes(self)

  def _guard(self, action: Callable[[TextIO], object]) -> None:
    if self._stream is None or self.failure is not None:
      return
    try:
      action(self._stream)
    except OSError as error:
      self.failure = error
      _silence(self._stream)


class _Bytes:
  """`_Output`'s binary side, for output that must keep its files' bytes
  (a diff of a latin-1 file)."""

  def __init__(self, output: _Output):
    self._output = output

  def write(self, data: bytes) -> int:
    self._output._guard(  # pylint: disable=protected-access
        lambda stream: stream.buffer.write(data))
    return len(data)

  def flush(self) -> None:
    self._output._guard(  # pylint: disable=protected-access
        lambda stream: stream.buffer.flush())


class _Stderr(io.TextIOBase):
  """stderr for messages: dropped when there is none (`2>&-`) or it
  fails, never sent to stdout instead."""

  def write(self, text: str) -> int:
    if sys.stderr is not None:
      try:
        sys.stderr.write(text)
      except (OSError, ValueError):
        pass
    return len(text)

  def flush(self) -> None:
    if sys.stderr is not None:
      try:
        sys.stderr.flush()
      except (OSError, ValueError):
        pass


def _silence(stream: TextIO) -> None:
  """Points `stream`'s descriptor at /dev/null, so that what Python still
  holds for it cannot fail again when it exits."""
  try:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, stream.fileno())
    os.close(null)
  except (OSError, ValueError, AttributeError):
    pass


def _verify(args: argparse.Namespace, out: TextIO) -> int:
  from tfpartial._tools.verify import (  # pylint: disable=g-import-not-at-top
      _verify as verify)
  try:
    return verify.verify(args.before, args.after, args.spec, out=out,
                         progress=sys.stderr, explain=args.explain)
  except (ValueError, TypeError, IndexError, OSError) as error:
    message = " ".join(str(error).split()) or type(error).__name__
    _say(f"tfpartial verify: error: {message}")
    return 2


def _scan(args: argparse.Namespace, out: TextIO) -> int:
  """Static: TensorFlow is never imported."""
  from tfpartial._tools.scan import _gate  # pylint: disable=g-import-not-at-top
  from tfpartial._tools.scan import _main  # pylint: disable=g-import-not-at-top
  version = "0"
  if args.format == "sarif":  # Reading the installed version costs imports.
    version = str(getattr(sys.modules.get("tfpartial"), "__version__", "0"))
  return _main.run(args.paths, args.format, args.diff, out=out,
                   err=_Stderr(), version=version, gate=_gate.Options(
                       args.baseline, args.write_baseline, args.exit_zero))


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the command line; returns the exit status (on Ctrl-C it says so
  in one line and ends the process at once with status 130)."""
  try:
    args = _parser().parse_args(argv)
  except SystemExit as done:  # --help, or a usage error already printed.
    return done.code if isinstance(done.code, int) else 2
  if args.command == "demo" and args.plot:
    folder = os.path.dirname(os.path.abspath(args.plot))
    if not os.path.isdir(folder):
      _say(f"tfpartial demo: error: --plot {args.plot}: there is no folder "
           f"{folder}")
      return 2
    if importlib.util.find_spec("matplotlib") is None:
      _say("tfpartial demo: error: --plot needs matplotlib: pip install "
           "'tfpartial[plot]'")
      return 2
  try:
    return _run(args)
  except KeyboardInterrupt:
    # Ctrl-C pressed again while this line is written changes nothing.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _say(f"tfpartial {args.command}: interrupted")
    # Leaving through the interpreter's shutdown with TensorFlow half
    # imported (or its threads mid-op) can still end the process by the
    # signal (status -2) instead of the command's own: the command is
    # done, so it exits now.
    for stream in (sys.stdout, sys.stderr):
      try:
        stream.flush()
      except (OSError, ValueError):
        pass
    os._exit(130)  # 128 + SIGINT, as a shell reports it.


def _run(args: argparse.Namespace) -> int:
  """Runs the command `args` name, once they are checked, its stdout
  guarded (`_Output`): the one place for every command."""
  out = _Output(sys.stdout)
  with contextlib.redirect_stdout(out):
    # A text stream as the commands use one (`write`, `flush`).
    code = _command(args, cast(TextIO, out))
  out.flush()
  if out.failure is not None and out.failure.errno != errno.EPIPE:
    # A reader that left (EPIPE) chose to; anything else is news.
    _say(f"tfpartial {args.command}: the output could not be written to "
         f"stdout ({os.strerror(out.failure.errno or 0)}); the exit status "
         "is still the command's own")
  return code


def _command(args: argparse.Namespace, out: TextIO) -> int:
  """Runs the command `args` name, writing what it prints to `out`."""
  if args.command == "scan":
    return _scan(args, out)
  _import_tensorflow_quietly()
  if args.command == "demo":
    from tfpartial._tools import _demo  # pylint: disable=g-import-not-at-top
    return _demo.main(plot=args.plot)
  if args.command == "verify":
    return _verify(args, out)
  if args.command == "bench":
    from tfpartial._tools.bench import _bench  # pylint: disable=g-import-not-at-top
    _bench.run(quick=args.quick, rounds=args.rounds, cases=args.case, out=out)
    return 0
  raise AssertionError(args.command)


if __name__ == "__main__":
  sys.exit(main())
