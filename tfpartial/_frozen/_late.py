"""A spec file read now and bound by name later, when its variables exist.

`tfpartial.load_spec(path)` without variables: a canned Estimator calls
its optimizer before any model variable exists, and some trainers make the
optimizer before the model. The file is read and checked at once (its
JSON, every index, its mask files' names); the variables are found by
checkpoint name when a step first sees them, once per graph (an Estimator
builds a new graph for every `train`), and a name that matches none of
them is an error at that step, naming it and the nearest names.
"""

from __future__ import annotations

import difflib
import threading
import weakref
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import tensorflow as tf

from tfpartial._frozen import _specfile
from tfpartial._frozen import _value
from tfpartial._frozen._types import Variable
from tfpartial._frozen._value import SpecValue


class LateSpec:
  """A spec file's checked entries, bound by name at a step (`bind`)."""

  def __init__(self, entries: Tuple[_specfile.Entry, ...], text: str):
    self.entries, self.text = entries, text
    self._eager: Dict[str, SpecValue] = {}
    self._graphs: "weakref.WeakKeyDictionary[Any, SpecValue]" = (
        weakref.WeakKeyDictionary())
    self._lock = threading.Lock()

  @property
  def names(self) -> Tuple[str, ...]:
    return tuple(entry.name for entry in self.entries)

  def bind(self, variables: Sequence[Variable]) -> SpecValue:
    """The spec bound to `variables` by checkpoint name, once per graph
    (eagerly, once); ValueError naming an entry no variable matches."""
    with tf.init_scope():
      eager = tf.executing_eagerly()
      graph = None if eager else tf.compat.v1.get_default_graph()
    with self._lock:
      bound = self._eager.get("eager") if eager else self._graphs.get(graph)
      if bound is None:
        bound = self._bind(variables)
        if eager:
          self._eager["eager"] = bound
        else:
          self._graphs[graph] = bound
      return bound

  def bound_eagerly(self) -> Optional[SpecValue]:
    """The value bound in eager code, if a step has bound it."""
    return self._eager.get("eager")

  def _bind(self, variables: Sequence[Variable]) -> SpecValue:
    named = _specfile.variables_by_name(list(variables))
    for entry in self.entries:
      if not entry.pattern and entry.name not in named:
        raise unmatched(entry.name, sorted(named))
    return _value.from_entries(self.entries, named)

  def __repr__(self) -> str:
    names = ", ".join(self.names)
    return f"FreezeSpec(binds by name at its first step: {names})"


def read(text_or_path: _specfile.PathOrText) -> LateSpec:
  """The spec a file describes, checked now, to bind when it steps."""
  data, directory = _specfile.read(text_or_path)
  entries = tuple(_specfile.entries(data, directory))
  return LateSpec(entries, _specfile.dumps(data))


def candidates(var_list: Optional[Iterable[Variable]]) -> List[Variable]:
  """The variables a `minimize` binds a spec to: `var_list`, or in a TF1
  graph its trainable variables."""
  if var_list is not None:
    listed: List[Variable] = tf.nest.flatten(var_list)
    return listed
  with tf.init_scope():
    eager = tf.executing_eagerly()
  if eager:
    raise ValueError(
        "a spec loaded without variables binds to the variables it trains; "
        "eagerly, pass them to `minimize` as `var_list`.")
  trainable: List[Variable] = (
      tf.compat.v1.trainable_variables() + tf.compat.v1.get_collection(
          tf.compat.v1.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
  return trainable


def unmatched(name: str, given: Sequence[str]) -> ValueError:
  """A late spec's entry that no variable of the step has."""
  near = difflib.get_close_matches(name, given, n=3, cutoff=0.5)
  hint = (f"; the nearest names are {', '.join(repr(n) for n in near)}"
          if near else "")
  listed = ", ".join(given[:20]) or "none"
  if len(given) > 20:
    listed += f", ... ({len(given)} in all)"
  return ValueError(
      f"the spec names '{name}', which is not among the variables this step "
      f"trains ({listed}){hint}. A spec loaded without variables binds by "
      "checkpoint name when it first steps.")
