"""Steps that run every compiled kernel on awkward values, for comparing
two builds of the library bit for bit (tests/kernels/test_isa.py).

`python isa_battery.py OUT.npz [baseline]` runs the battery in this fresh
process (with the baseline build, built into `$TFPARTIAL_CACHE`, when
asked) and saves what every variable and slot holds after it.
"""

import sys

import numpy as np
import tensorflow as tf

# Sizes: over `kInlineElements` (threads), and odd (the vector loops'
# tails and a packed mask's last byte).
SHAPES = [(300, 257), (37, 3)]


def _values(shape, dtype, seed):
  rng = np.random.default_rng(seed)
  values = rng.normal(size=shape).astype(dtype)
  flat = values.reshape(-1)
  flat[::97] = np.finfo(dtype).smallest_subnormal
  flat[1::101] = -0.0
  return values


def _poisoned(grad, frozen):
  grad = grad.copy()
  grad[frozen & (np.arange(grad.size).reshape(grad.shape) % 2 == 0)] = np.nan
  grad[frozen & (np.arange(grad.size).reshape(grad.shape) % 2 == 1)] = np.inf
  return grad


def _v1(out, name, optimizer, shape, dtype, frozen, graph):
  import tfpartial  # pylint: disable=g-import-not-at-top
  w0, grad = _values(shape, dtype, 1), _values(shape, dtype, 2)
  grad = _poisoned(grad, frozen)
  if graph:
    with tf.Graph().as_default():
      w = tf.compat.v1.Variable(w0, use_resource=True)
      step = tfpartial.freeze(w, frozen).apply_gradients(
          optimizer(), [(tf.constant(grad), w)])
      with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        for _ in range(3):
          session.run(step)
        out[name] = session.run(w)
    return
  w = tf.Variable(w0)
  spec, opt = tfpartial.freeze(w, frozen), optimizer()
  for _ in range(3):
    spec.apply_gradients(opt, [(tf.constant(grad), w)])
  out[name] = w.numpy()
  for slot in opt.get_slot_names():
    out[f"{name}/{slot}"] = opt.get_slot(w, slot).numpy()


def _keras(out, name, optimizer, shape, dtype, frozen, sparse=False):
  import tfpartial  # pylint: disable=g-import-not-at-top
  w = tf.Variable(_values(shape, dtype, 3))
  grad = _poisoned(_values(shape, dtype, 4), frozen)
  spec, opt = tfpartial.freeze(w, frozen), optimizer()
  for _ in range(3):
    if sparse:
      rows = np.array([0, 5, 5, shape[0] - 1])
      given = tf.IndexedSlices(tf.constant(grad[rows]), tf.constant(rows),
                               tf.constant(shape))
    else:
      given = tf.constant(grad)
    spec.apply_gradients(opt, [(given, w)])
  out[name] = w.numpy()
  for index, variable in enumerate(opt.variables):
    out[f"{name}/{index}"] = np.asarray(variable)


def run():
  """What every variable and slot holds after the battery, by name. Masks
  are packed from 8 elements while it runs (TF1 graphs: the packed mask
  too), and from `PACKED_FROM` again after: a test runs it in its own
  process, where later tests would otherwise take a packed mask."""
  from tfpartial._kernels import _inputs  # pylint: disable=g-import-not-at-top
  packed_from, _inputs.PACKED_FROM = _inputs.PACKED_FROM, 8
  try:
    return _battery()
  finally:
    _inputs.PACKED_FROM = packed_from


def _battery():
  import keras  # pylint: disable=g-import-not-at-top
  v1 = tf.compat.v1.train
  out = {}
  for shape in SHAPES:
    rng = np.random.default_rng(shape[0])
    frozen = rng.random(shape) < 0.3
    mostly = rng.random(shape) < 0.95  # Offsets for the slot-less kernels.
    for dtype in (np.float32, np.float64):
      tag = f"{shape[0]}x{shape[1]}/{np.dtype(dtype).name}"
      for graph in (False, True):
        where = "graph" if graph else "eager"
        _v1(out, f"v1 adam/{where}/{tag}", lambda: v1.AdamOptimizer(0.1),
            shape, dtype, frozen, graph)
        _v1(out, f"v1 nesterov/{where}/{tag}",
            lambda: v1.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
            shape, dtype, frozen, graph)
        _v1(out, f"v1 gd offsets/{where}/{tag}",
            lambda: v1.GradientDescentOptimizer(0.1), shape, dtype, mostly,
            graph)
      _keras(out, f"keras adamw/{tag}",
             lambda: keras.optimizers.AdamW(0.1, weight_decay=0.1), shape,
             dtype, frozen)
      _keras(out, f"keras adam sparse/{tag}",
             lambda: keras.optimizers.Adam(0.1), shape, dtype, frozen,
             sparse=True)
      _keras(out, f"keras sgd nesterov/{tag}",
             lambda: keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True,
                                          weight_decay=0.1),
             shape, dtype, frozen)
      _keras(out, f"keras sgd offsets/{tag}",
             lambda: keras.optimizers.SGD(0.1), shape, dtype, mostly)
    _compact(out, shape, frozen)
  return out


def _compact(out, shape, frozen):
  import tfpartial  # pylint: disable=g-import-not-at-top
  w = tf.Variable(_values(shape, np.float32, 5))
  spec = tfpartial.train_only(w, ~frozen, compact=True)
  optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
  grad = _poisoned(_values(shape, np.float32, 6), frozen)
  for _ in range(3):
    spec.apply_gradients(optimizer, [(tf.constant(grad), w)])
  out[f"compact/{shape[0]}x{shape[1]}"] = w.numpy()


if __name__ == "__main__":
  if sys.argv[2:] == ["baseline"]:
    from tfpartial._kernels import _isa  # pylint: disable=g-import-not-at-top
    _isa.chosen = lambda: _isa.BASELINE
  from tfpartial._kernels import _native  # pylint: disable=g-import-not-at-top
  assert _native.library() is not None, _native.reason()
  print(_native.instruction_set())
  np.savez(sys.argv[1], **run())
