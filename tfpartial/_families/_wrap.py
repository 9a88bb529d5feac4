"""How `spec.wrap` makes an optimizer honour a spec, for every family.

A wrapped optimizer is a copy of the user's, of `Partial<Base>`: a class
made once per base class (`partial_class`), from the family's mixin (which
overrides the family's apply methods), the base's compiled-kernel mixin
where it has one (`_fused.py`), and the base class itself, so `isinstance`,
configs, checkpoints and `model.compile` see the optimizer they know. The
copy shares the optimizer's state objects (slots, variables), so both see
one optimizer state; the optimizer itself is not changed.

Every `Partial<Base>` is a `Carrier`: it holds the spec's value, knows its
family row and base class, and, for the Keras families (`ConfigCarrier`),
writes the spec into its config, so the freeze travels with a saved model:
loaded from that config, it binds the spec again to the variables it is
built on (by position, since a variable's name can differ once a model is
loaded).
"""

from __future__ import annotations

import functools
import sys
from types import FrameType, ModuleType
from typing import (TYPE_CHECKING, Any, Dict, Optional, Sequence, Type,
                    TypeVar, Union, cast)

from tfpartial._families import _family
from tfpartial._frozen import _errors
from tfpartial._frozen import _late
from tfpartial._frozen import _specfile
from tfpartial._frozen import _value
from tfpartial._frozen import _variables
from tfpartial._frozen._types import Optimizer, OptimizerT, Variable
from tfpartial._kernels import _fused

_C = TypeVar("_C")

# A mixin is put before an optimizer class (`partial_class`), which supplies
# what the mixin calls on `self` and on `super()`. For mypy, a class under
# `TYPE_CHECKING` declares that between the mixin and its base; at run time
# the name is the base itself, so the classes are what they always were.
# (Each family's module does the same for its own optimizer class.)
if TYPE_CHECKING:

  class OptimizerBase:
    """What the optimizer class of every family offers."""

    def apply_gradients(self, grads_and_vars: Any, /) -> Any: ...
else:
  OptimizerBase = object


class Carrier(OptimizerBase):
  """The state every wrapped optimizer carries, set by `copy_as` or
  `ConfigCarrier.from_config`; the class attributes by `partial_class`."""

  _tfpartial_base: type
  _tfpartial_family: _family.Family

  def _tfpartial_value(
      self, variables: Optional[Sequence[Variable]] = None
  ) -> _value.SpecValue:
    """The spec's value; after loading, bound now to `variables`; for a
    spec loaded without variables, with those of `variables` it has not
    seen bound now (`_late.LateSpec.bind`)."""
    value: Optional[_value.SpecValue] = self.__dict__.get("_tfpartial_spec")
    if value is not None:
      return value
    late: Optional[_late.LateSpec] = self.__dict__.get("_tfpartial_late")
    if late is not None:
      if variables is None:
        raise _errors.unbound_late(type(self))
      return late.bind(variables, self)
    if variables is None:
      raise _errors.unbound(type(self))
    saved = self.__dict__.get("_tfpartial_saved") or {}
    order = saved.get("built_on")
    named: _specfile.Variables = variables
    if order is not None and len(order) == len(variables):
      named = dict(zip(order, variables))
    value = _value.load(saved.get("spec") or "{}", named)
    self.__dict__["_tfpartial_spec"] = value
    return value

  def _tfpartial_built(self, variables: Sequence[Variable]) -> None:
    """Records the variables the optimizer is built on, for the config."""
    if self.__dict__.get("_tfpartial_built_on") is None:
      self.__dict__["_tfpartial_built_on"] = [
          _variables.checkpoint_name(v) for v in variables]


if TYPE_CHECKING:

  class ConfigBase(Carrier):
    """What a Keras optimizer class (Keras 3 or 2) offers: its config,
    whose values are Keras' own (numbers, names, nested configs), so Any."""

    def get_config(self) -> Dict[str, Any]: ...

    @classmethod
    def from_config(cls: Type[_C], config: Dict[str, Any],
                    custom_objects: Optional[Dict[str, object]] = None
                    ) -> _C: ...
else:
  ConfigBase = Carrier


class ConfigCarrier(ConfigBase):
  """A carrier whose config holds its spec (the Keras families)."""

  def get_config(self) -> Dict[str, Any]:
    config = super().get_config()
    value = self.__dict__.get("_tfpartial_spec")
    late: Optional[_late.LateSpec] = self.__dict__.get("_tfpartial_late")
    if value is None and late is not None:
      value = late.bound_eagerly()
      if value is None:  # Not bound yet: by name, when it first steps.
        config["tfpartial"] = {"spec": late.text, "built_on": None}
        return config
    if value is None:
      config["tfpartial"] = self.__dict__.get("_tfpartial_saved")
    else:
      # The elements a criterion selected, not the criterion: a model
      # loaded after training trains the same elements, not those its
      # trained values would select.
      config["tfpartial"] = {
          "spec": value.to_json(criteria=False),
          "built_on": self.__dict__.get("_tfpartial_built_on")}
    return config

  @classmethod
  def from_config(cls: Type[_C], config: Dict[str, Any],
                  custom_objects: Optional[Dict[str, object]] = None) -> _C:
    config = dict(config)
    saved = config.pop("tfpartial", None)
    optimizer = super().from_config(config, custom_objects=custom_objects)
    optimizer.__dict__.update(_tfpartial_spec=None, _tfpartial_saved=saved,
                              _tfpartial_built_on=None, _tfpartial_late=None)
    return optimizer


@functools.lru_cache(maxsize=None)
def partial_class(family: _family.Family, base: type) -> Type[Carrier]:
  """`Partial<Base>` of `family`, made once, and registered if the family
  registers its classes (Keras: as `tfpartial>Partial<Base>`)."""
  kind = _fused.kind_for(family.fused(), base)
  parent = base if kind is None else _fused.fused_class(kind)
  legacy = "Legacy" if ".legacy" in base.__module__ else ""
  cls = type(f"Partial{legacy}{base.__name__}", (family.mixin, parent),
             {"__module__": family.mixin.__module__, "__doc__": base.__doc__,
              "_tfpartial_base": base, "_tfpartial_family": family})
  if family.register is not None:
    cls = family.register(cls)
  return cast(Type[Carrier], cls)  # Of the family's mixin, a Carrier.


def wrap(family: _family.Family,
         value: Union[_value.SpecValue, _late.LateSpec],
         optimizer: OptimizerT) -> OptimizerT:
  """A copy of `optimizer`, of `Partial<its class>`, carrying `value` (or a
  spec that binds by name at its first step).

  Wrapping a wrapped optimizer wraps its base class again, with the union
  of both specs.
  """
  base = type(optimizer)
  if isinstance(optimizer, Carrier):
    if isinstance(value, _late.LateSpec) or optimizer.__dict__.get(
        "_tfpartial_late") is not None:
      raise _errors.late_union(type(optimizer))
    value = optimizer._tfpartial_value().union(value)
    base = optimizer._tfpartial_base
  # Of `Partial<its class>`, a subclass of the optimizer's own class.
  return cast(OptimizerT, copy_as(partial_class(family, base), optimizer,
                                  value))


def copy_as(cls: Type[Carrier], optimizer: Optimizer,
            value: Union[_value.SpecValue, _late.LateSpec]) -> Carrier:
  """A copy of `optimizer` of class `cls` (sharing its state), holding
  `value` (or a spec to bind at its first step)."""
  wrapped = object.__new__(cls)
  wrapped.__dict__.update(optimizer.__dict__)
  late = value if isinstance(value, _late.LateSpec) else None
  wrapped.__dict__.update(
      _tfpartial_spec=None if late is not None else value,
      _tfpartial_late=late, _tfpartial_saved=None, _tfpartial_built_on=None)
  if late is not None:  # One more optimizer to bind the spec's names.
    late.share(wrapped)
  return wrapped


def carried(optimizer: object,
            variables: Optional[Sequence[Variable]] = None
            ) -> Optional[_value.SpecValue]:
  """The value a wrapped optimizer carries, or None when it has none or is
  loaded and not bound yet. Given `variables` (those the optimizer will be
  built or stepped on), a loaded one is bound to them now, as its first
  step would bind it."""
  if not isinstance(optimizer, Carrier):
    return None
  value: Optional[_value.SpecValue] = optimizer.__dict__.get(
      "_tfpartial_spec")
  if value is None and variables and (
      optimizer.__dict__.get("_tfpartial_saved") is not None
      or optimizer.__dict__.get("_tfpartial_late") is not None):
    value = optimizer._tfpartial_value(list(variables))
  return value


# Keras' package name for every class tfpartial registers.
PACKAGE = "tfpartial"


def register_with(saving: ModuleType, cls: type) -> type:
  """Registers `cls` with a Keras package's `saving` module as
  `tfpartial>Partial<Base>`."""
  registered: type = saving.register_keras_serializable(package=PACKAGE)(cls)
  return registered


def register_builtins(family: _family.Family) -> None:
  """Makes (and so registers) `Partial<Base>` for the family's built-in
  classes, so that loading a saved wrapped optimizer finds its class."""
  for base in family.builtins():
    partial_class(family, base)


def wrapped_by_loss_scaling(optimizer: Optimizer,
                            depth: int = 8) -> bool:
  """Whether a caller a few frames up is a loss-scale optimizer whose inner
  optimizer is `optimizer`: Keras' `compile` wraps the optimizer it is
  given in one under a mixed_float16 policy, and nothing else tells."""
  frame: Optional[FrameType]
  frame = sys._getframe(1)  # pylint: disable=protected-access
  for _ in range(depth):
    frame = frame.f_back
    if frame is None:
      return False
    caller = frame.f_locals.get("self")
    if (caller is not None and caller is not optimizer
        and "LossScaleOptimizer" in type(caller).__name__
        and getattr(caller, "inner_optimizer", None) is optimizer):
      return True
  return False


def check_not_inside_loss_scaling(optimizer: Optimizer) -> None:
  """ValueError when a loss-scale optimizer wraps the wrapped `optimizer`."""
  if wrapped_by_loss_scaling(optimizer):
    raise loss_scale_outside(optimizer)


def loss_scale_outside(optimizer: Optimizer) -> ValueError:
  """The error for a loss-scale optimizer around the wrapped `optimizer`,
  naming the fix in the optimizer's own Keras package."""
  package = _family.base_of(optimizer).__module__.split(".")[0]
  return _errors.loss_scale_outside(type(optimizer), package)

