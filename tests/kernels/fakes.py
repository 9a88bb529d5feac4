"""Stand-ins for the C++ compiler, and a fresh process to load the kernel in.

Most "builds" in `tests/kernels` run a fake compiler (a shell script given
as `$CXX`) that copies the kernel this process loaded, fails, hangs or
sleeps: a real build takes 20 s of CPU time or more. Anything that loads
a library runs in a fresh process (`child`), since a process loads the kernel's ops once.
"""

import json
import os
import pathlib
import subprocess
import sys

import tensorflow as tf

from tfpartial._kernels import _native

# A user id no account has: the owner of what "another user" made.
OTHER_UID = 54321
# The child's one line of JSON: what `library()` gave, and why.
CHILD = """
import json
from tfpartial._kernels import _native
library = _native.library()
print(json.dumps({
    "loaded": library is not None, "reason": _native.reason(),
    "ops": sorted(name for name in dir(library) if name.startswith(
        "tfpartial_") and not name.endswith("_eager_fallback"))}))
"""


def fake_compiler(tmp_path, name, body):
  """A `$CXX` that appends a line to `runs` each time, then runs `body`
  (sh, with `$out` the -o argument)."""
  script = tmp_path / name
  script.write_text(
      "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do\n"
      '  if [ "$1" = -o ]; then out=$2; fi; shift\ndone\n'
      f"echo run >> {tmp_path / (name + '.runs')}\n{body}\n")
  script.chmod(0o755)
  return str(script)


def source(copier):
  """The library the copier copies."""
  return pathlib.Path(pathlib.Path(copier + ".source").read_text())


def runs(cxx):
  """How many times the fake compiler `cxx` ran."""
  counted = pathlib.Path(cxx + ".runs")
  return len(counted.read_text().splitlines()) if counted.exists() else 0


def compile_library(tmp_path, source, name, tensorflow=False):
  """Compiles `source` into the library `name` (in well under a second:
  TensorFlow's C API header only)."""
  path = tmp_path / (name + ".cc")
  path.write_text(source)
  flags = ([f"-I{tf.sysconfig.get_include()}", *tf.sysconfig.get_link_flags()]
           if tensorflow else [])
  subprocess.run([_native.compiler(), "-shared", "-fPIC", str(path), "-o",
                  str(tmp_path / name), *flags], check=True,
                 capture_output=True)
  return tmp_path / name


def private(path):
  """`path`, made a folder of mode 0700."""
  path.mkdir(mode=0o700)
  path.chmod(0o700)
  return path


def child(tmp_path, cache, cxx, **env):
  """`CHILD` in a fresh process: (its JSON, its `tfpartial:` lines)."""
  environment = dict(os.environ, TFPARTIAL_CACHE=str(cache), CXX=cxx, **env)
  environment.pop(_native.SWITCH, None)
  run = tmp_path / "run"  # Nothing here can shadow a module.
  run.mkdir(exist_ok=True)
  result = subprocess.run([sys.executable, "-c", CHILD], cwd=run,
                          env=environment, capture_output=True, text=True,
                          timeout=300, check=False)
  assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
  said = [line for line in result.stderr.splitlines()
          if line.startswith("tfpartial:")]
  return json.loads(result.stdout.splitlines()[-1]), said


def copying(copier, library):
  """Makes the copier copy `library` from now on."""
  pathlib.Path(copier + ".source").write_text(str(library))
