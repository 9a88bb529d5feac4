"""tfpartial: freeze part of a TensorFlow variable during training."""

# Only what the interpreter has loaded already: `python -m tfpartial` imports
# this package while the current folder is still first on `sys.path` (its
# `__main__` then takes it off), so anything imported here could come from
# the folder the user stands in (a scanned tree's `json/` or `typing.py`).
from importlib import import_module as _import_module
import sys as _sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing.
if TYPE_CHECKING:
  from tfpartial._api._spec import FreezeSpec
  from tfpartial._api._criteria import freeze_across
  from tfpartial._api._criteria import largest
  from tfpartial._api._criteria import n_of_m
  from tfpartial._api._criteria import random_subset
  from tfpartial._api._criteria import smallest
  from tfpartial._api._criteria import train_only_across
  from tfpartial._api._criteria import zeros
  from tfpartial._api._make import freeze
  from tfpartial._api._make import load_spec
  from tfpartial._api._make import spec_of
  from tfpartial._api._make import train_only
  from tfpartial._api._pruned import keep_pruned
del TYPE_CHECKING

# Each public name and its module, imported on first use (PEP 562) so that
# the `tfpartial` command answers `--help` without importing TensorFlow and
# can quiet TensorFlow's start-up log before it loads.
_PUBLIC = {
    "FreezeSpec": "tfpartial._api._spec",
    "freeze": "tfpartial._api._make",
    "load_spec": "tfpartial._api._make",
    "spec_of": "tfpartial._api._make",
    "train_only": "tfpartial._api._make",
    # Criteria: indices computed from the variables' values.
    "zeros": "tfpartial._api._criteria",
    "largest": "tfpartial._api._criteria",
    "smallest": "tfpartial._api._criteria",
    "n_of_m": "tfpartial._api._criteria",
    "random_subset": "tfpartial._api._criteria",
    "freeze_across": "tfpartial._api._criteria",
    "train_only_across": "tfpartial._api._criteria",
    # A pruned model's (or TF1 checkpoint's) pruned elements.
    "keep_pruned": "tfpartial._api._pruned",
}
__all__ = ["FreezeSpec", "freeze", "load_spec", "spec_of", "train_only",
           "zeros", "largest", "smallest", "n_of_m", "random_subset",
           "freeze_across", "train_only_across", "keep_pruned"]

__version__: str  # The installed version, read on first use.


def __getattr__(name: str) -> object:
  if name == "__version__":
    return _version()
  if name not in _PUBLIC:
    raise AttributeError(f"module 'tfpartial' has no attribute {name!r}")
  value = getattr(_import_module(_PUBLIC[name]), name)
  globals()[name] = value
  return value


def _version() -> str:
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  try:
    version = metadata.version("tfpartial")
  except metadata.PackageNotFoundError:  # Not installed: a source checkout.
    version = "0+unknown"
  globals()["__version__"] = version
  return version


def __dir__() -> "list[str]":
  return sorted(set(globals()) | set(__all__) | {"__version__"})


if "tensorflow" in _sys.modules:
  # TensorFlow is loaded already, so importing the API now costs little,
  # and it registers the wrapped optimizer classes with Keras: a model saved
  # with one then loads after `import tfpartial` alone.
  _import_module("tfpartial._api._make")
