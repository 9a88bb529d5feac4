"""`tfpartial scan`'s cost for lists joined from dicts of variables
(`_dict_listed`): a script with three dicts, each filled by `n` stores
(an array restored, then a variable stored over it), and two steps over
one list joined from two of them, costs work in `_dict_listed` that
grows with the script's text: eight times the stores, at most 8 times
the calls (x6.5 measured). Checking each store against every other
store of its dict (whether a variable is stored over it later) grows as
n * n (x11.7 here: it fails)."""

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _script(n):
  lines = ["import numpy as np", "import tensorflow as tf", "",
           "saved = np.load('w.npy', allow_pickle=True).item()",
           "trainable = []"]
  lines += [f"d{i} = {{}}" for i in range(3)]
  for i in range(3):
    lines += [f"d{i}['w{j}'] = saved['w{j}']" for j in range(n)]
    lines += [f"d{i}['w{j}'] = tf.Variable(d{i}['w{j}'])"
              for j in range(n)]
  lines += [f"trainable = trainable + list(d{i}.values())"
            for i in range(1, 3)]
  lines += ["x = tf.placeholder(tf.float32, [None, 4])",
            "out = model(x, d0, d1, d2)"]
  for k in range(2):
    lines += [f"loss{k} = tf.reduce_sum(out) * {k}",
              f"step{k} = tf.train.AdamOptimizer(0.1).minimize(",
              f"    loss{k}, var_list=trainable)"]
  return "\n".join(lines) + "\n"


def _work(n):
  sources = [_files.Source("t.py", _script(n))]
  return scanned.calls_made(lambda: _scan.scan_project(sources),
                            "_dict_listed.py")[0]


def test_dict_lists_grow_with_the_stores():
  small, large = _work(8), _work(64)
  assert small > 0
  assert large <= 8 * small, (small, large)
