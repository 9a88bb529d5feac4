"""Hostile or damaged spec files: one clear error, never a wrong verdict.

Each case is a spec file (and whatever it names) that must be refused with a
ValueError by `tfpartial.load_spec` and with exit 2 and one line by
`tfpartial verify`: never a traceback, never a hang, never exit 0 or 1.
"""

import os
import pathlib
import re
import tracemalloc

import numpy as np
import pytest
import tensorflow as tf

import tfpartial
from tfpartial import cli
# Imported now, outside any test's capsys: verify's default streams were
# bound when it is imported (on main as this is written).
import tfpartial._tools.verify._verify  # pylint: disable=unused-import

SHAPE = (3, 4)


def _spec(text):
  return lambda folder: text


def _npy_spec(name):
  return f'{{"x": {{"freeze": {{"npy": "{name}"}}}}}}'


def _npz(folder):
  np.savez(folder / "m.npz", mask=np.ones(SHAPE, bool))
  return _npy_spec("m.npz")


def _header_claims_93_gib(folder):
  """A real .npy header whose shape needs 93 GiB, with 12 bytes of data."""
  header = {"descr": "|b1", "fortran_order": False,
            "shape": (100_000, 1_000_000)}
  with open(folder / "m.npy", "wb") as file:
    np.lib.format.write_array_header_1_0(file, header)
    file.write(b"\x01" * 12)
  return _npy_spec("m.npy")


def _text_file(folder):
  (folder / "m.npy").write_text(
      "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/sbin/nologin\n")
  return _npy_spec("m.npy")


def _wrong_shape(folder):
  np.save(folder / "m.npy", np.ones((2, 4), bool))
  return _npy_spec("m.npy")


def _wrong_dtype(folder):
  np.save(folder / "m.npy", np.ones(SHAPE, np.float64))
  return _npy_spec("m.npy")


def _outside(folder):
  np.save(folder.parent / "m.npy", np.ones(SHAPE, bool))
  return _npy_spec("../m.npy")


def _absolute(folder):
  np.save(folder.parent / "m.npy", np.ones(SHAPE, bool))
  return _npy_spec(str(folder.parent / "m.npy"))


def _symlink_out(folder):
  np.save(folder.parent / "m.npy", np.ones(SHAPE, bool))
  os.symlink(folder.parent / "m.npy", folder / "link.npy")
  return _npy_spec("link.npy")


DEEP = "[" * 100_000 + "]" * 100_000

CASES = {
    "variable named twice": (
        _spec('{"x": {"freeze": "0"}, "x": {"freeze": "1"}}'),
        r"the spec names 'x' twice"),
    "key repeated in an entry": (
        _spec('{"x": {"freeze": "0", "freeze": "1"}}'),
        r"'x' in the spec has the key \"freeze\" twice"),
    "JSON nested 100,000 deep": (
        _spec('{"x": {"freeze": ' + DEEP + '}}'),
        r"the spec nests JSON more than 16 levels deep"),
    "an .npz archive": (
        _npz, r"'m.npz' is not a .npy file: it is a zip archive \(an .npz\?\)"),
    "a header claiming 93 GiB": (
        _header_claims_93_gib,
        r"'m.npy' is damaged: its header promises shape \(100000, 1000000\), "
        r"100000000000 bytes of data, but the file holds 12"),
    "a text file": (_text_file, r"'m.npy' is not a .npy file"),
    "a mask of the wrong shape": (
        _wrong_shape,
        r"'m.npy' holds a mask of shape \(2, 4\), which does not fit "
        r"variable 'x' of shape \(3, 4\)"),
    "a mask of the wrong dtype": (
        _wrong_dtype, r"'m.npy' holds float64 values, not a boolean mask"),
    "a path out of the folder": (
        _outside, r"'\.\./m.npy' leaves the spec file's folder"),
    "an absolute path": (_absolute, r"is an absolute path"),
    "a symlink out of the folder": (
        _symlink_out, r"'link.npy' leads outside the spec file's folder"),
    "compact 1": (
        _spec('{"x": {"train_only": "0", "compact": 1}}'),
        r"\"compact\" must be true or false"),
    "bools and ints at different levels": (
        _spec('{"x": {"freeze": "[[True, False, True, False], [0, 1, 2, 3]]"}}'),
        r"the list mixes booleans and integers"),
}


@pytest.fixture
def folder(tmp_path):
  folder = tmp_path / "specs"
  folder.mkdir()
  return folder


@pytest.fixture
def x():
  return tf.Variable(np.arange(12, dtype=np.float32).reshape(SHAPE), name="x")


def _write_spec(folder, case):
  make, _ = CASES[case]
  path = folder / "spec.json"
  path.write_text(make(folder))
  return path


@pytest.mark.parametrize("case", CASES)
def test_load_spec_refuses(folder, x, case):
  path = _write_spec(folder, case)
  with pytest.raises(ValueError, match=CASES[case][1]):
    tfpartial.load_spec(path, [x])


def _checkpoints(tmp_path, x, change=None):
  checkpoint = tf.train.Checkpoint(x=x)
  before = checkpoint.write(str(tmp_path / "before" / "ckpt"))
  if change is not None:
    x.assign(change(x.numpy()))
  after = checkpoint.write(str(tmp_path / "after" / "ckpt"))
  return before, after


def _run_verify(capsys, before, after, spec):
  capsys.readouterr()
  code = cli.main(["verify", before, after, "--spec", str(spec)])
  return code, capsys.readouterr()


@pytest.mark.parametrize("case", CASES)
def test_verify_exits_2_with_one_line(tmp_path, folder, x, capsys, case):
  # x[0, 0] changes: the first entry of the duplicate freezes it.
  before, after = _checkpoints(tmp_path, x, lambda v: v + np.eye(3, 4))
  code, output = _run_verify(capsys, before, after, _write_spec(folder, case))
  assert code == 2, output
  lines = output.err.strip().splitlines()
  assert len(lines) == 1 and re.search(CASES[case][1], lines[0]), output.err


def test_verify_still_passes_a_good_npy_spec(tmp_path, folder, x, capsys):
  """The control for the cases above: the same files, well formed."""
  np.save(folder / "m.npy", np.eye(3, 4, dtype=bool) == 0)
  (folder / "spec.json").write_text(_npy_spec("m.npy"))
  before, after = _checkpoints(tmp_path, x, lambda v: v + np.eye(3, 4))
  code, output = _run_verify(capsys, before, after, folder / "spec.json")
  assert code == 0, output
  bad = _write_spec(folder, "a mask of the wrong dtype")
  code, output = _run_verify(capsys, before, after, bad)
  assert code == 2, output


def test_masks_in_subfolders_and_symlinks_inside_the_folder_load(folder, x):
  (folder / "masks").mkdir()
  mask = np.eye(3, 4, dtype=bool)
  np.save(folder / "masks" / "m.npy", mask)
  os.symlink(folder / "masks" / "m.npy", folder / "link.npy")
  for name in ("masks/m.npy", "link.npy", "./masks/m.npy"):
    (folder / "spec.json").write_text(_npy_spec(name))
    loaded = tfpartial.load_spec(folder / "spec.json", [x])
    np.testing.assert_array_equal(loaded.frozen_mask(x), mask)


def test_a_mask_of_leading_axes_loads_as_numpy_reads_it(folder, x):
  np.save(folder / "m.npy", np.array([True, False, True]))
  (folder / "spec.json").write_text(_npy_spec("m.npy"))
  loaded = tfpartial.load_spec(folder / "spec.json", [x])
  np.testing.assert_array_equal(loaded.frozen_mask(x),
                                tfpartial.freeze(x, [0, 2]).frozen_mask(x))


def test_a_large_npy_of_the_wrong_shape_is_refused_before_it_is_read(folder, x):
  """A sparse 256 MiB mask: the header is checked against the variable."""
  header = {"descr": "|b1", "fortran_order": False, "shape": (16384, 16384)}
  path = folder / "m.npy"
  with open(path, "wb") as file:
    np.lib.format.write_array_header_1_0(file, header)
    offset = file.tell()
  os.truncate(path, offset + 16384 * 16384)
  (folder / "spec.json").write_text(_npy_spec("m.npy"))
  tracemalloc.start()
  try:
    with pytest.raises(ValueError, match=r"holds a mask of shape \(16384, 16384\)"):
      tfpartial.load_spec(folder / "spec.json", [x])
    peak = tracemalloc.get_traced_memory()[1]
  finally:
    tracemalloc.stop()
  assert peak < 4 * 2**20, f"{peak / 2**20:.0f} MiB read to refuse the mask"


def test_a_spec_file_past_the_size_limit_is_refused_unread(folder, x):
  path = folder / "spec.json"
  path.write_text("{}")
  os.truncate(path, 16 * 2**20 + 1)  # Sparse: past the 16 MiB it may have.
  with pytest.raises(ValueError, match=r"is larger than 16 MiB"):
    tfpartial.load_spec(path, [x])


def _entries(count):
  return "{" + ",".join(f'"v{i}": {{"freeze": "0"}}' for i in range(count)) \
      + "}"


def _peak(function):
  """The peak bytes of Python's allocations while `function()` runs (a
  count, not a clock: the machines are shared)."""
  tracemalloc.start()
  try:
    function()
  finally:
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
  return peak


def test_a_spec_of_too_many_entries_is_refused_early(folder, x):
  """2M entries (55 MB) took 16 s and 1.4 GB before its first error; now
  the size refuses it unread, and 100,001 entries stop the decoding at
  the entry past the limit, in memory a small multiple of 100,000's."""
  huge = folder / "huge.json"
  huge.write_text(_entries(2_000_000))
  peak = _peak(lambda: pytest.raises(
      ValueError, tfpartial.load_spec, huge, [x]).match("larger than 16 MiB"))
  assert peak < 2**20, peak
  many = folder / "many.json"
  many.write_text(_entries(100_001))
  for given in (many, many.read_text()):
    peak = _peak(lambda: pytest.raises(
        ValueError, tfpartial.load_spec, given, [x]).match(
            r"more than 100,000 entries, the most a spec may have"))
    assert peak < 200 * 2**20, peak
  (folder / "enough.json").write_text(_entries(100_000))
  with pytest.raises(ValueError, match=r"names 'v0', which is not among"):
    tfpartial.load_spec(folder / "enough.json", [x])


def test_an_existing_file_wins_over_json_text(folder, x, monkeypatch):
  """A path that starts like JSON (`[exp 3]/spec.json`) names a file."""
  monkeypatch.chdir(folder)
  for name in ("[exp 3]", '"quoted"', "{braced}"):
    (folder / name).mkdir()
    (folder / name / "spec.json").write_text('{"x": {"freeze": "0"}}')
    spec = tfpartial.load_spec(f"{name}/spec.json", [x])
    assert spec.frozen_mask(x)[0].all() and not spec.frozen_mask(x)[1].any()


def test_json_text_with_a_byte_order_mark_is_json(folder, x):
  text = '\ufeff{"x": {"freeze": "0"}}'
  assert tfpartial.load_spec(text, [x]).frozen_mask(x)[0].all()
  (folder / "bom.json").write_bytes(text.encode("utf-8"))
  assert tfpartial.load_spec(folder / "bom.json", [x]).frozen_mask(x)[0].all()


# A spec or mask file that is not a regular file (a folder, a device, a
# FIFO), for every reader: tests/frozen/test_files.py.


def test_a_spec_file_that_is_not_utf8_is_a_clear_error(folder, x):
  (folder / "spec.json").write_bytes(b'{"x": {"freeze": "\xff"}}')
  with pytest.raises(ValueError, match=r"'.*spec.json' is not UTF-8 text"):
    tfpartial.load_spec(folder / "spec.json", [x])
