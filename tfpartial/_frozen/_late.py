"""A spec file read now and bound by name later, as its variables appear.

`tfpartial.load_spec(path)` without variables: a canned Estimator calls
its optimizer before any model variable exists, and some trainers make the
optimizer before the model. The file is read and checked at once (its
JSON, every index, its mask files' names); the variables are found by
checkpoint name when steps show them, in each context apart (eager code,
`tf.function` included, is one; each TF1 graph is one: an Estimator builds
a new graph for every `train`):

- A variable a step shows for the first time in a context is matched
  against the spec's names and patterns then, and bound if one matches:
  what is frozen of it is computed from it there. A layer built after the
  first step, a second model sharing the optimizer, a retrace with new
  variables: each is bound at the step that first shows it, never trained
  freely.
- Once every entry has matched, a step whose variables were all seen
  before matches no name: it looks its variables' ids up among those seen
  (one lookup a variable; in a `tf.function` or a TF1 graph once, when
  the step is traced or built) and takes the bound value.
- Several optimizers may share the spec (each `spec.wrap`ped with it: a
  wide & deep Estimator's two). Each binds what it trains; an entry that
  no variable of the context has matched once every one of them has made
  its first step there is an error at that step, before it changes
  anything, naming the entry and the nearest names. With one optimizer,
  or steps of the spec itself (`spec.apply_gradients`, ...), that is the
  first step. A wrapped optimizer made in a TF1 graph (by an Estimator's
  callable) shares it in that graph only; one made eagerly, everywhere.
  While an entry waits for an optimizer still to step, every step asks
  again, so one dropped without stepping holds the error back no longer
  than it lives.

What a context has bound is one immutable `_Bound`, replaced whole under a
lock, so a step reads it without one.
"""

from __future__ import annotations

import difflib
import functools
import threading
import weakref
from typing import (Any, Callable, Dict, Iterable, List, Mapping,
                    NamedTuple, Optional, Sequence, Tuple)

import tensorflow as tf

from tfpartial._frozen import _criteria
from tfpartial._frozen import _patterns
from tfpartial._frozen import _specfile
from tfpartial._frozen import _value
from tfpartial._frozen._types import Variable
from tfpartial._frozen._value import SpecValue

# Who steps with the spec when it is not a wrapped optimizer (`spec.
# apply_gradients`, `minimize`, `mask`, `mask_gradients`).
_DIRECT = object()


# id -> a weak reference to the object: what a context has seen. An id
# counts only while its object lives (`_holds`), so none is ever taken for
# a new object that reuses it, and nothing is kept alive by being seen.
_Seen = Mapping[int, Callable[[], object]]


class _Bound(NamedTuple):
  """What a late spec has bound in one context; never changed, replaced."""

  value: SpecValue
  seen: _Seen  # Every variable a step has shown here, matched or not.
  names: Tuple[str, ...]  # Their checkpoint names, for errors.
  # The entries' keys no variable has matched yet: while there is one,
  # every step checks it (another optimizer is still to bind it).
  missing: Tuple[str, ...]
  stepped: _Seen  # The optimizers (or `_DIRECT`) that have stepped here.


def _holds(seen: _Seen, thing: object) -> bool:
  reference = seen.get(id(thing))
  return reference is not None and reference() is thing


def _holds_all(seen: _Seen, things: Iterable[object]) -> bool:
  get = seen.get  # The bound path's one loop: a lookup a variable.
  for thing in things:
    reference = get(id(thing))
    if reference is None or reference() is not thing:
      return False
  return True


def _with(seen: _Seen, things: Iterable[object]) -> _Seen:
  """`seen` and `things`, less what has been collected since."""
  grown = {key: reference for key, reference in seen.items()
           if reference() is not None}
  for thing in things:
    try:
      grown[id(thing)] = weakref.ref(thing)
    except TypeError:  # Not weakly referable: held, so its id stays its.
      grown[id(thing)] = functools.partial(_itself, thing)
  return grown


def _itself(thing: object) -> object:
  return thing


class LateSpec:
  """A spec file's checked entries, bound by name at each step (`bind`)."""

  def __init__(self, entries: Tuple[_specfile.Entry, ...], text: str):
    self.entries, self.text = entries, text
    self._eager: Optional[_Bound] = None
    self._graphs: "weakref.WeakKeyDictionary[Any, _Bound]" = (
        weakref.WeakKeyDictionary())
    # id -> (the wrapped optimizer, the graph it was made in or None), weak.
    self._sharers: Dict[int, Tuple["weakref.ref[Any]",
                                   Optional["weakref.ref[Any]"]]] = {}
    self._lock = threading.Lock()

  @property
  def names(self) -> Tuple[str, ...]:
    return tuple(entry.name for entry in self.entries)

  def share(self, optimizer: object) -> None:
    """Counts `optimizer` (wrapped with this spec) among those that bind
    it: in the graph it is made in, or made eagerly, in every context."""
    home = _context()
    with self._lock:
      self._sharers[id(optimizer)] = (
          weakref.ref(optimizer),
          None if home is None else weakref.ref(home))

  def bind(self, variables: Sequence[Variable],
           stepper: object = None) -> SpecValue:
    """The spec bound in this context, with every variable of `variables`
    that matches an entry and was not seen here before bound now.

    Args:
      variables: the variables of a step (or an optimizer's build).
      stepper: the wrapped optimizer stepping, None for a step of the spec
        itself.

    Raises:
      ValueError: an entry matches no variable of the context, and no
        optimizer sharing the spec is still to step here.
    """
    stepper = _DIRECT if stepper is None else stepper
    where = _context()
    bound = self._eager if where is None else self._graphs.get(where)
    if (bound is not None and not bound.missing
        and _holds_all(bound.seen, variables)):
      return bound.value  # The bound path: no name is matched.
    with self._lock:
      bound = self._eager if where is None else self._graphs.get(where)
      if bound is None:
        bound = _Bound(SpecValue(), {}, (), self.names, {})
      bound = self._extended(bound, variables, stepper, where)
      if where is None:
        self._eager = bound
      else:
        self._graphs[where] = bound
      return bound.value

  def bound_eagerly(self) -> Optional[SpecValue]:
    """The value bound in eager code, if a step has bound it."""
    bound = self._eager
    return None if bound is None else bound.value

  def _extended(self, bound: _Bound, variables: Sequence[Variable],
                stepper: object, where: Any) -> _Bound:
    """`bound` with the unseen of `variables` bound where they match;
    while an entry is unmatched, `stepper` as stepped, and a ValueError
    when no other optimizer is still to step here."""
    fresh: Dict[int, Variable] = {}
    for variable in variables:
      if not _holds(bound.seen, variable):
        fresh.setdefault(id(variable), variable)
    value, names, missing = bound.value, bound.names, bound.missing
    seen = bound.seen
    if fresh:
      named = _specfile.variables_by_name(list(fresh.values()))
      found = self._matching(named)
      _check_not_ranked_again(found, bound, named)
      if found:
        value = value.union(_value.from_entries(found, named))
      matched = {entry.name for entry in found}
      missing = tuple(name for name in missing if name not in matched)
      names = names + tuple(named)
      seen = _with(seen, fresh.values())
    stepped = bound.stepped
    if missing:
      stepped = _with(stepped, [stepper])
      if not self._waiting_for(where, stepped):
        pattern = any(e.pattern for e in self.entries if e.name == missing[0])
        raise _unmatched(missing[0], sorted(set(names)), len(stepped),
                         pattern)
    return _Bound(value, seen, names, missing, stepped)

  def _matching(self, named: Mapping[str, Variable]
                ) -> List[_specfile.Entry]:
    """The entries that match one of `named`'s names (the name matching,
    done only for variables a context has not seen), as `_patterns`
    resolves a key: a pattern to the names it matches, a name to itself."""
    names = list(named)
    found = []
    for entry in self.entries:
      try:
        resolved = _patterns.expand([entry], names)
      except ValueError:  # A pattern that matches none of these names.
        continue
      if any(concrete.name in named for concrete, _ in resolved):
        found.append(entry)
    return found

  def _waiting_for(self, where: Any, stepped: _Seen) -> bool:
    """Whether an optimizer sharing the spec, of this context, has yet to
    step here (one collected since counts no longer)."""
    for key, (optimizer_ref, home_ref) in list(self._sharers.items()):
      optimizer = optimizer_ref()
      if optimizer is None:
        del self._sharers[key]
        continue
      home = None if home_ref is None else home_ref()
      if home_ref is not None and home is not where:
        continue  # Made in another graph (one gone counts as another).
      if not _holds(stepped, optimizer):
        return True
    return False

  def __repr__(self) -> str:
    names = ", ".join(self.names)
    return f"FreezeSpec(binds by name at its first step: {names})"


def _check_not_ranked_again(found: Sequence[_specfile.Entry], bound: _Bound,
                            named: Mapping[str, Variable]) -> None:
  """A ValueError when a variable new to a context matches an entry that
  ranks across all its variables and has bound some already: ranked alone,
  it would freeze other elements than the entry's ranking (and `verify`)
  gives."""
  for entry in found:
    index = entry.index
    if (_criteria.is_criterion(index) and getattr(
        getattr(index, "criterion", index), "scope", "variable") == "entry"
        and entry.name not in bound.missing):
      new = ", ".join(repr(name) for name in named)
      raise ValueError(
          f"the spec's entry '{entry.name}' ranks its criterion across every "
          f"variable it matches, and {new} first reached a step after it had "
          "bound others: ranked alone, it would freeze other elements than "
          "ranking them together does (and `tfpartial verify` does). Make "
          "every variable the entry matches before the first step, or rank "
          "per variable (\"scope\": \"variable\").")


def _context() -> Any:
  """None in eager code (a `tf.function` included), else the TF1 graph."""
  with tf.init_scope():
    if tf.executing_eagerly():
      return None
    return tf.compat.v1.get_default_graph()


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


def _unmatched(key: str, given: Sequence[str], steppers: int,
               pattern: bool) -> ValueError:
  """An entry that no variable of the context matched: none of a step's
  (or of the steps of the `steppers` optimizers sharing the spec)."""
  if pattern:
    return _patterns.unmatched(key, given)
  near = difflib.get_close_matches(key, given, n=3, cutoff=0.5)
  hint = (f"; the nearest names are {', '.join(repr(n) for n in near)}"
          if near else "")
  listed = ", ".join(given[:20]) or "none"
  if len(given) > 20:
    listed += f", ... ({len(given)} in all)"
  among = ("this step trains" if steppers == 1 else
           f"the {steppers} optimizers sharing the spec train")
  return ValueError(
      f"the spec names '{key}', which is not among the variables {among} "
      f"({listed}){hint}. A spec loaded without variables binds by "
      "checkpoint name when it first steps.")
