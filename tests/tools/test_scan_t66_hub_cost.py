"""The read's hub: a module importing `k` modules that each import a
helper reading a parameter unnamed (`getattr(obj, key)`), beside
gradients only fetched. The project's dynamic reads are read once a
scan, each module's imports once: the lookups grow with `k`, not
with `k * k` (t66's `_handed` read the hub's imports once per module
it imports: 740 module lookups at 25, 10,415 at 100). Counted calls
in `_project.py`, where the lookups are, not time."""

import textwrap

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned
from test_scan_fetched_gradients import _TF1 as FETCHED_TF1

_FETCHED_MODEL = textwrap.dedent(
    FETCHED_TF1.replace("        {use}\n", "").format())


def _hub(k):
  files = [_files.Source("util.py", "def pick(obj, key):\n"
                         "  return getattr(obj, key)\n")]
  files += [_files.Source(f"m{i}.py", "import util\nX = 1\n")
            for i in range(k)]
  files.append(_files.Source("model.py", _FETCHED_MODEL))
  files.append(_files.Source("main.py", "import model\n" + "".join(
      f"import m{i}\n" for i in range(k)) + (
          "def go(sess, x, y, feed):\n"
          "  return model.fisher(sess, model.MLP(x, y), feed)\n")))
  return files


def _work(k):
  return scanned.calls_made(lambda: _scan.scan_project(_hub(k)),
                            "_project.py")[0]


def test_the_project_lookups_grow_linearly_with_a_hubs_imports():
  # 8 times the imports, at most 8 times the work (3460 -> 15913 calls
  # here; 6664 -> 81277 with `_handed`).
  small, large = _work(20), _work(160)
  assert small > 0
  assert large <= 8 * small, (small, large)
