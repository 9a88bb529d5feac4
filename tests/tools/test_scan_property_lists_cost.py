"""`tfpartial scan`'s cost for variable lists read through a property
(`_property_reads`): a trainer that keeps the model it is given
(`self.model = model`, `model: Network`) and reads
`self.model.trainable_variables` in each of `n` methods, its `__init__`
growing with `n` too, costs work in `_property_reads` that grows
linearly: four times the methods, at most 4.5 times the calls. The
parameter's rebinding is read once per function (a walk of `__init__`
per read made it x16 here: quadratic)."""

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_NETWORK = (
    "import tensorflow as tf\n\n\n"
    "class Network(object):\n"
    "  @property\n"
    "  def trainable_variables(self):\n"
    "    return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,\n"
    "                             scope='fc8')\n")


def _trainer(n):
  """A trainer with `n` attributes set in `__init__` and `n` steps."""
  lines = ["import tensorflow as tf", "from network import Network", "",
           "", "class Trainer(object):",
           "  def __init__(self, model: Network, y):",
           "    self.model = model"]
  lines += [f"    self.w{i} = y * {i}" for i in range(n)]
  for i in range(n):
    lines += [f"  def train{i}(self, loss):",
              "    return tf.train.AdamOptimizer(0.1).minimize(",
              "        loss, var_list=self.model.trainable_variables)"]
  return "\n".join(lines) + "\n"


def _work(n):
  sources = [_files.Source("network.py", _NETWORK),
             _files.Source("trainer.py", _trainer(n))]
  return scanned.calls_made(lambda: _scan.scan_project(sources),
                            "_property_reads.py")[0]


def test_property_reads_grow_linearly_with_the_reads():
  small, large = _work(8), _work(32)
  assert small > 0
  assert large <= 4.5 * small, (small, large)


def _constructions(n):
  """`_trainer(n)` and a script constructing it `n` times, each given
  what a helper returns (the flow does not type it: the constructions
  are read for every property read without the memo)."""
  lines = ["from trainer import Trainer", "", "",
           "def load(path):", "  return restore(path)", ""]
  for i in range(n):
    lines += [f"net{i} = load('n{i}')", f"t{i} = Trainer(net{i}, {i})"]
  return [_files.Source("network.py", _NETWORK),
          _files.Source("trainer.py", _trainer(n)),
          _files.Source("run.py", "\n".join(lines) + "\n")]


def test_constructions_are_read_once_per_parameter():
  """What each construction passes the annotated parameter is read once
  for the parameter, not per read: four times the reads and the
  constructions, at most 4.5 times the calls."""
  def work(n):
    sources = _constructions(n)
    return scanned.calls_made(lambda: _scan.scan_project(sources),
                              "_property_reads.py")[0]
  small, large = work(8), work(32)
  assert small > 0
  assert large <= 4.5 * small, (small, large)
