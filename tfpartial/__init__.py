"""tfpartial: freeze part of a TensorFlow variable during training."""

from importlib import metadata as _metadata

from tfpartial._spec import FreezeSpec
from tfpartial._spec import freeze
from tfpartial._spec import load_spec
from tfpartial._spec import spec_of
from tfpartial._spec import train_only

__all__ = ["FreezeSpec", "freeze", "load_spec", "spec_of", "train_only"]

try:
  __version__ = _metadata.version("tfpartial")
except _metadata.PackageNotFoundError:  # Not installed: a source checkout.
  __version__ = "0+unknown"
