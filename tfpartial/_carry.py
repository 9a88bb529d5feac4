"""How a wrapped Keras or tf_keras optimizer carries its spec.

The wrapped optimizer is a copy of the user's, of a subclass of its class.
Its config holds the spec as JSON and the names of the variables it was
built on, in order; loaded from that config, it binds the spec again to the
variables it is built on (by position: a variable's name can differ once a
model is loaded), so the freeze travels with a saved model.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from tfpartial import _variables


def wrap(spec: Any, optimizer: Any, carrier: type, partial_class) -> Any:
  """A copy of `optimizer`, of `partial_class(its class)`, carrying `spec`.

  Wrapping a wrapped optimizer (an instance of `carrier`) wraps its base
  class again, with the union of both specs.
  """
  base = type(optimizer)
  if isinstance(optimizer, carrier):
    spec = optimizer._tfpartial_spec_for(None) | spec
    base = optimizer._tfpartial_base
  return copy_as(partial_class(base), optimizer, spec)


def copy_as(cls: type, optimizer: Any, spec: Any) -> Any:
  """A copy of `optimizer` of class `cls` (sharing its state), holding `spec`."""
  wrapped = object.__new__(cls)
  wrapped.__dict__.update(optimizer.__dict__)
  wrapped.__dict__.update(_tfpartial_spec=spec, _tfpartial_saved=None,
                          _tfpartial_built_on=None)
  return wrapped


class SpecCarrier:
  """Mixin: a spec, bound now or after loading, written into the config."""

  _tfpartial_base: type

  def _tfpartial_spec_for(self, variables: Optional[Sequence[Any]]):
    """The bound spec; after loading, bound now to `variables`."""
    spec = self.__dict__.get("_tfpartial_spec")
    if spec is None:
      if variables is None:
        raise ValueError(
            f"{type(self).__name__} was loaded from a config; its spec binds "
            "to the variables it is first built or stepped on.")
      saved = self.__dict__.get("_tfpartial_saved") or {}
      order = saved.get("built_on")
      named = variables
      if order is not None and len(order) == len(variables):
        named = dict(zip(order, variables))
      from tfpartial import _spec  # pylint: disable=g-import-not-at-top
      spec = _spec.load_spec(saved.get("spec") or "{}", named)
      self.__dict__["_tfpartial_spec"] = spec
    return spec

  def _tfpartial_built(self, variables: Sequence[Any]) -> None:
    """Records the variables the optimizer is built on, for the config."""
    if self.__dict__.get("_tfpartial_built_on") is None:
      self.__dict__["_tfpartial_built_on"] = [
          _variables.checkpoint_name(v) for v in variables]

  def get_config(self):
    config = super().get_config()
    spec = self.__dict__.get("_tfpartial_spec")
    if spec is None:
      config["tfpartial"] = self.__dict__.get("_tfpartial_saved")
    else:
      config["tfpartial"] = {
          "spec": spec.to_json(),
          "built_on": self.__dict__.get("_tfpartial_built_on")}
    return config

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    saved = config.pop("tfpartial", None)
    optimizer = super().from_config(config, custom_objects=custom_objects)
    optimizer.__dict__.update(_tfpartial_spec=None, _tfpartial_saved=saved,
                              _tfpartial_built_on=None)
    return optimizer
