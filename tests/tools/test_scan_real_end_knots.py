"""`tfpartial scan --diff` on a gradient whose end elements are zeroed by
`tf.tensor_scatter_nd_update` before each step: the knots of a
piecewise-linear approximation train, its two end knots stay. The port
drops the scatter and freezes those elements of the variable; it applies
to the file as published, runs, and holds the end knots bit for bit.

`scan_real/victosdur_experiments.py.txt`, `victosdur_utils.py.txt` and
`victosdur_bnn.py.txt` are `experimentsComparingLossFunction.py`,
`utils.py` and `utilsBaricentricNeuralNetwork.py` of
https://github.com/victosdur/Function_Approximation_Using_BNN_and_LWPE at
commit dcb4cd9cbcff48a12324ef99fb74376c82ff2e01 (Apache License 2.0),
copied verbatim (`.txt`, so that nothing collects or imports them). The
run takes the script's `train_model` (its imports, not the experiment
after it: five losses, plots, a spreadsheet), on 60 points for 4 steps;
the persistence diagrams (GUDHI) are a small stand-in, and the modules a
short run does not use (GUDHI, yfinance, pandas, tqdm, the topology
helpers) are stubbed.
"""

import pathlib
import shutil

from tests.tools import real_ports

HERE = pathlib.Path(__file__).parent
FILES = {"experiments.py": "victosdur_experiments.py.txt",
         "experiments_original.py": "victosdur_experiments.py.txt",
         "utils.py": "victosdur_utils.py.txt",
         "utilsBaricentricNeuralNetwork.py": "victosdur_bnn.py.txt"}

RUN = '''\
import ast
import sys
import types

import matplotlib
import numpy as np
import tensorflow as tf

matplotlib.use("Agg")
for name in ("gudhi", "yfinance", "utilsTopology", "tqdm", "pandas"):
  sys.modules[name] = types.ModuleType(name)
sys.modules["tqdm"].tqdm = lambda items, **kwargs: items
sys.modules["pandas"].DataFrame = dict


def load(path):
  """The script up to its `train_model`, as a module."""
  with open(path) as file:
    tree = ast.parse(file.read())
  end = next(i for i, s in enumerate(tree.body)
             if getattr(s, "name", "") == "train_model")
  module = types.ModuleType(path[:-3])
  exec(compile(ast.Module(tree.body[:end + 1], []), path, "exec"),
       module.__dict__)
  return module


class Diagram:
  """Stands in for the lower-star persistence layer: one bar."""

  def call(self, y):
    return [[tf.stack([tf.reduce_min(y), tf.reduce_max(y)])[None]]]


def run(module):
  mse = tf.keras.losses.MeanSquaredError()
  module.loss_functions = {
      "MSE": mse, "RMSE": mse, "MAE": tf.keras.losses.MeanAbsoluteError(),
      "LogCosh": tf.keras.losses.LogCosh(),
      "LWPE": lambda a, b: tf.reduce_sum(tf.abs(a - b))}
  module.domain, module.dataName = [-10, 10], "small"
  knots = {}  # The knots the script plots: before the first step, last.
  module.plot_and_save_approximation = lambda **kw: knots.setdefault(
      kw["filename"].split("/")[-1].split("_")[0], kw["x_points"].numpy())
  x = np.linspace(-10, 10, 60)
  y = np.sin(x) + np.random.RandomState(7).normal(0, 0.05, x.shape)
  module.train_model(tf.constant(x, tf.float32), tf.constant(y, tf.float32),
                     "MSE", Diagram(), tf.zeros([1, 2]), 8, num_iter=4)
  ends = np.isin(np.arange(8), [0, 7])
  return [(knots["InitialApproximation"], knots["LastApproximation"], ends)]


compare(load("experiments_original.py"), load("experiments.py"))
'''


def test_the_end_knots_port_applies_and_holds_them(tmp_path):
  for name, copied in FILES.items():
    shutil.copy(HERE / "scan_real" / copied, tmp_path / name)
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "experiments.py", by_hand=["experiments.py:60"]))
  ported = (tmp_path / "experiments.py").read_text()
  assert "tensor_scatter_nd_update" not in ported, ported
  assert ("spec = tfpartial.freeze(x_points, [0, num_points_aprox - 1])"
          in ported), ported
  assert "spec.apply_gradients(optimizer, zip(gradients, [x_points]))" in (
      ported), ported
  real_ports.run_and_compare(tmp_path, RUN)
