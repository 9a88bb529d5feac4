"""`FreezeSpec`, the immutable value saying which elements are frozen."""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Mapping, Optional, Tuple

import numpy as np
import tensorflow as tf

from tfpartial import _index
from tfpartial import _mask
from tfpartial import _optimizers
from tfpartial import _selection
from tfpartial import _specfile
from tfpartial import _step
from tfpartial import _variables
from tfpartial._selection import Selection
from tfpartial._types import GradAndVar, GradsAndVars, Index, Optimizer, Variable


class FreezeSpec:
  """Which elements of which variables stay fixed during training.

  Build one with `tfpartial.freeze` or `tfpartial.train_only` and combine
  them with `|`. A spec is immutable and compares by value.

  >>> x = tf.Variable([1.0, 2.0], name="x")
  >>> spec = tfpartial.freeze(x, 0)
  >>> spec
  FreezeSpec(x: 1/2 frozen)
  >>> spec.frozen_mask(x)
  array([ True, False])
  """

  __slots__ = ("_entries",)

  def __init__(self) -> None:
    """An empty spec, which freezes nothing; `|` adds to it."""
    object.__setattr__(self, "_entries", {})

  @classmethod
  def _of(cls, entries: Mapping[Hashable, Tuple[Variable, Selection]]):
    spec = cls()
    object.__setattr__(spec, "_entries", dict(entries))
    return spec

  def __setattr__(self, name: str, value: Any) -> None:
    raise AttributeError("FreezeSpec is immutable; combine specs with `|`.")

  # --- The value -----------------------------------------------------------

  @property
  def variables(self) -> Tuple[Variable, ...]:
    """The variables the spec names, in the order they were added."""
    return tuple(variable for variable, _ in self._entries.values())

  def frozen_mask(self, variable: Variable) -> np.ndarray:
    """A NumPy bool array of `variable`'s shape, True where frozen.

    A variable the spec does not name has nothing frozen: all False.

    Raises:
      TypeError: `variable` is not a variable.
    """
    _variables.check_variable(variable)
    selection = self._selection(variable)
    if selection is None:
      return np.zeros(_variables.static_shape(variable), dtype=bool)
    return selection.frozen_mask()

  def __or__(self, other: "FreezeSpec") -> "FreezeSpec":
    if not isinstance(other, FreezeSpec):
      return NotImplemented
    entries = dict(self._entries)
    for key, (variable, selection) in other._entries.items():
      if key in entries:
        entries[key] = (variable, entries[key][1].union(selection))
      else:
        entries[key] = (variable, selection)
    return FreezeSpec._of(entries)

  def __len__(self) -> int:
    """The number of variables the spec names."""
    return len(self._entries)

  def __contains__(self, variable: object) -> bool:
    return (_variables.is_variable(variable)
            and _variables.key(variable) in self._entries)

  def __eq__(self, other: object) -> bool:
    if not isinstance(other, FreezeSpec):
      return NotImplemented
    return self._fingerprint() == other._fingerprint()

  def __hash__(self) -> int:
    return hash(self._fingerprint())

  def __repr__(self) -> str:
    parts = (f"{_variables.checkpoint_name(variable)}: {selection.describe()}"
             for variable, selection in self._entries.values())
    return f"FreezeSpec({', '.join(parts)})"

  # --- Training ------------------------------------------------------------

  def mask_gradients(self, grads_and_vars: GradsAndVars) -> list:
    """The pairs with every frozen element's gradient exactly 0.

    Fully frozen variables are dropped, `None` gradients kept, and
    `tf.IndexedSlices` stay sparse. Inf and NaN on frozen elements become 0.

    Args:
      grads_and_vars: (gradient, variable) pairs.

    Returns:
      A list of (gradient, variable) pairs.
    """
    pairs = _step.check_grads_and_vars(grads_and_vars)
    return _mask.mask_gradients(self._selection, pairs)

  def apply_gradients(self, optimizer: Optimizer, grads_and_vars: GradsAndVars,
                      **kwargs: Any) -> Any:
    """Masks, applies with `optimizer`, then restores every frozen element.

    Args:
      optimizer: a `tf.compat.v1.train.Optimizer` (or wrapped one).
      grads_and_vars: (gradient, variable) pairs.
      **kwargs: passed on to `optimizer.apply_gradients`.

    Returns:
      What `optimizer.apply_gradients` returns; in a TF1 graph an op that
      runs the update and the restore.

    Raises:
      TypeError: `optimizer` is not an optimizer, or a pair is malformed.
      ValueError: no variable in `grads_and_vars` is in the spec, or every
        one is fully frozen.
    """
    family = _optimizers.family_of(optimizer)
    return _step.apply_gradients(
        self, grads_and_vars,
        lambda masked: family.apply(optimizer, masked, kwargs),
        lazy_rows=family.lazy_rows(optimizer),
        fused=lambda path: family.fused(optimizer, path))

  def minimize(self, optimizer: Optimizer, loss: Any,
               var_list: Optional[Iterable[Variable]] = None,
               **kwargs: Any) -> Any:
    """Computes gradients of `loss` and applies them under the spec.

    Fully frozen variables are left out of `var_list`, so they get no
    optimizer slots and no gradient ops.

    Args:
      optimizer: a `tf.compat.v1.train.Optimizer` (or wrapped one).
      loss: a tensor in a TF1 graph; a zero-argument callable when eager.
      var_list: the variables to train; by default the trainable ones.
      **kwargs: the optimizer's own `minimize` arguments (`global_step`,
        `name`, `gate_gradients`, ...).

    Returns:
      The train op in a TF1 graph; what the optimizer returns when eager.
    """
    family = _optimizers.family_of(optimizer)
    return family.minimize(self, optimizer, loss, var_list, kwargs)

  def wrap(self, optimizer: Optimizer) -> Optimizer:
    """An optimizer of the same class whose every update honours the spec.

    The result is still an instance of `type(optimizer)` (a
    `tf.compat.v1.train.Optimizer` stays one), sharing its slots, so legacy
    `opt.minimize(loss)` lines keep working unchanged. Wrapping a wrapped
    optimizer freezes the union of both specs.
    """
    family = _optimizers.family_of(optimizer)
    return family.wrap(self, optimizer)

  # --- Spec files ----------------------------------------------------------

  def to_json(self, path: Optional[_specfile.PathOrText] = None) -> str:
    """The spec as JSON text, keyed by each variable's checkpoint name.

    Args:
      path: where to write it too. A mask too long to write inline goes to
        a `.npy` file beside it; without a path every mask is inline.

    Returns:
      The JSON text; `tfpartial.load_spec` reads it back.

    >>> x = tf.Variable(tf.zeros([5, 2]), name="x")
    >>> b = tf.Variable(tf.zeros([2]), name="b")
    >>> print((tfpartial.freeze(x, [0, 1, 3]) | tfpartial.freeze(b)).to_json())
    {
      "x": {"train_only": "[2, 4]", "shape": [5, 2]},
      "b": {"freeze": "...", "shape": [2]}
    }
    """
    return _specfile.to_json(self._entries.values(), path)

  # --- Package internals ---------------------------------------------------

  def _selection(self, variable: Variable) -> Optional[Selection]:
    entry = self._entries.get(_variables.key(variable))
    return None if entry is None else entry[1]

  def _fully_frozen(self, variable: Variable) -> bool:
    selection = self._selection(variable)
    return selection is not None and selection.is_everything

  def _check_applies_to(self, variables: Iterable[Variable]) -> None:
    """ValueError when the spec names none of `variables`."""
    variables = list(variables)
    if not self._entries or any(v in self for v in variables):
      return
    named = ", ".join(_variables.describe(v) for v in self.variables)
    given = ", ".join(_variables.checkpoint_name(v) for v in variables)
    raise ValueError(
        f"the spec names {named}, none of which is among the variables being "
        f"trained ({given}); was it built for another model or graph, or is "
        "the variable not trainable? To train with nothing frozen, call the "
        "optimizer directly.")

  def _fingerprint(self) -> tuple:
    return tuple((key, selection.fingerprint())
                 for key, (_, selection) in self._entries.items())


def freeze(variable: Variable, index: Index = None) -> FreezeSpec:
  """A spec freezing exactly the elements `variable.numpy()[index]` selects.

  Args:
    variable: a `tf.Variable` (resource, TF1 ref or distributed).
    index: an int, slice, `np.s_[...]` tuple, integer index array, boolean
      mask of the full shape or of leading axes, or `Ellipsis`. Negative
      indices count from the end. None freezes the whole variable. A bool
      variable of the full shape is a mask read at every step: assign it
      between steps to change the freeze without retracing.

  Returns:
    A `FreezeSpec` naming `variable`.

  Raises:
    TypeError: `variable` is not a variable, or `index` holds a float, a
      string or another type NumPy would not index with.
    ValueError: a boolean mask does not fit the variable's shape.
    IndexError: an index is out of range.

  >>> x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
  >>> tfpartial.freeze(x, np.s_[:, 0]).frozen_mask(x)
  array([[ True, False],
         [ True, False]])
  """
  _variables.check_variable(variable)
  shape = _variables.static_shape(variable)
  if index is None:
    selection = _selection.Everything(shape)
  elif _variables.is_variable(index):
    selection = _dynamic(variable, index, trains=False)
  else:
    selection = _static(variable, shape, index, trains=False)
  return FreezeSpec._of({_variables.key(variable): (variable, selection)})


def train_only(variable: Variable, index: Index, *,
               compact: bool = False) -> FreezeSpec:
  """A spec freezing every element of `variable` except those `index` selects.

  Args:
    variable: a `tf.Variable` (resource, TF1 ref or distributed).
    index: as for `freeze`; these elements are the ones that train.
    compact: for an index of whole rows: the optimizer trains a variable
      of those rows only, made by tfpartial, so its state costs only what
      trains (a few new rows of a large embedding). Frozen rows are then
      never read or written by a step.

  Returns:
    A `FreezeSpec` naming `variable`.

  Raises:
    TypeError, ValueError, IndexError: as for `freeze`.

  >>> w = tf.Variable(tf.zeros([2, 2]), name="w")
  >>> tfpartial.train_only(w, np.eye(2, dtype=bool)).frozen_mask(w)
  array([[False,  True],
         [ True, False]])
  """
  _variables.check_variable(variable)
  shape = _variables.static_shape(variable)
  if _variables.is_variable(index):
    if compact:
      raise ValueError(
          f"`compact` needs a fixed index of rows for "
          f"{_variables.describe(variable)}, not a mask variable.")
    selection = _dynamic(variable, index, trains=True)
  else:
    selection = _static(variable, shape, index, trains=True, compact=compact)
  return FreezeSpec._of({_variables.key(variable): (variable, selection)})


def _static(variable: Variable, shape, index: Index, trains: bool,
            compact: bool = False):
  """The selection of a NumPy index: a row set when it names whole rows."""
  described = _variables.describe(variable)
  checked = _index.check_index(index, described)
  rows = _index.row_set(shape, checked)
  if compact and rows is None:
    selection_mask = _index.selection_mask(shape, checked, described)
    del selection_mask  # Raises for a bad index; otherwise it is not rows.
    raise ValueError(
        f"`compact` needs `index` to select whole rows of {described} (an "
        "int, a slice, row numbers or a boolean vector over the first axis)"
        f"; got {index!r}.")
  if rows is not None:
    return _selection.from_rows(shape, rows, trains=trains, compact=compact)
  selected = _index.selection_mask(shape, checked, described)
  return _selection.from_mask(~selected if trains else selected)


def _dynamic(variable: Variable, mask: Variable, trains: bool):
  """The selection a boolean mask variable gives, checked against `variable`."""
  dtype = tf.as_dtype(_variables.storage(mask).dtype).base_dtype
  if dtype != tf.bool:
    raise TypeError(
        f"`index` is the variable '{_variables.checkpoint_name(mask)}' of "
        f"dtype {dtype.name}; a mask variable for {_variables.describe(variable)}"
        " must be bool.")
  shape = _variables.static_shape(variable)
  if tuple(tf.TensorShape(mask.shape).as_list()) != shape:
    raise ValueError(
        f"`index` is the mask variable '{_variables.checkpoint_name(mask)}' "
        f"of shape {_variables.shape_text(mask.shape)}, which does not fit "
        f"{_variables.describe(variable)}; a mask variable has the full shape.")
  return _selection.Dynamic(shape, ((mask, trains),))


def load_spec(text_or_path: _specfile.PathOrText, variables: Any) -> FreezeSpec:
  """The spec a spec file describes, bound to `variables` by name.

  Args:
    text_or_path: JSON text, or the path of a spec file (`.npy` masks it
      names are read relative to it).
    variables: the variables to bind: an iterable, a name -> variable
      mapping, or a `tf.Module` / Keras model (its `.variables`). Names are
      checkpoint names: `x` for the TF1 `x:0`, a Keras variable's `path`.

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
  """
  data, directory = _specfile.read(text_or_path)
  named = _specfile.variables_by_name(variables)
  spec = FreezeSpec()
  for name, kind, index, shape, compact in _specfile.entries(data, directory):
    variable = named.get(name)
    if variable is None:
      given = ", ".join(sorted(named)) or "none"
      raise ValueError(
          f"the spec names '{name}', which is not among the variables given "
          f"({given})")
    if shape is not None and shape != _variables.static_shape(variable):
      raise ValueError(
          f"the spec gives '{name}' the shape {shape}; the "
          f"{_variables.describe(variable)}")
    if kind == "freeze":
      spec = spec | freeze(variable, index)
    else:
      spec = spec | train_only(variable, index, compact=compact)
  return spec
