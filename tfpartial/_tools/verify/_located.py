"""A spec's variables found where `to_json` recorded that the model saves them.

A spec that `to_json` wrote from a Keras 3 model carries, per variable,
`"saved"`: its place in each file format, relative to the model it was
written from (`tfpartial/_frozen/_saved.py`): the key in a `.weights.h5`
file (and a `.keras` archive's weights), the path through a
`tf.train.Checkpoint`'s object graph. Neither file names the variable as
the spec does, and a file alone cannot always tell two of one layer apart;
those places can.

A file may be of that model, of a model that holds it (its places then end
with the recorded ones, under one place where that model holds it), or of
a model it holds (the recorded places then start with the path to that
model, which its own file does not have). `resolve` reads one file in one
of those ways for all the entries that have a place: the way that finds
each of them, exactly once, with the spec's shape (and, in a `.weights.h5`
file, beside a layer name of its path). If no way does, or
two ways find other variables, the file is not of that model: exit 2,
never a guess. Entries without a place are found by name, as before.
"""

from __future__ import annotations

from typing import Dict, Hashable, List, Optional, Sequence, Tuple

from tfpartial._frozen import _specfile
from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify._checkpoints import Stored

_Wanted = Tuple[str, Optional[Tuple[int, ...]], str]  # Name, shape, place.


def resolve(entries: Sequence[_specfile.Entry],
            reader: _checkpoints.Reader) -> Dict[str, Stored]:
  """Name -> where `reader` holds it, for the entries whose "saved" gives
  a place in `reader`'s format.

  Raises:
    ValueError: no reading of the file finds every such entry once, or
      two readings find other variables.
  """
  form = reader.saved_format
  wanted: List[_Wanted] = [
      (entry.name, entry.shape, entry.saved[form]) for entry in entries
      if form is not None and entry.saved and form in entry.saved]
  if not wanted:
    return {}
  readings: List[Dict[str, Stored]] = []
  # The longest place has the fewest candidates for where the model is.
  segments = max((place for _, _, place in wanted), key=len).split("/")
  for cut in range(len(segments)):
    for found in _readings(wanted, "/".join(segments[:cut]), reader):
      if found not in readings:
        readings.append(found)
  if len(readings) == 1:
    return readings[0]
  if readings:
    raise ValueError(
        f"{reader.path} holds the variables of the spec's \"saved\" places "
        "in more than one way (more than one model of the kind the spec was "
        "written from, or of a model it holds or that holds it); name them "
        "by key in the file")
  raise _not_there(wanted, reader)


def _readings(wanted: Sequence[_Wanted], prefix: str,
              reader: _checkpoints.Reader) -> List[Dict[str, Stored]]:
  """Each way of reading the file as one of the model at `prefix` in the
  recorded places, held at one place in the file, that finds every wanted
  name's variable exactly once."""
  ways: Optional[Dict[Hashable, Dict[str, Stored]]] = None
  for name, shape, place in wanted:
    if prefix and not place.startswith(prefix + "/"):
      return []
    hits: Dict[Hashable, List[Stored]] = {}
    for anchor, stored in _hits(
        reader, place[len(prefix) + 1:] if prefix else place, name, shape):
      # A model held by the spec's is the file's own: not inside another.
      if not prefix or reader.is_root(anchor):
        hits.setdefault(anchor, []).append(stored)
    found = {anchor: held[0] for anchor, held in hits.items()
             if len(held) == 1 and (ways is None or anchor in ways)}
    ways = {anchor: {**({} if ways is None else ways[anchor]),
                     name: stored} for anchor, stored in found.items()}
    if not ways:
      return []
  return list((ways or {}).values())


def _hits(reader: _checkpoints.Reader, place: str, name: str,
          shape: Optional[Tuple[int, ...]]) -> List[Tuple[Hashable, Stored]]:
  return [(anchor, stored) for anchor, stored in reader.at(place)
          if (shape is None or stored.shape == tuple(shape))
          and reader.holds(stored, name)]


def _not_there(wanted: Sequence[_Wanted],
               reader: _checkpoints.Reader) -> ValueError:
  """The first entry the file does not hold where the spec says."""
  for name, shape, place in wanted:
    held = [stored for _, stored in reader.at(place)]
    fits = [stored for stored in held
            if shape is None or stored.shape == tuple(shape)]
    named = [stored for stored in fits if reader.holds(stored, name)]
    if len(named) != 1:
      what = ("no variable there" if not held else
              f"{len(named)} variables there" if len(named) > 1 else
              f"one of the layer {reader.layer_of(fits[0])!r} there"
              if fits else
              f"one of shape {held[0].shape} there, not {tuple(shape or ())}")
      break
  else:
    name, place, what = wanted[0][0], wanted[0][2], "them otherwise"
  return ValueError(
      f"the spec says the model it was written from saves '{name}' at "
      f"{place} (its \"saved\" place for this kind of file), but "
      f"{reader.path} holds {what}: it is not a file of that model (nor of "
      "a model holding it, or held by it). Verify the files of the model "
      "the spec was written from, or write the spec again with to_json() "
      "from the model these files are of")
