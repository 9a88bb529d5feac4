"""`run`: `subprocess.run` of `python ...`, from a server that has imported
TensorFlow once.

The docs' examples, the legacy examples and the command-line tests run
hundreds of `python SCRIPT` / `python -m tfpartial ...` processes; each spent
most of its time importing TensorFlow. `run` takes the same arguments as
`subprocess.run(..., capture_output=True, text=True)` and gives the same
`CompletedProcess`, but a `python` command is run by a child forked from
`python_server_child.py`, which imported NumPy, TensorFlow and Keras (not
tfpartial) and ran nothing else (see its docstring for what the child sets up).

A command runs as a plain subprocess instead when it is not `python` with a
script, `-m` or `-c`, when it changes an environment variable read while
TensorFlow or Keras import (`TF_*`, `KERAS*`, `PYTHON*`, `HOME`, ...), or
when `TFPARTIAL_TESTS_FORK=0` (every command a real process: the way to
check that a result does not depend on the server).
"""

from __future__ import annotations

import atexit
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Callable, Dict, Mapping, Optional, Sequence

SERVER = pathlib.Path(__file__).with_name("python_server_child.py")
# Read while TensorFlow, Keras or the interpreter start: a child forked
# after those imports cannot honour a change of them.
_AT_IMPORT = re.compile(
    r"^(TF_|TENSORFLOW|KERAS|PYTHON|CUDA|XLA|OMP_|KMP_|MKL|LD_|MALLOC|"
    r"HOME$|XDG_|TMPDIR$|LANG|LC_)")
_LOCK = threading.Lock()
_server: Optional["_Server"] = None


class _Server:
  """The server process and a folder for its children's streams."""

  def __init__(self) -> None:
    self.env = dict(os.environ)
    self.folder = tempfile.mkdtemp(prefix="tfpartial-tests-")
    self.process = subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, str(SERVER)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, env=self.env, cwd=self.folder)
    ready = self.process.stdout.readline()
    if json.loads(ready or b"{}").get("ready") is not True:
      raise RuntimeError(f"the python server did not start: {ready!r}")
    self.count = 0

  def serves(self, env: Mapping[str, str]) -> bool:
    keys = set(env) | set(self.env)
    return all(env.get(key) == self.env.get(key)
               for key in keys if _AT_IMPORT.match(key))

  def run(self, argv: Sequence[str], cwd: str, env: Mapping[str, str],
          timeout: Optional[float], stdin: str) -> Optional[int]:
    self.count += 1
    out = os.path.join(self.folder, f"{self.count}.out")
    err = os.path.join(self.folder, f"{self.count}.err")
    request = {"argv": list(argv), "cwd": cwd, "env": dict(env),
               "stdin": stdin, "stdout": out, "stderr": err,
               "timeout": timeout}
    self.process.stdin.write(json.dumps(request).encode() + b"\n")
    self.process.stdin.flush()
    reply = self.process.stdout.readline()
    if not reply:
      raise RuntimeError("the python server ended")
    return json.loads(reply)["status"]

  def close(self) -> None:
    self.process.stdin.close()
    self.process.wait(timeout=60)
    self.process.stdout.close()  # Else unclosed at exit: a ResourceWarning.
    shutil.rmtree(self.folder, ignore_errors=True)


def _python_argv(args: Sequence[str]) -> Optional[Sequence[str]]:
  """What follows `python` when `args` runs a script, -m or -c, else None."""
  if len(args) < 2 or args[0] != sys.executable:
    return None
  if args[1] in ("-m", "-c"):
    return args[1:] if len(args) > 2 else None
  return None if args[1].startswith("-") else args[1:]


def served(args: Sequence[str], env: Optional[Dict[str, str]] = None) -> bool:
  """Whether `run(args, env=env)` runs in a child of the python server."""
  env = dict(os.environ if env is None else env)
  return (_python_argv(list(map(str, args))) is not None
          and os.environ.get("TFPARTIAL_TESTS_FORK") != "0"
          and _the_server().serves(env))


def _the_server() -> _Server:
  global _server
  if _server is None or _server.process.poll() is not None:
    _server = _Server()
    atexit.register(_server.close)
  return _server


def run(args: Sequence[str], *, cwd=None, env: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None, input: Optional[str] = None,  # pylint: disable=redefined-builtin
        check: bool = False) -> subprocess.CompletedProcess:
  """`subprocess.run(args, capture_output=True, text=True, ...)`, faster."""
  env = dict(os.environ if env is None else env)
  argv = _python_argv(list(map(str, args)))
  with _LOCK:
    server = None
    if argv is not None and os.environ.get("TFPARTIAL_TESTS_FORK") != "0":
      server = _the_server()
      if not server.serves(env):
        server = None
    if server is None:
      return subprocess.run(list(args), cwd=cwd, env=env, timeout=timeout,
                            input=input, capture_output=True, text=True,
                            check=check)
    stdin = os.devnull
    if input is not None:
      stdin = os.path.join(server.folder, "stdin")
      pathlib.Path(stdin).write_text(input)
    status = server.run(argv, os.path.abspath(cwd or os.getcwd()), env,
                        timeout, stdin)
    out = pathlib.Path(server.folder, f"{server.count}.out").read_text(
        errors="replace")
    err = pathlib.Path(server.folder, f"{server.count}.err").read_text(
        errors="replace")
  if status is None:
    raise subprocess.TimeoutExpired(list(args), timeout, out, err)
  result = subprocess.CompletedProcess(list(args), status, out, err)
  if check:
    result.check_returncode()
  return result


# A loopback port picked free (bound to port 0, then released) can be taken
# by another process before a gRPC server binds it: `.ci/run` runs two tox
# envs at once, and every connection their servers and clients open draws
# from the same ephemeral ports. A CI run failed on it once (the sharded
# table example of docs/guides/distribute.md: "Could not start gRPC
# server"). A run that starts servers on ports it picks itself is run again,
# picking fresh ports, when that is how it failed; any other failure stands.
PORT_TAKEN = "Could not start gRPC server"


def until_ports_bind(attempt: Callable[[], subprocess.CompletedProcess],
                     tries: int = 3) -> subprocess.CompletedProcess:
  """`attempt()` until it did not fail for a port taken meanwhile."""
  result = attempt()
  for _ in range(tries - 1):
    if result.returncode == 0 or PORT_TAKEN not in (result.stderr or ""):
      break
    result = attempt()
  return result
