"""Files from disk: one module opens them (`_frozen/_files.py`), one set of
tests says how.

First the module itself: a FIFO, a device, a socket, a folder, a missing
file, a permission denied, a symbolic link out of a confinement (or not
followed where links are not), a file too large, and one that grows or
shrinks while it is read. Then every reader that opens a file someone
else may have made (a spec file, the `.npy` mask it names, a Keras file
verify reads, a checkpoint file TensorFlow opens, the kernel cache's
records): each refuses the same files with the module's words after its
own context, and never blocks on a FIFO.
"""

import ctypes
import json
import os
import pathlib
import re
import socket
import stat
import subprocess
import sys

import numpy as np
import pytest

from tfpartial._frozen import _files
from tfpartial._frozen import _npy
from tfpartial._frozen import _safejson
from tfpartial._kernels import _cache
from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify import _h5

ROOT = pathlib.Path(__file__).parent.parent.parent
FIFO = "it is a FIFO (named pipe), not a regular file"
DEVICE = "it is a device, not a regular file"
FOLDER = "it is a folder, not a regular file"
SOCKET = "it is a socket, not a regular file"


def _fifo(path):
  os.mkfifo(path)  # Opened with no writer: must not hang.
  return FIFO


def _device(path):
  if not os.path.exists("/dev/zero"):
    pytest.skip("no /dev/zero here")
  os.symlink("/dev/zero", path)  # Named like a file; never read to its end.
  return DEVICE


def _folder(path):
  path.mkdir()
  return FOLDER


def _socket(path):
  server = socket.socket(socket.AF_UNIX)
  server.bind(str(path))
  server.close()  # The socket file stays.
  return SOCKET


def _missing(path):
  del path
  return "no such file"


NOT_FILES = {"FIFO": _fifo, "device": _device, "folder": _folder,
             "socket": _socket, "missing": _missing}


# --- The module ------------------------------------------------------------

@pytest.mark.parametrize("case", NOT_FILES)
def test_only_a_regular_file_is_opened(tmp_path, case):
  path = tmp_path / "f"
  problem = NOT_FILES[case](path)
  for open_ in (_files.open_regular, _files.open_descriptor,
                _files.check_regular):
    with pytest.raises(_files.Refused) as error:
      open_(path)
    assert str(error.value) == f"cannot read {path}: {problem}"
    assert error.value.problem == problem
    assert error.value.missing == (case == "missing")
  if case == "missing":  # Left for the library that opens it to say.
    _files.check_regular(path, missing_ok=True)


def test_a_regular_file_opens_and_reads_whole(tmp_path):
  path = tmp_path / "f"
  path.write_bytes(b"0123456789")
  descriptor, status = _files.open_descriptor(path)
  try:
    assert _files.read_bounded(descriptor, status, path, 10, "ten") == (
        b"0123456789")
  finally:
    os.close(descriptor)
  with _files.open_regular(path) as file:
    assert file.read() == b"0123456789"
  _files.check_regular(path)


def test_a_file_past_the_limit_is_refused_unread(tmp_path, monkeypatch):
  path = tmp_path / "f"
  path.write_bytes(b"x" * 11)
  reads = []
  monkeypatch.setattr(os, "read", lambda *args: reads.append(args) or b"")
  descriptor, status = _files.open_descriptor(path)
  try:
    with pytest.raises(_files.Refused, match=(
        rf"^cannot read {path}: it is larger than 10 bytes, the most$")):
      _files.read_bounded(descriptor, status, path, 10, "10 bytes, the most")
  finally:
    os.close(descriptor)
  assert not reads


@pytest.mark.parametrize("change", ["grows", "shrinks"])
def test_a_file_that_changes_while_read_is_refused(tmp_path, change):
  path = tmp_path / "f"
  path.write_bytes(b"x" * 100)
  descriptor, status = _files.open_descriptor(path)
  try:
    if change == "grows":  # A writer appends after the open.
      with open(path, "ab") as file:
        file.write(b"y" * 10**6)
    else:
      os.truncate(path, 50)
    with pytest.raises(_files.Refused, match=(
        r"it changed while it was read$")):
      _files.read_bounded(descriptor, status, path, 10**7, "the limit")
    # Never more than the file held when opened, and one byte.
    assert os.lseek(descriptor, 0, os.SEEK_CUR) <= 101
  finally:
    os.close(descriptor)


def test_a_symbolic_link_is_not_followed_where_links_are_not(tmp_path):
  (tmp_path / "target").write_bytes(b"x")
  os.symlink(tmp_path / "target", tmp_path / "link")
  folder = os.open(tmp_path, os.O_RDONLY)
  try:
    with pytest.raises(_files.Refused, match=(
        r"^cannot read link: it is a symbolic link, which is not followed "
        r"here$")):
      _files.open_descriptor("link", folder=folder, follow=False)
    descriptor, _ = _files.open_descriptor("target", folder=folder,
                                           follow=False)
    os.close(descriptor)
  finally:
    os.close(folder)


@pytest.mark.parametrize("name, problem", [
    ("../m.npy", r"leaves the folder \(it has '\.\.'\)"),
    ("a/../../m.npy", r"leaves the folder"),
    ("/etc/passwd", r"is an absolute path"),
    ("link.npy", r"leads outside the folder \(through a symlink\)"),
    ("inner/link.npy", r"leads outside the folder"),
])
def test_a_name_may_not_leave_its_folder(tmp_path, name, problem):
  folder = tmp_path / "specs"
  (folder / "inner").mkdir(parents=True)
  (tmp_path / "m.npy").write_bytes(b"x")
  os.symlink(tmp_path / "m.npy", folder / "link.npy")
  os.symlink(tmp_path, folder / "inner" / "up")
  os.symlink(folder / "inner" / "up" / "m.npy", folder / "inner" / "link.npy")
  with pytest.raises(_files.Refused, match=f"^'{name}' {problem}"):
    _files.confined(folder, name, "the folder")


def test_names_inside_the_folder_are_confined_to_it(tmp_path):
  (tmp_path / "masks").mkdir()
  (tmp_path / "masks" / "m.npy").write_bytes(b"x")
  os.symlink(tmp_path / "masks" / "m.npy", tmp_path / "link.npy")
  for name in ("masks/m.npy", "./masks/m.npy", "link.npy"):
    assert _files.confined(tmp_path, name, "the folder") == (
        tmp_path / "masks" / "m.npy").resolve()


_CAPABILITIES = (1, 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH.
_PR_CAPBSET_DROP = 24


def _as_a_user():
  """In the child, before it runs Python: root without the capabilities
  that let it read any file (so mode bits apply to it as to any user)."""
  if os.getuid() != 0:
    return
  libc = ctypes.CDLL(None, use_errno=True)
  for capability in _CAPABILITIES:
    if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
      raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _in_a_child(code):
  """The lines `code` prints, run where mode bits hold (a child)."""
  try:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        timeout=120, check=False, preexec_fn=_as_a_user,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
  except subprocess.SubprocessError as error:
    pytest.skip(f"cannot drop root's capabilities here: {error}")
  assert result.returncode == 0, result.stderr
  return result.stdout.strip().splitlines()


def test_permission_denied_is_said_so(tmp_path):
  path = tmp_path / "secret.json"
  path.write_text("{}")
  path.chmod(0)
  said = _in_a_child(
      "from tfpartial._frozen import _files, _safejson\n"
      f"for read in (_files.open_regular, lambda p: _safejson.read_file(p, p)):\n"
      "  try:\n"
      f"    read({str(path)!r})\n"
      "  except ValueError as error:\n"
      "    print(error)\n")
  assert said == [f"cannot read {path}: permission denied",
                  f"cannot read spec file '{path}': permission denied."]


# --- Every reader, the same way ---------------------------------------------

def _spec_file(folder, name):
  return _safejson.read_file(folder / name, str(folder / name))


def _mask_file(folder, name):
  return _npy.open_mask(folder, name, "'x' in the spec")


def _keras_file(folder, name):
  return _h5.open_file(str(folder / name))


def _checkpoint_index(folder, name):
  """verify checks the files TensorFlow opens by name itself."""
  return _checkpoints._check_files(str(folder / name.removesuffix(".index")))


def _cache_record(folder, name):
  descriptor = os.open(folder, os.O_RDONLY)
  try:
    return _cache.read_record(descriptor, folder, name)
  finally:
    os.close(descriptor)


# Reader -> (read(folder, name), the name it reads, how its message starts).
READERS = {
    "spec file": (_spec_file, "spec.json", "cannot read spec file '{path}': "),
    "mask file": (_mask_file, "m.npy", "'x' in the spec: cannot read 'm.npy': "),
    "Keras file": (_keras_file, "m.weights.h5", "cannot read {path}: "),
    "checkpoint": (_checkpoint_index, "ckpt.index", "cannot read {path}: "),
    "kernel cache": (_cache_record, "kernels-k.sha256", "cannot read {path}: "),
}


@pytest.mark.parametrize("case", ["FIFO", "device", "folder", "socket"])
@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_what_is_not_a_regular_file(tmp_path, reader,
                                                         case):
  read, name, start = READERS[reader]
  path = tmp_path / name
  problem = NOT_FILES[case](path)
  message = start.format(path=path) + problem
  if case == "device" and reader == "kernel cache":  # Follows no link.
    message = start.format(path=path) + (
        "it is a symbolic link, which is not followed here")
  if case == "device" and reader == "mask file":  # /dev is outside.
    message = ("'x' in the spec: 'm.npy' leads outside the spec file's "
               "folder (through a symlink); it must be inside that folder")
  refused = _cache.Unusable if reader == "kernel cache" else ValueError
  with pytest.raises(refused) as error:
    read(tmp_path, name)
  assert str(error.value).rstrip(".") == message


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_says_when_there_is_no_such_file(tmp_path, reader):
  read, name, start = READERS[reader]
  if reader in ("checkpoint", "kernel cache"):
    # Absent files are no build (the cache) or TensorFlow's own error.
    assert read(tmp_path, name) is None
    return
  with pytest.raises(ValueError) as error:
    read(tmp_path, name)
  message = start.format(path=tmp_path / name) + "no such file"
  assert str(error.value).rstrip(".") == message


def test_a_spec_file_that_grows_while_read_is_refused(tmp_path, monkeypatch):
  path = tmp_path / "spec.json"
  path.write_text('{"x": {"freeze": "0"}}')
  opened = _files.open_descriptor

  def open_then_grow(*args, **kwargs):
    found = opened(*args, **kwargs)
    with open(path, "a", encoding="utf-8") as file:
      file.write(" " * 10)  # Still JSON: only the size tells.
    return found

  monkeypatch.setattr(_files, "open_descriptor", open_then_grow)
  with pytest.raises(ValueError, match=(
      rf"^cannot read spec file '{path}': it changed while it was read\.$")):
    _safejson.read_file(path, str(path))


def test_a_spec_file_past_its_limit_is_refused_unread(tmp_path):
  path = tmp_path / "spec.json"
  with open(path, "wb") as file:
    file.truncate(_safejson.MAX_BYTES + 1)  # Sparse: no data written.
  with pytest.raises(ValueError, match=(
      r"it is larger than 16 MiB, the most a spec file may be")):
    _safejson.read_file(path, str(path))


def test_a_cache_record_past_its_limit_is_unusable(tmp_path):
  folder = tmp_path / "cache"
  folder.mkdir(mode=0o700)
  (folder / "kernels-k.failed").write_text("x" * 20000)
  with pytest.raises(_cache.Unusable, match=(
      r"it is larger than 16384 bytes, the most a cache record may hold")):
    _cache_record(folder, "kernels-k.failed")


# Reads that are not of untrusted files: the package's own C++ sources,
# this process's /proc entries (the kernel's CPU flags, bounded), and a
# library this process just built.
OWN_READS = {("_kernels/_build.py", "path.read_text()"),
             ("_tools/bench/_memory.py", 'open("/proc/self/status")'),
             ("_kernels/_isa.py", 'open(_CPUINFO, "rb")'),
             ("_kernels/_cache.py", "built.read_bytes()")}
READ = re.compile(r"(?<![\w.])(open|os\.open|io\.open|np\.load|"
                  r"np\.fromfile)\(|\.read_bytes\(\)|\.read_text\(\)")
# Opening to write, or a folder, is not reading a file.
NOT_READING = ("O_WRONLY", "_DIRECTORY", "os.devnull")


def test_no_reader_opens_a_file_another_way():
  """Every read of a file in the package goes through `_files` (the
  scanner, which imports nothing of the rest, reads its sources its own
  way)."""
  found = []
  for path in sorted((ROOT / "tfpartial").rglob("*.py")):
    relative = path.relative_to(ROOT / "tfpartial").as_posix()
    if relative.startswith("_tools/scan/") or relative == "_frozen/_files.py":
      continue
    for number, line in enumerate(path.read_text().splitlines(), 1):
      code = line.split("#")[0]
      if not READ.search(code) or any(word in code for word in NOT_READING):
        continue
      if any((relative, own) in OWN_READS and own in code
             for _, own in OWN_READS):
        continue
      found.append(f"{relative}:{number}: {line.strip()}")
  assert not found, "\n".join(found)
