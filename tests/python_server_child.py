"""A process that imports TensorFlow once and forks a child per script.

Started by `processes.py` (never imported by the tests). Importing
TensorFlow and Keras costs 3-15 s of a 2-core machine; the docs'
examples, the legacy examples and the command-line tests start hundreds of
`python` processes per run, and most of their time was that import. This
server imports them once, runs no TensorFlow op (so no runtime, thread pool
or device is set up, and a fork copies one thread), then for each request
forks a child that becomes the requested `python SCRIPT`, `python -m
MODULE` or `python -c CODE`: its own folder, environment, arguments,
`sys.path[0]`, standard streams, process group; exit status as Python's.

Protocol: one JSON request per line on stdin, one JSON reply per line on
stdout. A request: {"argv": [...], "cwd", "env", "stdin", "stdout",
"stderr" (file paths), "timeout"}; a reply: {"status": int} (negative: the
signal that ended it) or {"status": null} (timed out and killed).
"""

import json
import os
import sys

# What every child would import first; the reason this server exists.
# Not tfpartial: some children check what a process without it does (it
# loads in a quarter of a second).
import numpy  # pylint: disable=unused-import
import tensorflow  # pylint: disable=unused-import

try:
  import keras  # pylint: disable=unused-import,g-import-not-at-top
except ImportError:
  pass

import atexit  # pylint: disable=g-import-not-at-top,g-bad-import-order
import runpy  # pylint: disable=g-import-not-at-top,g-bad-import-order
import signal  # pylint: disable=g-import-not-at-top,g-bad-import-order
import threading  # pylint: disable=g-import-not-at-top,g-bad-import-order
import time  # pylint: disable=g-import-not-at-top,g-bad-import-order
import types  # pylint: disable=g-import-not-at-top,g-bad-import-order
import traceback  # pylint: disable=g-import-not-at-top,g-bad-import-order

POLL = 0.005  # Seconds between looks at a running child.


def _redirect(request):
  for fd, key, flags in ((0, "stdin", os.O_RDONLY),
                         (1, "stdout", os.O_WRONLY | os.O_TRUNC | os.O_CREAT),
                         (2, "stderr", os.O_WRONLY | os.O_TRUNC | os.O_CREAT)):
    opened = os.open(request[key], flags, 0o600)
    os.dup2(opened, fd)
    os.close(opened)
  # The server's stdin may hold read-ahead of the protocol pipe.
  sys.stdin = sys.__stdin__ = open(0, "r", closefd=False)  # pylint: disable=consider-using-with


def _status(error):
  """Python's exit status for a SystemExit."""
  code = error.code
  if code is None:
    return 0
  if isinstance(code, int):
    return code & 0xFF
  print(code, file=sys.stderr)
  return 1


def _run(argv):
  """Runs `python ARGV...` in this process; returns its exit status."""
  try:
    if argv[0] == "-m":
      sys.argv = [argv[1], *argv[2:]]
      sys.path[0] = os.getcwd()
      runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
      sys.argv = ["-c", *argv[2:]]
      sys.path[0] = ""
      main = types.ModuleType("__main__")
      sys.modules["__main__"] = main
      exec(compile(argv[1], "<string>", "exec"), main.__dict__)  # pylint: disable=exec-used
    else:
      sys.argv = list(argv)
      sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
      runpy.run_path(argv[0], run_name="__main__")
    return 0
  except SystemExit as error:
    return _status(error)
  except KeyboardInterrupt:
    traceback.print_exc()
    return 130
  except BaseException:  # pylint: disable=broad-except
    sys.excepthook(*sys.exc_info())
    return 1


def _finish(status):
  """Ends the child as the interpreter would: threads, atexit, streams."""
  for thread in threading.enumerate():
    if thread is not threading.main_thread() and not thread.daemon:
      thread.join()
  try:
    atexit._run_exitfuncs()  # pylint: disable=protected-access
  except BaseException:  # pylint: disable=broad-except
    pass
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except BaseException:  # pylint: disable=broad-except
      status = status or 120  # What Python exits with when flushing fails.
  os._exit(status)  # pylint: disable=protected-access


def _child(request):
  os.setpgid(0, 0)
  signal.signal(signal.SIGINT, signal.default_int_handler)
  os.chdir(request["cwd"])
  os.environ.clear()
  os.environ.update(request["env"])
  _redirect(request)
  _finish(_run(request["argv"]))


def _wait(pid, timeout):
  deadline = time.monotonic() + timeout if timeout else None
  while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
      if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
      return os.WEXITSTATUS(status)
    if deadline is not None and time.monotonic() > deadline:
      try:
        os.killpg(pid, signal.SIGKILL)
      except ProcessLookupError:
        pass
      os.waitpid(pid, 0)
      return None
    time.sleep(POLL)


def main():
  requests, replies = sys.stdin.buffer, sys.stdout.buffer
  replies.write(b'{"ready": true}\n')
  replies.flush()
  for line in iter(requests.readline, b""):
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
      try:
        _child(request)
      finally:
        os._exit(70)  # pylint: disable=protected-access
    status = _wait(pid, request.get("timeout"))
    replies.write(json.dumps({"status": status}).encode() + b"\n")
    replies.flush()


if __name__ == "__main__":
  main()
