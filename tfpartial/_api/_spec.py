"""`FreezeSpec`: the public value, and what it trains with.

A `FreezeSpec` holds the spec's value (`_value.SpecValue`), or a spec file
to bind by name at its first step (`_late.LateSpec`), and hands it to the
optimizer families (`_optimizers.py`) to train with. The functions that
make one are in `_make.py`.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from tfpartial._families import _family
from tfpartial._families import _optimizers
from tfpartial._families import _wrap
from tfpartial._frozen import _errors
from tfpartial._frozen import _late
from tfpartial._frozen import _specfile
from tfpartial._frozen import _value
from tfpartial._frozen._specfile import Variables
from tfpartial._frozen._types import (GradAndVar, Gradient, GradsAndVars, Index,
                                      Loss, Optimizer, OptimizerT, Variable)
from tfpartial._frozen._value import SpecValue
from tfpartial._step import _checks
from tfpartial._step import _compact
from tfpartial._step import _mask
from tfpartial._step import _mode

# The step entry points hold no Python control flow on tensors, so
# autograph, which converts what a user's `tf.function` calls, would only
# add to its trace (seconds on a large model): it leaves them as written.
_not_converted = _mode.not_converted


class FreezeSpec:
  """Which elements of which variables stay fixed during training.

  Build one with `tfpartial.freeze` or `tfpartial.train_only` (or read one
  with `tfpartial.load_spec`) and combine them with `|`. A spec is
  immutable and compares by value: two specs are equal when they freeze the
  same elements of the same variables.

  Three ways to train with it, each keeping every frozen element
  bit-for-bit what it was before the step, whatever the optimizer does:
  `apply_gradients` (your own loop), `minimize` (one call per step), and
  `wrap` (an optimizer for code you do not change, and `model.compile`).

  The optimizer families: every `tf.compat.v1.train.Optimizer`, every
  Keras 3 optimizer (`keras.optimizers.*`, `LossScaleOptimizer` and
  `MultiOptimizer` included), and the Keras 2 optimizers of `tf_keras`
  (new and `legacy`; `keras` itself on TensorFlow 2.15).

  >>> x = tf.Variable([1.0, 2.0], name="x")
  >>> spec = tfpartial.freeze(x, 0)
  >>> spec
  FreezeSpec(x: 1/2 frozen)
  >>> spec.frozen_mask(x)
  array([ True, False])
  """

  __slots__ = ("_value", "_unbound")
  _value: SpecValue
  # A spec file loaded without variables, bound by name at its first step.
  _unbound: Optional[_late.LateSpec]

  def __init__(self) -> None:
    """An empty spec, which freezes nothing; `|` adds to it."""
    object.__setattr__(self, "_value", _value.SpecValue())
    object.__setattr__(self, "_unbound", None)

  @classmethod
  def _of(cls, value: SpecValue) -> "FreezeSpec":
    spec = cls()
    object.__setattr__(spec, "_value", value)
    # What trains compact gets its small variable now, where the spec is
    # made eagerly: a step inside `strategy.run` cannot make a strategy's,
    # and a checkpoint restored before the first step finds it.
    _compact.make_ahead((variable, value.selection(variable))
                        for variable in value.step_variables)
    return spec

  @classmethod
  def _late_of(cls, late: _late.LateSpec) -> "FreezeSpec":
    spec = cls()
    object.__setattr__(spec, "_unbound", late)
    return spec

  def _bound(self, variables: Sequence[Variable]) -> SpecValue:
    """The value; a spec loaded without variables bound to `variables`."""
    if self._unbound is None:
      return self._value
    return self._unbound.bind(variables)

  def _known(self, what: str) -> SpecValue:
    """The value, for what needs the variables bound already."""
    if self._unbound is not None:
      raise _errors.late_needs_variables(what, self._unbound.names)
    return self._value

  def __setattr__(self, name: str, value: object) -> None:
    raise AttributeError("FreezeSpec is immutable; combine specs with `|`.")

  # --- The value -----------------------------------------------------------

  @property
  def variables(self) -> Tuple[Variable, ...]:
    """The variables the spec names, in the order they were added."""
    return self._known("spec.variables").variables

  def frozen_mask(self, variable: Variable) -> np.ndarray:
    """A NumPy bool array of `variable`'s shape, True where frozen.

    A variable the spec does not name has nothing frozen: all False. For a
    mask variable (see `freeze`) it is the mask as it stands now, in eager
    code.

    Args:
      variable: a variable.

    Returns:
      A new array; changing it changes nothing in the spec.

    Raises:
      TypeError: `variable` is not a variable.
    """
    return _value.frozen_mask(self._known("spec.frozen_mask"), variable)

  def __or__(self, other: "FreezeSpec") -> "FreezeSpec":
    if not isinstance(other, FreezeSpec):
      return NotImplemented
    return FreezeSpec._of(self._known("`|`").union(other._known("`|`")))

  def __len__(self) -> int:
    """The number of variables the spec names."""
    if self._unbound is not None:
      return len(self._unbound.names)
    return len(self._value)

  def __contains__(self, variable: object) -> bool:
    return variable in self._known("`in`")

  def __eq__(self, other: object) -> bool:
    if not isinstance(other, FreezeSpec):
      return NotImplemented
    if self._unbound is not None or other._unbound is not None:
      return self is other
    return self._value.fingerprint() == other._value.fingerprint()

  def __hash__(self) -> int:
    if self._unbound is not None:
      return id(self)
    return hash(self._value.fingerprint())

  def __repr__(self) -> str:
    if self._unbound is not None:
      return repr(self._unbound)
    return f"FreezeSpec({self._value.describe()})"

  # --- Gradients -----------------------------------------------------------

  @_not_converted
  def mask(self, gradients: Sequence[Gradient],
           variables: Sequence[Variable]) -> List[Gradient]:
    """The gradients, aligned with `variables`, every frozen element's 0.

    For code that changes gradients between computing and applying them,
    such as `tf.clip_by_global_norm` (whose global norm must count only
    what trains): the one line to add is
    `grads = spec.mask(tf.gradients(loss, tvars), tvars)`.

    The result has one entry per variable, in the order given, so it can
    never pair a gradient with the wrong variable. A fully frozen
    variable's entry is an exact zero of its gradient's form (a
    `tf.IndexedSlices` stays sparse), not None: clipping counts it as 0,
    and every optimizer family takes it. A None gradient stays None. A
    frozen element's gradient is exactly 0 even where it was Inf or NaN.

    Masking does not freeze by itself: momentum, weight decay and FTRL move
    elements whose gradient is 0. Apply the result with a wrapped optimizer
    (`wrap`) or `apply_gradients`.

    Args:
      gradients: one gradient (a tensor, `tf.IndexedSlices` or None) per
        variable.
      variables: the variables, in the same order.

    Returns:
      A list of gradients, one per variable.

    Raises:
      ValueError: the two lists differ in length, or a gradient's shape
        does not fit its variable.
      TypeError: an entry of `variables` is not a variable, or one of
        `gradients` is not a gradient (a (gradient, variable) pair, say:
        those go to `mask_gradients`).

    >>> x = tf.Variable([1.0, 2.0], name="x")
    >>> b = tf.Variable([3.0], name="b")
    >>> spec = tfpartial.freeze(x, 0) | tfpartial.freeze(b)
    >>> [g.numpy() for g in spec.mask([tf.constant([5.0, 6.0]),
    ...                                tf.constant([7.0])], [x, b])]
    [array([0., 6.], dtype=float32), array([0.], dtype=float32)]
    """
    pairs = _checks.check_aligned(gradients, variables)
    value = self._bound([variable for _, variable in pairs])
    return _mask.mask_aligned(value.selection, pairs)

  @_not_converted
  def mask_gradients(self, grads_and_vars: GradsAndVars) -> List[GradAndVar]:
    """The pairs with every frozen element's gradient exactly 0.

    Fully frozen variables are **dropped** from the result, `None`
    gradients kept, and `tf.IndexedSlices` stay sparse; Inf and NaN on
    frozen elements become 0. Because pairs are dropped, the result no
    longer lines up with a separate list of variables: to mask a list of
    gradients aligned with its variables, use `mask`.

    Args:
      grads_and_vars: (gradient, variable) pairs.

    Returns:
      A list of (gradient, variable) pairs.

    Raises:
      TypeError: a pair is malformed or holds something that is not a
        variable.
      ValueError: a gradient's shape does not fit its variable.
    """
    pairs = _checks.check_grads_and_vars(grads_and_vars)
    value = self._bound([variable for _, variable in pairs])
    return _mask.mask_gradients(value.selection, pairs)

  # --- Training ------------------------------------------------------------

  @_not_converted
  def apply_gradients(self, optimizer: Optimizer, grads_and_vars: GradsAndVars,
                      **kwargs: Any) -> Any:
    """Masks the gradients, applies them with `optimizer`, keeps the freeze.

    Works in a TF1 graph, eagerly and inside `tf.function`, with an
    optimizer of any family:

    * `tf.compat.v1.train.Optimizer`: `kwargs` are its `apply_gradients`
      arguments (`global_step`, `name`).
    * Keras 3 (`keras.optimizers.*`): no `kwargs`.
    * `tf_keras` / Keras 2: `kwargs` are its `apply_gradients` arguments.

    Fully frozen variables are left out of the update (so the optimizer
    makes no state for them); a wrapped optimizer (`wrap`) keeps them
    instead, for a plain run's checkpoint layout. Given an optimizer
    wrapped with this spec (or one that freezes all it does), the wrapped
    optimizer steps once under its own spec.

    Args:
      optimizer: an optimizer of one of the families above, plain or
        wrapped.
      grads_and_vars: (gradient, variable) pairs, e.g.
        `zip(grads, variables)`.
      **kwargs: passed on to the optimizer's `apply_gradients`.

    Returns:
      What the optimizer's `apply_gradients` returns; in a TF1 graph an op
      that runs the update and keeps the freeze.

    Raises:
      TypeError: `optimizer` is not an optimizer, a pair is malformed, or
        `kwargs` are not the optimizer's.
      ValueError: no variable in `grads_and_vars` is in the spec, or every
        one is fully frozen.
    """
    family = _optimizers.family_of(optimizer)
    pairs = _checks.pairs_of(grads_and_vars)
    value = self._bound([variable for _, variable in pairs])
    return _step(family, value, optimizer, pairs, kwargs)

  @_not_converted
  def minimize(self, optimizer: Optimizer, loss: Loss,
               var_list: Optional[Iterable[Variable]] = None,
               **kwargs: Any) -> Any:
    """Computes the gradients of `loss` and applies them under the spec.

    Fully frozen variables are left out of `var_list`, so they get no
    gradient ops and no optimizer state (a checkpoint of the optimizer
    then lacks their slots; `wrap` keeps them).

    * `tf.compat.v1.train.Optimizer`: in a TF1 graph `loss` is a tensor and
      the train op is returned; eagerly `loss` is a zero-argument callable.
      `var_list` defaults to the trainable variables; `kwargs` are
      `minimize`'s own (`global_step`, `name`, `gate_gradients`, ...).
    * Keras 3: `loss` is a zero-argument callable (eagerly or in
      `tf.function`), `var_list` is required, no `kwargs`; the loss is
      scaled as `fit` scales it (`LossScaleOptimizer`).
    * `tf_keras` / Keras 2: `loss` is a callable, or a tensor with `tape=`;
      `var_list` is required; `kwargs` as for its `minimize`.

    Args:
      optimizer: an optimizer of one of the families above.
      loss: the loss, as the family takes it (above).
      var_list: the variables to train.
      **kwargs: the optimizer's own `minimize` arguments.

    Returns:
      The train op in a TF1 graph; what the optimizer's apply returns
      otherwise.

    Raises:
      TypeError: `optimizer` is not an optimizer, `loss` or `var_list` is
        not what its family takes, or an argument is unknown.
      ValueError: the spec names none of `var_list`, every variable in it
        is fully frozen, or no variable has a gradient.
    """
    family = _optimizers.family_of(optimizer)
    value = self._value
    if self._unbound is not None:
      value = self._unbound.bind(_late.candidates(var_list))
    pairs, apply_kwargs = family.gradients(value, optimizer, loss,
                                           var_list, kwargs)
    return _step(family, value, optimizer, pairs, apply_kwargs)

  def wrap(self, optimizer: OptimizerT) -> OptimizerT:
    """An optimizer of the same class whose every update honours the spec.

    For code you do not want to change (`opt.minimize(loss)` in a TF1
    graph, `optimizer.apply_gradients(...)` after your own clipping) and
    for `model.compile(optimizer=...)`. The result is a new object of a
    subclass of the optimizer's own class (`PartialAdam` for `Adam`), so
    `isinstance` still holds; it shares the optimizer's state and leaves
    the optimizer itself unchanged. Wrapping a wrapped optimizer freezes
    the union of both specs.

    What each family's wrapped optimizer does:

    * `tf.compat.v1.train.Optimizer`: `compute_gradients` masks (frozen
      gradients exact zeros, one pair per variable, fully frozen ones
      included); `apply_gradients` and `minimize` keep the freeze.
    * Keras 3: `apply`, `apply_gradients` and `model.fit` keep the freeze;
      clipping sees masked gradients; the spec is saved in the optimizer's
      config and binds again after `keras.models.load_model` (import
      tfpartial first). Under a mixed_float16 policy, wrap the
      `LossScaleOptimizer` itself; one put around the wrapped optimizer
      (as `compile` does) is refused with a ValueError when it is made
      (in `compile`), or at the first step where Keras makes it without
      touching the inner optimizer (Keras 3.5), before anything changes.
    * `tf_keras` / Keras 2: `apply_gradients`, `minimize` and `fit`, saved
      and loaded like Keras 3's.

    The optimizer's checkpoint keeps a plain run's layout in every family
    (fully frozen variables are updated on a zero gradient, then restored,
    so their slots exist), so a job can add or drop tfpartial and resume;
    a `compact=True` spec is the exception (its slots belong to the rows
    that train).

    Args:
      optimizer: an optimizer of one of the families above.

    Returns:
      The wrapped optimizer.

    Raises:
      TypeError: `optimizer` is not an optimizer.
    """
    family = _optimizers.family_of(optimizer)
    return _wrap.wrap(family, self._unbound or self._value, optimizer)

  # --- Spec files ----------------------------------------------------------

  def to_json(self, path: Optional[_specfile.PathOrText] = None) -> str:
    """The spec as JSON text, keyed by each variable's checkpoint name.

    Args:
      path: where to write it too. A mask too long to write inline goes to
        a `.npy` file beside it; without a path every mask is inline.

    Returns:
      The JSON text; `tfpartial.load_spec` reads it back.

    Raises:
      ValueError: two variables share a checkpoint name.

    >>> x = tf.Variable(tf.zeros([5, 2]), name="x")
    >>> b = tf.Variable(tf.zeros([2]), name="b")
    >>> print((tfpartial.freeze(x, [0, 1, 3]) | tfpartial.freeze(b)).to_json())
    {
      "x": {"train_only": "[2, 4]", "shape": [5, 2]},
      "b": {"freeze": "...", "shape": [2]}
    }
    """
    return self._known("spec.to_json").to_json(path)


def _step(family: _family.Family, value: SpecValue, optimizer: Optimizer,
          pairs: List[GradAndVar], kwargs: Any) -> Any:
  """`spec.apply_gradients` and `spec.minimize`'s step.

  An optimizer wrapped with a spec that holds this one steps once, as its
  own apply does: the wrapped optimizer's spec is the union, and its
  checkpoint layout is kept. (Stepping under this spec and then under the
  wrapped one would hand the wrapped optimizer a compact spec's small
  variable, which its spec does not name.) Another spec steps under both,
  each guard inside the other, unless one of them trains compact: then
  one step cannot serve both, and it says how to make one spec of them.
  """
  own = _wrap.carried(optimizer, [variable for _, variable in pairs])
  if own is not None and own.holds(value):
    return family.apply(optimizer, pairs, kwargs)
  if own is not None and any(
      selection.compact for spec in (own, value)
      for _, selection in spec.items()):
    raise ValueError(
        f"the optimizer is wrapped with another spec ({own.describe()}) "
        f"than the one stepping it ({value.describe()}), and one of them "
        "trains `compact`: step with one spec, e.g. "
        "`(spec | other).wrap(optimizer)`, or call the wrapped optimizer's "
        "own apply_gradients.")
  return _family.plain_step(family, value, optimizer, pairs, kwargs)
