"""`tfpartial scan --diff` on the short-term plasticity RNN of Masse et
al.: in a TF1 graph, a loop over `compute_gradients` multiplies the
gradient of each weight a name test picks by its fixed connectivity mask
in place (`grad *= par['w_rnn_mask']`: no self-connections, no
inhibitory unit to the output), then clips each gradient and appends it
to a new list that Adam applies. The port keeps the masks and freezes
their zeros, one freeze before each mask; it applies to the file as
published, runs, and holds the masked connections bit for bit.

`scan_real/nmasse_stp_model.py.txt` and `nmasse_stp_parameters.py.txt`
are `model.py` and `parameters.py` of
https://github.com/nmasse/Short-term-plasticity-RNN at commit
6c3c486b1f4288c49eb29ab5d5df036462725cfe (Apache License 2.0), copied
verbatim (`.txt`, so that nothing collects or imports them). The test
changes one line of `model.py` before it scans, as the memory network's
test does: `import tensorflow as tf` becomes `import tensorflow.compat.v1
as tf` (the file is TF1 code). The run shrinks the network through the
file's own `update_parameters` (8 units, 8 time steps, 4 trials) and
stubs the modules a short run does not use (`stimulus`, `analysis`).
"""

import pathlib
import shutil

from tests.tools import real_ports

HERE = pathlib.Path(__file__).parent

# Trains the network 4 steps, from the same seed and the same first
# weights (drawn once by `parameters`), with the file as it was
# (`model_original`) and as ported (`model`): the three masked weights
# before and after, their masks' zeros frozen.
RUN = '''\
import sys
import types

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()
for name in ("stimulus", "analysis"):
  sys.modules[name] = types.ModuleType(name)
np.random.seed(0)
import parameters

parameters.update_parameters({
    "n_hidden": 8, "num_motion_tuned": 6, "batch_size": 4, "fix_time": 20,
    "sample_time": 20, "delay_time": 20, "test_time": 20})


def run(module):
  par = parameters.par
  steps, batch = par["num_time_steps"], par["batch_size"]
  rng = np.random.RandomState(1)
  with tf.Graph().as_default() as graph:
    tf.set_random_seed(1)
    inputs = tf.constant(rng.rand(steps, batch, par["n_input"]), tf.float32)
    targets = tf.constant(np.eye(3, dtype=np.float32)[
        rng.randint(0, 3, (steps, batch))])
    model = module.Model(inputs, targets, tf.ones([steps, batch]))
    weights = [model.var_dict[k] for k in ("w_rnn", "w_out", "w_in")]
    with tf.Session(graph=graph) as session:
      session.run(tf.global_variables_initializer())
      before = session.run(weights)
      for _ in range(4):
        session.run(model.train_op)
      after = session.run(weights)
  masks = [par["w_rnn_mask"], par["w_out_mask"], par["w_in_mask"]]
  assert all((m == 0).any() for m in masks[:2])  # Something is frozen.
  return [(b, a, np.broadcast_to(m == 0, b.shape))
          for b, a, m in zip(before, after, masks)]


import model_original
import model
compare(model_original, model)
'''


def _source():
  text = (HERE / "scan_real" / "nmasse_stp_model.py.txt").read_text()
  assert text.count("import tensorflow as tf\n") == 1
  return text.replace("import tensorflow as tf\n",
                      "import tensorflow.compat.v1 as tf\n")


def test_the_connectivity_masks_port_applies_and_holds(tmp_path):
  for name in ("model.py", "model_original.py"):
    (tmp_path / name).write_text(_source())
  shutil.copy(HERE / "scan_real" / "nmasse_stp_parameters.py.txt",
              tmp_path / "parameters.py")
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "model.py", by_hand=["model.py:131"]))
  ported = (tmp_path / "model.py").read_text()
  assert ported.count("grad *= par['w_") == 3, ported  # The masks stay.
  assert ported.count("spec = spec | tfpartial.freeze(") == 3, ported
  assert "self.train_op = spec.apply_gradients(opt, capped_gvs)" in ported
  real_ports.run_and_compare(tmp_path, RUN)
