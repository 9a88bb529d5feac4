"""Where Keras 3 puts each layer of a model in its weight file.

Keras 3 saves and loads a model's variables along its object tree
(`keras.src.saving.saving_lib._save_state` / `_load_state`): an object's
variables are the datasets `vars/0`, `vars/1`, ... of the h5 group at the
path of attributes leading to it, and a layer in a list (a Sequential or
functional model's `layers`) is keyed by its class's snake_case name, made
unique in the list's order (`layers/dense`, `layers/dense_1`). The `name`
attribute Keras writes on each `vars` group is never read back: loading
puts `layers/dense/vars/0` into the first Dense layer, whatever its group
says its name is.

So a `.keras` archive's `config.json`, which Keras builds the model from,
says which layer each group is: `layer_names` gives the name each
config entry puts at each key, and a file whose `name` attributes say
otherwise was edited after Keras wrote it (`check_names` refuses it).
Without a config (a bare `.weights.h5` file) the `name` attributes are all
there is; `_verify` then asks both checkpoints to hold a variable at the
same key, since Keras loads both into the same model by key.
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Tuple

from tfpartial._frozen._safejson import JSON
from tfpartial._tools.verify._keras_names import Config
from tfpartial._tools.verify._keras_names import Owner

# Keras 2.13's weight files call a model's list of layers so; Keras 3 loads
# such a file by that key where `layers` is missing.
_KERAS_2_LAYERS = "_layer_checkpoint_dependencies"


def snake_case(class_name: str) -> str:
  """`keras.src.utils.naming.to_snake_case`: a layer's key in a list."""
  name = re.sub(r"\W+", "", class_name)
  name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
  return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def place(key: str) -> str:
  """The key a variable is loaded from, the same for Keras 2.13 and 3."""
  return "/".join("layers" if part == _KERAS_2_LAYERS else part
                  for part in key.split("/"))


def layer_names(config: Config
                ) -> Dict[str, Tuple[Optional[str], Config]]:
  """Key in the file -> (the name config.json gives it, its config entry),
  for the model and each layer of its (nested) lists of layers.

  A list with an entry that has no class name is left out: Keras could not
  build that model, and its keys cannot be known.
  """
  placed: Dict[str, Tuple[Optional[str], Config]] = {}
  pending: List[Tuple[str, Config]] = [("", config)]
  while pending:
    key, entry = pending.pop()
    inner = entry.get("config")
    inner = inner if isinstance(inner, dict) else {}
    name = inner.get("name")
    placed[key] = (name if isinstance(name, str) else None, entry)
    layers = inner.get("layers")
    if isinstance(layers, list):
      pending.extend(_children(key, layers))
  return placed


def _children(key: str, layers: List[JSON]) -> List[Tuple[str, Config]]:
  """Each layer's key and entry, as Keras names a list's items."""
  classes = [layer.get("class_name") if isinstance(layer, dict) else None
             for layer in layers]
  if not all(isinstance(name, str) for name in classes):
    return []
  used: Dict[str, int] = {}
  children = []
  for layer, class_name in zip(layers, classes):
    snake = snake_case(str(class_name))
    used[snake] = used.get(snake, -1) + 1
    child = snake if not used[snake] else f"{snake}_{used[snake]}"
    assert isinstance(layer, dict)  # It has a class name.
    children.append((f"{key}/layers/{child}" if key else f"layers/{child}",
                     layer))
  return children


def check_names(path: str, written: Mapping[str, Optional[str]],
                placed: Mapping[str, Tuple[Optional[str], Config]]) -> None:
  """ValueError where a group's `name` attribute is not the name
  config.json gives the layer Keras loads from it."""
  for key, name in written.items():
    given = placed.get(place(key))
    if given is None or given[0] is None or name in (None, given[0]):
      continue
    where = f"the group {key}" if key else "the root group"
    raise ValueError(
        f"{path}: {where} is named '{name}', but config.json puts the "
        f"layer '{given[0]}' there, and Keras loads that layer from it by "
        "its place, not by the name: the file was edited after Keras "
        "wrote it, and verify refuses it")


def attach(owners: List[Owner],
           placed: Mapping[str, Tuple[Optional[str], Config]]) -> None:
  """Gives each owner that config.json describes its config entry."""
  for owner in owners:
    given = placed.get(place(owner.key))
    if given is not None:
      owner.config = given[1]
