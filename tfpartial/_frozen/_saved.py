"""Where a live Keras 3 model saves each of its variables, for `to_json`.

A spec names a Keras 3 variable by its `path`, the layers in scope when it
was made (`transformer_layer_1/feedforward_layer_norm/beta`), but no file
Keras or TensorFlow writes stores it by that name:

* `.weights.h5` (and the `model.weights.h5` of a `.keras` archive) holds it
  at the key of the object tree Keras walks, by position and with no
  variable names (`layers/bert_backbone/layers/transformer_encoder_1/
  _feedforward_layer_norm/vars/1`), and names only the layers that hold
  variables themselves;
* a `tf.train.Checkpoint(model=...)` holds it at a path of TensorFlow's
  object graph, by attribute names and with no layer names
  (`model/backbone/_operations/10/_feedforward_layer_norm/beta`).

Where a layer's class is not in the file (a keras_hub layer is custom),
the file alone cannot tell a LayerNormalization's gamma from its beta, nor
one transformer layer from the next. The live model can: `locations` finds
the outermost live model (or layer) that holds each variable, and asks it
where each format saves the variable, relative to that model ("saved" in
the spec file, `FORMATS`): the h5 key as Keras' own saving walk computes it,
and a path through the object graph that does not pass through an
optimizer (which `compile` adds, and which holds the same variables). A
variable that no live model holds, or that two hold at different places,
gets no location.
"""

from __future__ import annotations

import collections
import gc
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import tensorflow as tf

from tfpartial._frozen import _compat
from tfpartial._frozen import _tfprivate
from tfpartial._frozen import _variables
from tfpartial._frozen._types import Variable

FORMATS = ("h5", "checkpoint")


def locations(variables: Sequence[Variable]) -> Dict[int, Dict[str, str]]:
  """id(variable) -> {format: where its model saves it}, for the Keras 3
  variables among `variables` that a live model holds ({} for one it
  saves in no format, such as a random seed's state); others absent."""
  wanted = {id(v) for v in variables if _variables.is_keras(v)}
  if not wanted:
    return {}
  found = _located(wanted)
  if None in found.values():  # Two models: a dead one not yet collected?
    gc.collect()
    found = _located(wanted)
  return {key: where for key, where in found.items() if where is not None}


def _located(wanted: Set[int]) -> Dict[int, Optional[Dict[str, str]]]:
  """id -> locations, for the wanted variables a live model holds (None
  where two models hold one at different places)."""
  found: Dict[int, Optional[Dict[str, str]]] = {}
  walked = [(root, *_object_paths(root, wanted)) for root in _roots(wanted)]
  for root, paths, reached in walked:
    if any(id(root) in other for _, _, other in walked if other is not reached):
      continue  # Held by another root's object graph: a Sequential's model.
    try:
      held = wanted & {id(variable) for variable in root.variables}
    except Exception:  # pylint: disable=broad-except
      continue  # A model that cannot list its variables cannot save them.
    keys = _tfprivate.keras_saved_keys(root, held)
    for key in held:
      where = {name: value for name, value in (
          ("h5", keys.get(key)), ("checkpoint", paths.get(key))) if value}
      found[key] = where if found.get(key, where) == where else None
  return found


def _roots(wanted: Set[int]) -> List[Any]:
  """The live Keras layers and models that hold a layer holding a wanted
  variable as its own, at any depth, and that no other live layer holds."""
  if not _compat.KERAS_3:
    return []
  import keras  # pylint: disable=g-import-not-at-top
  parents: Dict[int, List[Any]] = collections.defaultdict(list)
  owners = []
  layer_type = keras.layers.Layer
  for layer in [o for o in gc.get_objects() if isinstance(o, layer_type)]:
    inner, own = _tfprivate.keras_layer_parts(layer)
    for child in inner:
      parents[id(child)].append(layer)
    if any(id(variable) in wanted for variable in own):
      owners.append(layer)
  roots: Dict[int, Any] = {}
  seen: Set[int] = set()
  while owners:
    layer = owners.pop()
    if id(layer) in seen:
      continue
    seen.add(id(layer))
    if parents.get(id(layer)):
      owners.extend(parents[id(layer)])
    else:
      roots[id(layer)] = layer
  return list(roots.values())


def _object_paths(root: Any, wanted: Set[int]) -> Tuple[Dict[int, str],
                                                         Set[int]]:
  """id -> the shortest path from `root` through TensorFlow's object graph
  (as `tf.train.Checkpoint` saves it) that passes through no optimizer;
  and the ids of every object reached."""
  import keras  # pylint: disable=g-import-not-at-top
  paths: Dict[int, str] = {}
  seen = {id(root)}
  queue = collections.deque([(root, "")])
  while queue:
    node, path = queue.popleft()
    try:
      children = tf.train.TrackableView.children(node)
    except Exception:  # pylint: disable=broad-except
      continue  # Not saved either: an object that cannot list its own.
    for name, child in children.items():
      if isinstance(child, keras.optimizers.Optimizer):
        continue
      where = f"{path}/{name}" if path else name
      if id(child) in wanted:
        paths.setdefault(id(child), where)
      elif id(child) not in seen:
        seen.add(id(child))
        queue.append((child, where))
  return paths, seen
