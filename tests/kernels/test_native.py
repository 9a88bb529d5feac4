"""The compiled kernel's build and cache (`_native`, `_build`, `_cache`).

What a process loads is code it runs: the cache is used only when it is
the user's own (mode 0700), a library only after its checks, and a damaged
cache, a wrong library or a hung compiler never stops training. The
fake compilers and the fresh processes are `fakes`'.
"""

import os
import pathlib
import re
import shutil
import stat
import threading
import time

import pytest

import fakes
from tfpartial._kernels import _build
from tfpartial._kernels import _cache
from tfpartial._kernels import _native
from tfpartial._kernels import _settings

# A library that registers one op under the kernel's first op's name, as
# a build of an older source would: loadable, but without the others.
WRONG_OPS = """
#include "tensorflow/c/ops.h"
__attribute__((constructor)) static void tiny_register() {
  TF_OpDefinitionBuilder* builder =
      TF_NewOpDefinitionBuilder("TfpartialApplyAdam");
  TF_OpDefinitionBuilderAddOutput(builder, "out: float");
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  TF_DeleteStatus(status);
}
"""
# A library that leaves a mark when it is loaded: an attacker's.
PLANTED = """
#include <cstdio>
__attribute__((constructor)) static void planted() {
  if (FILE* mark = std::fopen("%s", "w")) std::fclose(mark);
}
"""


# Item 4: say when it builds.


def test_a_build_says_so_once_and_a_cached_load_says_nothing(
    tmp_path, copier):
  cache = tmp_path / "cache"
  first, said = fakes.child(tmp_path, cache, copier)
  assert first["loaded"] and first["ops"] == sorted(_build.ops()), first
  assert len(said) == 1, said
  assert said[0].startswith("tfpartial: building its compiled kernels "
                            "(kernels.cc, TensorFlow ")
  for words in (f"cached in {cache}", "TFPARTIAL_KERNELS=off",
                "no build for this TensorFlow and compiler yet"):
    assert words in said[0], said[0]
  again, said = fakes.child(tmp_path, cache, copier)
  assert again["loaded"] and said == []
  assert fakes.runs(copier) == 1


# Item 2: a damaged cache never crashes training.


def test_a_truncated_library_is_rebuilt_not_loaded(tmp_path, copier):
  cache = fakes.private(tmp_path / "cache")
  _build.build(cache, copier)
  (library,) = cache.glob("kernels-*.so")
  with open(library, "r+b") as stream:
    stream.truncate(4096)
  # Loading it would end the process with a bus error.
  result, said = fakes.child(tmp_path, cache, copier)
  assert result["loaded"] and result["ops"] == sorted(_build.ops())
  assert "because the cached one is unusable" in said[0], said
  assert "does not match the digest" in said[0], said
  assert fakes.runs(copier) == 2


def test_a_library_swapped_for_another_fails_its_digest(tmp_path, copier):
  cache = fakes.private(tmp_path / "cache")
  library = _build.build(cache, copier)
  wrong = fakes.compile_library(tmp_path, WRONG_OPS, "wrong.so", True)
  shutil.copyfile(wrong, library)
  folder = _cache.open_private(cache)
  try:
    with pytest.raises(_cache.Unusable, match=(
        f"^{re.escape(str(library))} does not match the digest in ")):
      _cache.open_library(folder, cache, _build.cache_key(copier))
  finally:
    os.close(folder)


def test_a_library_that_lacks_the_ops_is_refused_even_with_its_digest(
    tmp_path, copier):
  cache, kernel = fakes.private(tmp_path / "cache"), fakes.source(copier)
  # Built, so with its digest: an older source's build, say.
  fakes.copying(copier,
                fakes.compile_library(tmp_path, WRONG_OPS, "wrong.so", True))
  _build.build(cache, copier)
  fakes.copying(copier, kernel)
  result, said = fakes.child(tmp_path, cache, copier)
  # Its op now hides the rebuilt library's: this process goes without.
  assert not result["loaded"], result
  assert result["reason"].endswith("lacks the ops tfpartial_apply_adam")
  assert "lacks the ops tfpartial_resource_apply_adam, " in said[0], said
  assert said[1].startswith("tfpartial: running without the compiled "
                            "kernel: "), said
  assert not list(cache.glob("*.failed"))  # Not the build's fault.
  # The next process loads the rebuilt library, without a word.
  result, said = fakes.child(tmp_path, cache, copier)
  assert result["loaded"] and result["ops"] == sorted(_build.ops())
  assert said == [] and fakes.runs(copier) == 2


def test_every_op_the_fused_updates_call_is_checked(compiled_kernel):
  package = pathlib.Path(_native.__file__).parent
  called = set()
  for module in package.parent.rglob("_fused*.py"):
    called |= set(re.findall(r"\.(tfpartial_\w+)", module.read_text()))
  assert called and called <= set(_build.ops())
  assert all(hasattr(_native.library(), op) for op in _build.ops())


# Item 1: no code execution through the cache.


def test_no_predictable_temporary_folder_is_used(tmp_path, copier):
  # Before: with the cache unwritable, the kernel was loaded from
  # $TMPDIR/tfpartial-UID, where anyone could plant a library first.
  temporary = tmp_path / "tmp"
  planted = temporary / f"tfpartial-{os.getuid()}"
  planted.mkdir(parents=True)
  mark = tmp_path / "planted_code_ran"
  name = _build.build(fakes.private(tmp_path / "scratch"), copier).name
  shutil.copyfile(fakes.compile_library(tmp_path, PLANTED % mark, "planted.so"),
                  planted / name)
  if os.getuid() == 0:
    os.chown(planted, fakes.OTHER_UID, fakes.OTHER_UID)
  planted.chmod(0o777)
  (tmp_path / "a_file").write_text("")
  result, said = fakes.child(tmp_path, tmp_path / "a_file" / "cache", copier,
                        TMPDIR=str(temporary))
  assert not mark.exists()
  assert not result["loaded"]
  assert result["reason"] == (f"the cache folder {tmp_path}/a_file/cache "
                              f"cannot be made (Not a directory)")
  assert said == ["tfpartial: running without the compiled kernel: "
                  + result["reason"]]
  assert sorted(p.name for p in temporary.iterdir()) == [planted.name]
  assert [p.name for p in planted.iterdir()] == [name]


def _other_owner(folder):
  if os.getuid() == 0:
    os.chown(folder, fakes.OTHER_UID, fakes.OTHER_UID)
    return folder, f"belongs to uid {fakes.OTHER_UID}, not to this user (uid 0)"
  root = pathlib.Path("/")
  if root.stat().st_uid == os.getuid():
    pytest.skip("no folder of another user to try")
  return root, f"belongs to uid {root.stat().st_uid}, not to this user"


@pytest.mark.parametrize("unsafe", ["0755", "0750", "0711", "0777", "0701",
                                    "1777", "other_owner"])
def test_a_cache_folder_others_can_enter_is_refused_and_left_as_it_was(
    tmp_path, copier, unsafe, capfd):
  folder = fakes.private(tmp_path / "cache")
  _build.build(folder, copier)  # A good library sits there.
  if unsafe == "other_owner":
    folder, problem = _other_owner(folder)
  else:
    folder.chmod(int(unsafe, 8))
    problem = f"has mode {unsafe}, not 0700"
  before = os.stat(folder)
  library, why = _native.load(copier, folder)
  assert library is None and problem in why, why
  assert why.startswith(f"the cache folder {folder} ")
  if unsafe != "other_owner":
    assert f"`chmod 700 {folder}`" in why
  assert "TFPARTIAL_CACHE" in why
  after = os.stat(folder)
  assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)
  assert fakes.runs(copier) == 1  # Nothing built there either.
  assert (capfd.readouterr().err ==
          f"tfpartial: running without the compiled kernel: {why}\n")


@pytest.mark.parametrize("variable", ["TFPARTIAL_CACHE", "XDG_CACHE_HOME",
                                      "HOME"])
def test_a_missing_cache_folder_is_made_private(
    tmp_path, failing, monkeypatch, variable):
  for name in ("TFPARTIAL_CACHE", "XDG_CACHE_HOME"):
    monkeypatch.delenv(name, raising=False)
  monkeypatch.setenv(variable, str(tmp_path / "base"))
  expected = {"TFPARTIAL_CACHE": tmp_path / "base",
              "XDG_CACHE_HOME": tmp_path / "base" / "tfpartial",
              "HOME": tmp_path / "base" / ".cache" / "tfpartial"}[variable]
  assert _native.cache_dir() == expected
  umask = os.umask(0)  # The mode must not depend on the user's umask.
  try:
    library, why = _native.load(failing, _native.cache_dir())
  finally:
    os.umask(umask)
  assert library is None and "fatal error: no headers" in why
  assert stat.S_IMODE(expected.stat().st_mode) == 0o700
  assert stat.S_IMODE(expected.parent.stat().st_mode) == 0o700


def _cached(tmp_path, copier):
  """A private cache holding a good build; (folder, library, key)."""
  cache = fakes.private(tmp_path / "cache")
  return cache, _build.build(cache, copier), _build.cache_key(copier)


def _group_writable(library):
  library.chmod(0o720)
  return "{library} has mode 0720: group or others may write it"


def _symbolic_link(library):
  target = library.with_name("elsewhere.so")
  library.rename(target)
  library.symlink_to(target)
  return "cannot read {library}: it is a symbolic link, which is not followed"


def _fifo(library):
  library.unlink()
  os.mkfifo(library, 0o600)
  return "cannot read {library}: it is a FIFO (named pipe), not a regular file"


def _someone_elses(library):
  if os.getuid() != 0:
    pytest.skip("only root can give a file away")
  os.chown(library, fakes.OTHER_UID, fakes.OTHER_UID)
  return f"{{library}} belongs to uid {fakes.OTHER_UID}, not to this user"


@pytest.mark.parametrize("spoil", [_group_writable, _symbolic_link, _fifo,
                                   _someone_elses], ids=lambda f: f.__name__)
def test_a_cached_library_that_fails_a_check_is_never_opened_for_loading(
    tmp_path, copier, spoil):
  cache, library, key = _cached(tmp_path, copier)
  problem = spoil(library)
  folder = _cache.open_private(cache)
  try:
    with pytest.raises(_cache.Unusable) as error:
      _cache.open_library(folder, cache, key)
  finally:
    os.close(folder)
  assert str(error.value).startswith(problem.format(library=library))


def test_a_record_that_names_another_file_is_refused(tmp_path, copier):
  cache, library, key = _cached(tmp_path, copier)
  record = cache / f"kernels-{key}.sha256"
  digest = record.read_text().split()[0]
  record.write_text(f"{digest}  ../kernels-{key}-{digest[:16]}.so\n")
  folder = _cache.open_private(cache)
  try:
    with pytest.raises(_cache.Unusable,
                       match="is not a digest record tfpartial wrote"):
      _cache.open_library(folder, cache, key)
  finally:
    os.close(folder)


# Item 3: a hanging compiler.


def test_a_hanging_compiler_is_stopped_and_the_timeout_recorded(
    tmp_path, monkeypatch):
  pid = tmp_path / "pid"
  hanging = fakes.fake_compiler(tmp_path, "hanging",
                           f"sleep 30 &\necho $! > {pid}\nwait")
  cache = tmp_path / "cache"
  monkeypatch.setenv(_settings.TIMEOUT, "1")
  start = time.monotonic()
  library, why = _native.load(hanging, cache)
  assert time.monotonic() - start < 10
  assert library is None
  assert why.startswith(f"building kernels.cc failed: {hanging} did "
                        f"not finish within 1 s ($TFPARTIAL_BUILD_TIMEOUT, "
                        f"default 180) (recorded in {cache}/kernels-")
  assert why.endswith(".failed; raise TFPARTIAL_BUILD_TIMEOUT above 1 or "
                      "delete it to retry)")
  # The compiler's own children are stopped too.
  _assert_gone(int(pid.read_text()))
  assert not list(cache.glob("*.so")) and not list(cache.glob(".*"))
  # Recorded: the next process does not wait again ...
  library, again = _native.load(hanging, cache)
  assert library is None and again.startswith("the last build failed: ")
  assert fakes.runs(hanging) == 1
  # ... until the timeout is raised above the one that ran out ...
  monkeypatch.setenv(_settings.TIMEOUT, "1.5")
  library, again = _native.load(hanging, cache)
  assert library is None and "within 1.5 s" in again, again
  assert fakes.runs(hanging) == 2
  # ... or the record is deleted.
  (failed,) = cache.glob("*.failed")
  failed.unlink()
  _native.load(hanging, cache)
  assert fakes.runs(hanging) == 3


def _assert_gone(pid):
  deadline = time.monotonic() + 5
  while time.monotonic() < deadline:
    try:
      state = pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
      return
    if state == "Z":  # Killed; waiting for its reaper.
      return
    time.sleep(0.05)
  raise AssertionError(f"the compiler's child {pid} still runs")


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan"])
def test_a_build_timeout_that_is_not_a_number_is_the_reason(
    tmp_path, failing, monkeypatch, value):
  monkeypatch.setenv(_settings.TIMEOUT, value)
  library, why = _native.load(failing, tmp_path / "cache")
  assert library is None
  assert why == (f"not building kernels.cc: TFPARTIAL_BUILD_TIMEOUT="
                 f"{value!r} is not a positive number of seconds")
  assert fakes.runs(failing) == 0 and not list((tmp_path / "cache").iterdir())


def test_without_a_working_compiler_there_is_no_kernel_and_a_reason(
    tmp_path, failing, monkeypatch):
  assert _native.load(None, tmp_path) == (None, _native.NO_COMPILER)
  cache = tmp_path / "cache"
  library, why = _native.load(failing, cache)
  assert library is None
  (failed,) = cache.glob("*.failed")
  assert why == (f"building kernels.cc failed: fatal error: no headers "
                 f"(recorded in {failed}; delete it to retry)")
  # The failure is recorded, so the next process does not build again.
  library, again = _native.load(failing, cache)
  assert library is None
  assert again == (f"the last build failed: fatal error: no headers "
                   f"(recorded in {failed}; delete it to retry)")
  assert fakes.runs(failing) == 1
  assert [p.suffix for p in cache.iterdir()] == [".failed"]  # No .so.
  monkeypatch.setenv(_native.SWITCH, "off")
  assert _native.library() is None
  assert _native.reason() == f"turned off by {_native.SWITCH}=off"


# Item 5: concurrent builds.


def test_concurrent_builds_never_show_a_record_without_its_library(
    tmp_path, kernel):
  # Each build writes other bytes (a trailing mark), slowly.
  slow = fakes.fake_compiler(
      tmp_path, "slow", f'head -c 100000 {kernel} > "$out"\nsleep 0.2\n'
      f'tail -c +100001 {kernel} >> "$out"\necho $$ >> "$out"')
  cache = fakes.private(tmp_path / "cache")
  key, seen, problems = _build.cache_key(slow), set(), []
  done = threading.Event()

  def read():
    folder = _cache.open_private(cache)
    try:
      while not done.is_set():
        try:
          found = _cache.open_library(folder, cache, key)
        except _cache.Unusable as error:
          problems.append(str(error))
          continue
        if found is not None:
          os.close(found[0])
          seen.add(found[1].name)
    finally:
      os.close(folder)

  reader = threading.Thread(target=read)
  reader.start()
  built = []
  builders = [threading.Thread(
      target=lambda: built.append(_build.build(cache, slow)))
              for _ in range(4)]
  for builder in builders:
    builder.start()
  for builder in builders:
    builder.join()
  # On a loaded machine the reader may not have run between the builds:
  # let it read the last library too (bounded), so that it always checks
  # at least one record against its library.
  deadline = time.monotonic() + 10
  while not seen and time.monotonic() < deadline:
    time.sleep(0.01)
  done.set()
  reader.join()
  assert problems == []
  assert len(set(built)) == 4 and seen <= {path.name for path in built}
  assert seen  # The reader saw the libraries the builds published.
  assert not [p for p in cache.iterdir() if p.name.startswith(".")]


def test_no_home_folder_means_no_kernel_not_a_crash(tmp_path, monkeypatch):
  def no_home():
    raise RuntimeError("Could not determine home directory.")

  for name in ("TFPARTIAL_CACHE", "XDG_CACHE_HOME"):
    monkeypatch.delenv(name, raising=False)
  monkeypatch.setattr(pathlib.Path, "home", no_home)
  monkeypatch.setattr(_native, "_loaded", [])
  monkeypatch.setenv("CXX", fakes.fake_compiler(tmp_path, "never", "exit 1"))
  assert _native.library() is None
  assert _native.reason() == ("no folder to cache the compiled kernel in "
                              "(Could not determine home directory.); set "
                              "TFPARTIAL_CACHE")


# The docs' claim (docs/kernel.md): the build asks for IEEE arithmetic.


def test_the_build_asks_for_every_operation_correctly_rounded(tmp_path):
  """No -ffast-math (or what it implies), and no FMA contraction, which
  GCC does by default: the kernel must round as TensorFlow's own does."""
  arguments = tmp_path / "arguments"
  cxx = tmp_path / "recorder"
  cxx.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {arguments}\nexit 1\n')
  cxx.chmod(0o755)
  with pytest.raises(_build.BuildFailed):
    _build.build(fakes.private(tmp_path / "cache"), str(cxx), timeout=60)
  given = arguments.read_text().splitlines()
  assert str(_build.SOURCE) in given  # It is the build's command.
  assert "-ffp-contract=off" in given
  unsafe = [flag for flag in given if flag in (
      "-ffast-math", "-Ofast", "-funsafe-math-optimizations",
      "-fassociative-math", "-freciprocal-math", "-ffinite-math-only",
      "-fno-signed-zeros") or flag.startswith("-ffp-contract=f")]
  assert not unsafe, unsafe
  # The last -ffp-contract wins: TensorFlow's flags must not override it.
  contract = [flag for flag in given if flag.startswith("-ffp-contract=")]
  assert contract[-1] == "-ffp-contract=off"
