"""`tfpartial scan`'s cost for a base class's calls on itself reaching
the overrides of its subclasses (`_base_calls`): a base class calling
`self.hook{i}(...)` in each of `n` methods, with `n` subclasses each
overriding every hook, costs work in `_base_calls` that grows with the
pairs of a call and an override of its name (`n` calls, `n` overrides
each: n * n pairs, the size of the project's own text of overrides):
four times the classes and hooks, at most 17 times the calls. A rule
that walked every class of the project for each pair (`subclasses` per
call) would grow as n ** 3 (x64 here)."""

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _sources(n):
  base = ["import tensorflow as tf", "", "", "class Base(object):",
          "  def __init__(self, loss, chosen):"]
  base += [f"    self.step{i} = self.hook{i}(loss, chosen)"
           for i in range(n)]
  leaves = ["import tensorflow as tf", "from base import Base", ""]
  for k in range(n):
    leaves += ["", f"class Leaf{k}(Base):"]
    for i in range(n):
      leaves += [f"  def hook{i}(self, loss, var_list):",
                 "    return tf.train.AdamOptimizer(0.1).minimize(",
                 "        loss, var_list=var_list)"]
  return [_files.Source("base.py", "\n".join(base) + "\n"),
          _files.Source("leaves.py", "\n".join(leaves) + "\n")]


def _work(n):
  sources = _sources(n)
  return scanned.calls_made(lambda: _scan.scan_project(sources),
                            "_base_calls.py")[0]


def test_override_reach_grows_with_the_pairs():
  small, large = _work(3), _work(12)
  assert small > 0
  assert large <= 17 * small, (small, large)


def _pairs(n):
  """`n` base classes each calling `self.make_step(...)`, which only its
  own subclass defines."""
  lines = ["import tensorflow as tf", ""]
  for k in range(n):
    lines += [f"class B{k}(object):", "  def prepare(self, loss):",
              "    chosen = [v for v in tf.trainable_variables()",
              f"              if 's{k}' in v.name]",
              "    self.step = self.make_step(loss, chosen)", "",
              f"class T{k}(B{k}):",
              "  def make_step(self, loss, var_list):",
              "    return tf.train.AdamOptimizer(0.1).minimize(",
              "        loss, var_list=var_list)", ""]
  return [_files.Source("m.py", "\n".join(lines) + "\n")]


def test_a_call_tries_only_the_overrides_of_its_own_class():
  """Each call is tried only against the overrides of the subclasses of
  its own class (the wrappers indexed by their bases): four times the
  pairs, at most five times the calls (every call against every
  override of the name was x16)."""
  def work(n):
    sources = _pairs(n)
    return scanned.calls_made(lambda: _scan.scan_project(sources),
                              "_base_calls.py")[0]
  small, large = work(8), work(32)
  assert small > 0
  assert large <= 5 * small, (small, large)


def _chain(n):
  """A base's `prepare` calling `self.make_step(...)`; `n` classes each
  deriving the last, overriding `prepare` through `super()` and defining
  `make_step`: every override of `make_step` asks the same way up."""
  lines = ["import tensorflow as tf", "", "class C0(object):",
           "  def prepare(self, loss):",
           "    chosen = [v for v in tf.trainable_variables()",
           "              if 'head' in v.name]",
           "    self.step = self.make_step(loss, chosen)", ""]
  for k in range(1, n + 1):
    lines += [f"class C{k}(C{k - 1}):", "  def prepare(self, loss):",
              "    super().prepare(loss)", "",
              "  def make_step(self, loss, var_list):",
              "    return tf.train.AdamOptimizer(0.1).minimize(",
              "        loss, var_list=var_list)", ""]
  return [_files.Source("m.py", "\n".join(lines) + "\n")]


def test_the_way_up_through_super_is_read_once_per_override():
  """Each override of the calling method is read once per calling method
  (what it leads to kept): four times the classes, at most six times
  the calls (walking up from each override anew was x8)."""
  def work(n):
    sources = _chain(n)
    return scanned.calls_made(lambda: _scan.scan_project(sources),
                              "_base_calls.py")[0]
  small, large = work(6), work(24)
  assert small > 0
  assert large <= 6 * small, (small, large)


def _called_from_init(n):
  """`_chain(n)` with the base's `prepare` called only from its
  `__init__`, and each class a mixin's subclass as well: every override
  of `make_step` asks whether its class runs `__init__` and `prepare`."""
  text = _chain(n)[0].text.replace(
      "class C0(object):\n",
      "class C0(object):\n  def __init__(self, loss):\n"
      "    self.prepare(loss)\n\n")
  for k in range(1, n + 1):
    text = text.replace(f"class C{k}(C{k - 1}):",
                        f"class M{k}(object):\n  pass\n\n"
                        f"class C{k}(C{k - 1}, M{k}):")
  return [_files.Source("m.py", text)]


def test_the_order_past_33_classes_is_not_read():
  """Each class's method resolution order is merged once, but a mixin
  per class makes each order grow by two and no class's order is a
  subclass's tail: up to 16 classes (an order of 33) the calls grow with
  the square (x3.1 per doubling). Past 33 classes an order is not read
  (no reach): four times the classes, at most x1.5 the calls."""
  def work(n):
    sources = _called_from_init(n)
    return scanned.calls_made(lambda: _scan.scan_project(sources),
                              "_base_calls.py")[0]
  small, large = work(16), work(64)
  assert small > 0
  assert large <= 1.5 * small, (small, large)
