"""The public functions that make a `FreezeSpec`, and find one.

`freeze`, `train_only` and `load_spec` make a spec; `spec_of` finds the
one a wrapped optimizer (or a compiled model's) carries.
"""

from __future__ import annotations

from typing import Optional

from tfpartial._api._spec import FreezeSpec
from tfpartial._families import _optimizers
from tfpartial._families import _wrap
from tfpartial._frozen import _late
from tfpartial._frozen import _specfile
from tfpartial._frozen import _value
from tfpartial._frozen._specfile import Variables
from tfpartial._frozen._types import Index, Variable


def freeze(variable: Variable, index: Index = None, *,
           partition_strategy: Optional[str] = None) -> FreezeSpec:
  """A spec freezing exactly the elements `variable.numpy()[index]` selects.

  Args:
    variable: a `tf.Variable` (resource, TF1 ref or distributed) or a
      Keras 3 variable; or a sharded table, as one variable of its full
      shape: a TF1 partitioned variable (`get_variable(...,
      partitioner=...)`) or a TF2 `ShardedVariable` (ParameterServerStrategy
      with a `variable_partitioner`).
    index: an int, slice, `np.s_[...]` tuple, integer index array, boolean
      mask of the full shape or of leading axes, or `Ellipsis`, with
      NumPy's semantics exactly. Negative indices count from the end. None
      freezes the whole variable. A bool variable of the full shape is a
      mask read at every step: assign it between steps to change the
      freeze without retracing. A criterion (`tfpartial.zeros()`,
      `largest`, `smallest`, `n_of_m`, `random_subset`) selects from the
      variable's value now, once: values assigned later do not move it.
      One index reads two ways and is refused: an integer array of the
      variable's full shape holding only 0s and 1s (a TF1 0/1 mask made
      `int`), which NumPy reads as row numbers; say `index.astype(bool)`
      for the mask, `np.s_[index, ...]` for the rows.
    partition_strategy: for a table of several parts along its rows, and
      then required (unless `index` is None or `...`): how `index` numbers
      rows. `"div"`: the checkpoint's rows, as `tf.nn.embedding_lookup`
      and a `partition_strategy="div"` lookup read them. `"mod"`: ids as a
      `tf.compat.v1.nn.embedding_lookup` of the default
      `partition_strategy="mod"` reads them (id i in part i % n, at its row
      i // n); the spec holds them as checkpoint rows.

  Returns:
    A `FreezeSpec` naming `variable`.

  Raises:
    TypeError: `variable` is not a variable, or `index` holds a float, a
      string or another type NumPy would not index with.
    ValueError: a boolean mask does not fit the variable's shape; `index`
      reads two ways (a full-shape integer array of 0s and 1s); a table
      of several parts is indexed without `partition_strategy`, or it is
      given for a variable that is not a table.
    IndexError: an index is out of range.

  >>> x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
  >>> tfpartial.freeze(x, np.s_[:, 0]).frozen_mask(x)
  array([[ True, False],
         [ True, False]])
  """
  return FreezeSpec._of(_value.freeze(
      variable, index, partition_strategy=partition_strategy))


def train_only(variable: Variable, index: Index, *, compact: bool = False,
               partition_strategy: Optional[str] = None) -> FreezeSpec:
  """A spec freezing every element of `variable` except those `index` selects.

  Args:
    variable: as for `freeze`.
    index: as for `freeze`; these elements are the ones that train.
    compact: the optimizer trains a variable holding only what `index`
      selects, made by tfpartial: those rows for an index of whole rows (a
      few new rows of a large embedding), else those elements, in
      row-major order (a sparse fine-tuning mask). Its state and its work
      then cost only what trains, and frozen elements are never read or
      written by a step. The optimizer's checkpoint differs from a plain
      run's (its slots belong to the small variable). A TF1 partitioned
      table, or a TF2 `ShardedVariable`, gets a small variable per part
      that has both frozen and trainable elements (a shard's on its
      parameter server); a mirrored variable a mirrored one. Those of a
      tf.distribute strategy are made now, as a step inside
      `strategy.run` cannot make them.
    partition_strategy: as for `freeze`.

  Returns:
    A `FreezeSpec` naming `variable`.

  Raises:
    TypeError, ValueError, IndexError: as for `freeze`; ValueError also
      when `compact` is asked of a mask variable (a mask read at every
      step).

  >>> w = tf.Variable(tf.zeros([2, 2]), name="w")
  >>> tfpartial.train_only(w, np.eye(2, dtype=bool)).frozen_mask(w)
  array([[False,  True],
         [ True, False]])
  """
  return FreezeSpec._of(_value.train_only(
      variable, index, compact=compact,
      partition_strategy=partition_strategy))


def load_spec(text_or_path: _specfile.PathOrText,
              variables: Optional[Variables] = None) -> FreezeSpec:
  """The spec a spec file describes, bound to `variables` by name.

  Without `variables`, the file is read and checked now, and the spec binds
  by checkpoint name to the variables of its first step: for a canned
  Estimator (which calls its optimizer before any model variable exists)
  and for trainers that make the optimizer before the model. Pass it to
  `wrap` (or step with it); a name that no variable of that step has is a
  ValueError at that step, naming it and the nearest names. A variable a
  later step shows first (a layer built later, a second model, a
  retrace) is bound at that step if a name or pattern matches it. Several
  optimizers may each be wrapped with it (a wide & deep Estimator's
  two): each binds what it trains, and a name none of them has by the
  end of the first step of each is the ValueError. Until it has stepped
  it cannot tell its `variables`, `frozen_mask`, `to_json` or `|`.

  Args:
    text_or_path: JSON text, or the path of a spec file (`.npy` masks it
      names are read relative to it). A criterion in it
      (`{"where": "zero"}`, ...) selects from the variables' values when
      the spec binds: now, or without `variables` at its first step.
    variables: the variables to bind: an iterable, a name -> variable
      mapping, or a `tf.Module` / Keras model (its `.variables`). Names are
      checkpoint names: `x` for the TF1 `x:0`, a Keras variable's `path`.
      None: bind at the first step.

  Returns:
    A `FreezeSpec`.

  Raises:
    ValueError: the text is not a spec, an index cannot be parsed, the
      spec names a variable that is not given, or a shape differs.
    TypeError, IndexError: an index does not fit its variable, as for
      `freeze`.

  >>> x = tf.Variable(tf.zeros([3]), name="x")
  >>> tfpartial.load_spec('{"x": {"freeze": "0"}}', [x])
  FreezeSpec(x: 1/3 frozen)
  >>> later = tfpartial.load_spec('{"x": {"freeze": "0"}}')
  >>> later
  FreezeSpec(binds by name at its first step: x)
  >>> opt = later.wrap(tf.keras.optimizers.SGD(1.0))
  >>> _ = opt.apply_gradients([(tf.ones([3]), x)])
  >>> x.numpy()
  array([ 0., -1., -1.], dtype=float32)
  """
  if variables is None:
    return FreezeSpec._late_of(_late.read(text_or_path))
  return FreezeSpec._of(_value.load(text_or_path, variables))


def spec_of(model_or_optimizer: object) -> Optional[FreezeSpec]:
  """The spec a wrapped optimizer carries, or None.

  How to check what a loaded or compiled model freezes: a Keras model's
  (or a tf_keras model's) compiled optimizer is looked at, through a
  `LossScaleOptimizer` too. A wrapped optimizer loaded with a model binds
  its saved spec to the model's trainable variables, here if not yet (as
  its first step would). Given a loaded optimizer alone, not yet built or
  stepped, there are no variables to bind to: None. A model whose own
  `compile` replaced the optimizer when it was loaded (keras_hub's) has no
  wrapped optimizer: None.

  Args:
    model_or_optimizer: an optimizer, or a model with an `optimizer`.

  Returns:
    The `FreezeSpec`, or None when there is no wrapped optimizer (or it is
    not bound to variables yet).

  Raises:
    ValueError: a loaded optimizer's saved spec names a variable the model
      does not have.

  >>> x = tf.Variable([1.0, 2.0], name="x")
  >>> spec = tfpartial.freeze(x, 0)
  >>> optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.1))
  >>> tfpartial.spec_of(optimizer) == spec
  True
  >>> tfpartial.spec_of(tf.compat.v1.train.GradientDescentOptimizer(0.1))
  """
  optimizer, variables = model_or_optimizer, None
  if not _is_optimizer(optimizer):
    optimizer = getattr(model_or_optimizer, "optimizer", None)
    variables = getattr(model_or_optimizer, "trainable_variables", None)
  seen = 0
  while optimizer is not None and seen < 8:
    value = _wrap.carried(optimizer, variables)
    if value is not None:
      return FreezeSpec._of(value)
    optimizer = getattr(optimizer, "inner_optimizer", None)
    seen += 1
  return None


def _is_optimizer(candidate: object) -> bool:
  try:
    _optimizers.family_of(candidate)
  except TypeError:
    return False
  return True

