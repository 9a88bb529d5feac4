"""`tfpartial verify`: proof from two checkpoints that no frozen element moved.

Works on any codebase's checkpoints, tfpartial or not: the spec file says
what must hold, the checkpoints say what happened. Values are compared by
their bits, whatever the dtype: a NaN that stayed the same NaN is unchanged,
and -0.0 -> 0.0 is a change. Strings are compared byte for byte.

Everything the spec names is found, and its shape, dtype and index checked,
before any value is read; then one variable at a time is read and compared.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from typing import Dict, List, Optional, Protocol, TextIO, Tuple

import numpy as np

from tfpartial._frozen import _files
from tfpartial._frozen import _glob
from tfpartial._frozen import _patterns
from tfpartial._frozen import _specfile
from tfpartial._tools import _progress
from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify import _criteria
from tfpartial._tools.verify import _keras_archive
from tfpartial._tools.verify import _keras_files
from tfpartial._tools.verify import _keras_tree
from tfpartial._tools.verify import _located


class Out(Protocol):
  """Where the table goes: stdout, or anything `print` writes to."""

  def write(self, text: str, /) -> int: ...


def open_checkpoint(path: str) -> _checkpoints.Reader:
  """The reader for `path`: a `.keras` archive, a Keras `.h5` file, a
  folder of TF checkpoints or a checkpoint prefix."""
  text = str(path)
  if text.endswith(".keras"):
    return _keras_archive.Archive(text)
  if text.endswith((".h5", ".hdf5")):
    return _keras_files.open_h5(text)
  return _checkpoints.TensorFlowCheckpoint(text)


@dataclasses.dataclass
class Row:
  """What happened to one variable between the two checkpoints."""

  name: str
  shape: Tuple[int, ...]
  frozen: int
  changed_frozen: int
  largest_change: Optional[float]  # None: nothing changed, or not numbers.
  trainable: int
  changed_trainable: int
  criterion: str = ""  # The criteria that chose its frozen elements.


def verify(before: str, after: str, spec_path: str,
           out: Optional[Out] = None,
           progress: Optional[TextIO] = None, explain: bool = False) -> int:
  """Prints the table; returns 0 (every frozen element held) or 1.

  A pattern key of the spec (`_patterns`) is resolved against BEFORE's
  names; `explain` prints which names each key matched. A variable with a
  "saved" place (`_located`) is found there.

  Raises:
    ValueError, TypeError, IndexError: bad input (the caller exits 2).
  """
  out = sys.stdout if out is None else out
  data, directory = _specfile.read(spec_path)
  entries = list(_specfile.entries(data, directory))
  with contextlib.ExitStack() as stack:
    first = open_checkpoint(before)
    stack.callback(first.close)
    second = open_checkpoint(after)
    stack.callback(second.close)
    _check_two(first, second)
    expanded = _expand(entries, first)
    unsaved = [entry.name for entry, _ in expanded
               if entry.saved == {} and first.saved_format
               and second.saved_format]
    keyed = [(entry, key) for entry, key in expanded
             if entry.name not in unsaved]
    kept = [entry for entry, _ in keyed]
    located = (_located.resolve(kept, first), _located.resolve(kept, second))
    plan = _criteria.prepared(
        keyed, [_check(entry, first, second, located) for entry in kept],
        first.read)
    _check_freezes(entries, [key for _, key in keyed], plan)
    line = _progress.Progress(sys.stderr if progress is None else progress)
    stack.callback(line.close)
    rows = _rows(plan, first, second, line)
    compared = (os.path.realpath(first.path), os.path.realpath(second.path))
  print(f"before: {compared[0]}", file=out)
  print(f"after:  {compared[1]}", file=out)
  if explain:
    _explain(entries, expanded, out)
  _print_table(rows, out)
  if unsaved:
    print(f"not in the files: {len(unsaved)} variable(s) the model saves "
          f"in no file (its \"saved\" is empty): {', '.join(unsaved)}",
          file=out)
  broken = [row for row in rows if row.changed_frozen]
  for row in broken:
    largest = ("" if row.largest_change is None
               else f", the largest by {row.largest_change:.6g}")
    print(f"FAILED: {row.changed_frozen} frozen element(s) of '{row.name}' "
          f"changed{largest}", file=out)
  if not broken:
    print(f"OK: every frozen element of {len(rows)} variable(s) is "
          "bit-for-bit unchanged", file=out)
  return 1 if broken else 0


Plan = List[Tuple[_specfile.Entry, _checkpoints.Stored, _checkpoints.Stored]]


def _rows(plan: Plan, first: _checkpoints.Reader,
          second: _checkpoints.Reader, line: _progress.Progress) -> List[Row]:
  """Each variable read from both checkpoints and compared, one at a time.

  A variable several entries name (patterns that overlap, say) is one
  row: the union of their frozen elements, as `|` gives.
  """
  by_key: Dict[str, Plan] = {}
  for checked in plan:
    by_key.setdefault(checked[1].key, []).append(checked)
  rows = []
  for position, group in enumerate(by_key.values(), start=1):
    entry, stored_before, stored_after = group[0]
    line.show(f"reading {position}/{len(by_key)}: {entry.name} "
              f"{stored_before.shape}")
    values = first.read(stored_before)
    frozen, chosen_by = _criteria.frozen_by(
        [each for each, _, _ in group], stored_before.shape, values)
    rows.append(_compare(entry.name, stored_before.shape, frozen, values,
                         second.read(stored_after), chosen_by))
  return rows


def _expand(entries: List[_specfile.Entry], reader: _checkpoints.Reader
            ) -> List[Tuple[_specfile.Entry, str]]:
  """`_patterns.expand` over the file's names; ValueError for a pattern
  that may name a variable the file does not name, and, where a pattern
  matches nothing, what to pass instead."""
  unnamed = reader.unnamed()
  for entry in entries:
    if entry.pattern and unnamed:
      _refuse_unnamed(entry, unnamed, reader)
  try:
    return _patterns.expand(entries, reader.names())
  except ValueError as error:
    if not any(entry.pattern for entry in entries) or not (
        reader.saved_format):
      raise
    raise ValueError(f"{error} {_instead(reader)}") from None


def _refuse_unnamed(entry: _specfile.Entry, unnamed: List[str],
                    reader: _checkpoints.Reader) -> None:
  """ValueError if `entry`'s pattern could match a variable of `unnamed`
  (`LAYER/POSITION`), whatever its own name is."""
  glob = _patterns.compiled(entry.name)
  leaf = _glob.witness(entry.name.rsplit("/", 1)[-1])
  maybe = [name for name in unnamed
           if glob.fullmatch(name.rsplit("/", 1)[0] + "/" + leaf)]
  if maybe:
    shown = ", ".join(maybe[:3]) + (f", ... ({len(maybe)} in all)"
                                    if len(maybe) > 3 else "")
    raise ValueError(
        f"the spec's pattern '{entry.name}' may match variables that "
        f"{reader.path} stores without their names ({shown}: variables of "
        "layers whose class the file does not say, stored by position), so "
        f"what it names cannot be told from the file. {_instead(reader)}")


def _instead(reader: _checkpoints.Reader) -> str:
  """What to verify with where the file does not name a pattern's
  variables."""
  written = ("a spec written by to_json() from the model "
             "(tfpartial.load_spec(SPEC, model).to_json(PATH)), which records "
             "where the model saves each variable")
  if reader.saved_format == "checkpoint":
    return ("A tf.train.Checkpoint names a Keras variable by its path "
            f"through the object graph, not its Keras path; verify with "
            f"{written}.")
  if reader.path.endswith(".keras"):
    return f"Verify with {written}."
  return ("Pass the model's .keras archive (its config.json says the class "
          f"of each layer it lists), or verify with {written}.")


def _explain(entries: List[_specfile.Entry],
             expanded: List[Tuple[_specfile.Entry, str]], out: Out) -> None:
  """What each key matched, after its exclusions."""
  exclusions = {entry.name: entry.exclude for entry in entries
                if entry.pattern and entry.exclude}
  for key, names in _patterns.matches(expanded).items():
    less = (f" (less {', '.join(exclusions[key])})" if key in exclusions
            else "")
    print(f"{key}{less} -> {', '.join(names)}", file=out)


def _check_freezes(entries: List[_specfile.Entry], keys: List[str],
                   plan: Plan) -> None:
  """ValueError for a pattern entry that freezes no element of the
  variables it matches (before any value is read; a criterion ranked per
  variable, which needs the values, selects at least one element)."""
  for pattern in (entry for entry in entries if entry.pattern):
    named = [(entry, before.shape) for (entry, before, _), key
             in zip(plan, keys) if key == pattern.name]
    if not any(_criteria.might_freeze(entry, shape)
               for entry, shape in named):
      raise _specfile.freezes_nothing(pattern, len(named))


def _check_two(first: _checkpoints.Reader,
               second: _checkpoints.Reader) -> None:
  """ValueError where BEFORE and AFTER are one checkpoint (a folder whose
  `checkpoint` file names the other's prefix, a link to it)."""
  same = _files.identity(first.file)
  if same != (0, 0) and same == _files.identity(second.file):
    raise ValueError(
        f"BEFORE and AFTER are the same checkpoint, "
        f"{os.path.realpath(first.path)} (AFTER was given as "
        f"{second.path}): verify compares two checkpoints")


def _check(entry: _specfile.Entry, first: _checkpoints.Reader,
           second: _checkpoints.Reader,
           located: Tuple[Dict[str, _checkpoints.Stored],
                          Dict[str, _checkpoints.Stored]]
           ) -> Tuple[_specfile.Entry, _checkpoints.Stored,
                      _checkpoints.Stored]:
  """Finds `entry` in both checkpoints (where its "saved" place is, if
  `located` has it, else by name); ValueError unless they agree."""
  name = entry.name
  stored_before = _find(entry, first, located[0])
  stored_after = _find(entry, second, located[1])
  # A checkpoint's key is one of the variable's paths, which `compile`
  # changes; one found at its "saved" place is at the same place in both.
  by_place = first.layout == "tensorflow" and name in located[0] and (
      name in located[1])
  if first.layout == second.layout and not by_place and _keras_tree.place(
      stored_before.key) != _keras_tree.place(stored_after.key):
    raise ValueError(
        f"'{name}' is {stored_before.key} in {first.path} but "
        f"{stored_after.key} in {second.path}: a model restores a variable "
        "from one place, so one of the files names its layers otherwise "
        "than the model it was saved from; verify compares only what the "
        "same model would load")
  if stored_after.shape != stored_before.shape:
    raise ValueError(
        f"'{name}' has shape {stored_before.shape} in BEFORE but "
        f"{stored_after.shape} in AFTER")
  if stored_after.dtype != stored_before.dtype:
    raise ValueError(
        f"'{name}' is {stored_before.dtype} in BEFORE but "
        f"{stored_after.dtype} in AFTER; verify compares a variable's bits, "
        "so both checkpoints must hold it in the same dtype")
  if entry.shape is not None and tuple(entry.shape) != stored_before.shape:
    raise ValueError(
        f"the spec gives '{name}' the shape {tuple(entry.shape)}; the "
        f"checkpoint holds {stored_before.shape}")
  # Checks the index, before any read.
  _criteria.check_index(entry, stored_before.shape)
  return entry, stored_before, stored_after


_NOT_SAVED = {
    "h5": "Keras writes something else in its place, such as a LoRA "
          "kernel merged with its factors",
    "checkpoint": "TensorFlow's object graph does not reach it, such as "
                  "layers a keras_hub layer keeps in a list it makes in "
                  "build()"}


def _find(entry: _specfile.Entry, reader: _checkpoints.Reader,
          located: Dict[str, _checkpoints.Stored]) -> _checkpoints.Stored:
  """Where `reader` holds `entry`'s variable: at its "saved" place, else
  by name; ValueError where the spec says the model does not save it
  itself in this kind of file."""
  form = reader.saved_format
  if entry.name in located:
    return located[entry.name]
  if entry.saved is not None and form is not None and form not in (
      entry.saved):
    raise ValueError(
        f"'{entry.name}' is not in {reader.path} as itself: the spec says "
        "the model it was written from "
        + (f"does not save it so in this kind of file (its \"saved\" has "
           f"no \"{form}\" place: {_NOT_SAVED[form]}), so the file cannot "
           "show whether it changed; verify the model's files of another "
           "kind" if entry.saved else
           "saves it in no file (its \"saved\" is empty)"))
  return reader.find(entry.name, entry.shape)


def _compare(name: str, shape: Tuple[int, ...], frozen: np.ndarray,
             before: np.ndarray, after: np.ndarray, criterion: str = "") -> Row:
  before, after = np.asarray(before), np.asarray(after)
  differs = _differs(before, after)
  changed = differs & frozen
  largest = _largest(before[changed], after[changed]) if changed.any() \
      else None
  return Row(name, shape, int(frozen.sum()), int(changed.sum()), largest,
             int((~frozen).sum()), int((differs & ~frozen).sum()), criterion)


def _differs(before: np.ndarray, after: np.ndarray) -> np.ndarray:
  """Where the two differ: by their bits, or for strings byte for byte."""
  if before.dtype.kind == "O":  # TensorFlow's strings: bytes objects.
    return np.asarray(before != after, dtype=bool).reshape(before.shape)
  differs: np.ndarray = (_bits(before) != _bits(after)).any(axis=-1)
  return differs


def _bits(array: np.ndarray) -> np.ndarray:
  """Each element's bits as unsigned words, along a new last axis."""
  size = array.dtype.itemsize
  word = next(width for width in (8, 4, 2, 1) if size % width == 0)
  flat = np.ascontiguousarray(array.reshape(-1))
  return flat.view(f"u{word}").reshape(array.shape + (size // word,))


def _largest(before: np.ndarray, after: np.ndarray) -> Optional[float]:
  """The largest |after - before|; NaN if a NaN came or went; None for
  values that are not numbers."""
  kind = before.dtype.kind
  with np.errstate(invalid="ignore", over="ignore"):
    if kind == "c":
      deltas = np.abs(after.astype(np.complex128)
                      - before.astype(np.complex128))
    elif kind in "biuf" or (kind == "V" and before.dtype.names is None
                            and _is_number(before)):
      deltas = np.abs(after.astype(np.float64) - before.astype(np.float64))
    else:
      return None
  return float(np.nan if np.isnan(deltas).any() else deltas.max())


def _is_number(array: np.ndarray) -> bool:
  """Whether an ml_dtypes array (bfloat16, float8, int4) converts."""
  try:
    array[:0].astype(np.float64)
  except (TypeError, ValueError):
    return False
  return True


def _print_table(rows: List[Row], out: Out) -> None:
  header: Tuple[str, ...] = (
      "variable", "shape", "frozen", "frozen changed", "largest change",
      "trainable changed")
  lines = [header] + [
      (row.name, str(row.shape), str(row.frozen), str(row.changed_frozen),
       "-" if row.largest_change is None else f"{row.largest_change:.6g}",
       f"{row.changed_trainable}/{row.trainable}") for row in rows]
  # Which criterion chose each variable's frozen elements, where any did.
  if any(row.criterion for row in rows):
    header += ("criterion",)
    lines = [header] + [line + (row.criterion or "-",)
                        for line, row in zip(lines[1:], rows)]
  widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
  for line in lines:
    print("  ".join(cell.ljust(w) if i < 2 or i == 6 else cell.rjust(w)
                    for i, (cell, w) in enumerate(zip(line, widths))
                    ).rstrip(), file=out)
