"""What a Keras weight file says about a layer, and its variables' names.

Keras 3 writes a layer's variables by position only (`GROUP/vars/0`, ...),
in the order the layer created them. For the built-in layers most models
are made of, the names in that order follow from the layer's class and
options (`_NAMES`): `kernel`, `bias` for a Dense layer; `gamma`, `beta`,
`moving_mean`, `moving_variance` for BatchNormalization, whose variables
share one shape so that only their names tell them apart.

The class is taken from the `.keras` archive's `config.json`, where it
describes the layer (the layers of Sequential and functional models);
otherwise from the key Keras gives a layer in a list
(`layers/batch_normalization_1`) or from a name Keras made up for it, both
the class's snake_case name; and only where the variables are as many and
shaped as that class's are. A custom layer whose name copies a built-in's
and whose variables fit is the case this cannot tell apart.

config.json is untrusted input: `check_config` refuses one that holds a
value of another JSON type than Keras writes anywhere tfpartial reads it
(a class name, a list of layers, an option the names depend on).
"""

from __future__ import annotations

import dataclasses
import re
from typing import (Callable, Dict, List, Optional, Sequence, Tuple, Type,
                    cast)

from tfpartial._frozen._safejson import JSON
from tfpartial._tools.verify._checkpoints import Stored

# A Keras config object (a layer's or a model's) as config.json holds it.
Config = Dict[str, JSON]


@dataclasses.dataclass
class Owner:
  """A layer, model or other object with variables in the file."""

  key: str  # Its group in the file, "" for the root.
  chain: Tuple[Optional[str], ...]  # Names from the root's down to its own.
  stored: List[Stored]  # Its variables, in the order Keras wrote them.
  in_list: bool  # Held in a list: its key is its class's snake_case name.
  config: Optional[Config] = None  # From config.json, if known.
  names: Optional[List[str]] = None  # Its variables' names, if known.

  @property
  def name(self) -> Optional[str]:
    return self.chain[-1]


# What the built-in layers most models are made of call their variables, in
# the order Keras writes them: class -> (config or None, shapes) -> names, or
# None where the layer's options or its variables' shapes do not fit.
_Names = Callable[[Optional[Config], List[Tuple[int, ...]]],
                  Optional[List[str]]]


def _option(config: Optional[Config], key: str) -> bool:
  return config is None or config.get(key, True) not in (False, None)


def _kernel_and_bias(bias_key: str) -> _Names:
  """Dense, EinsumDense, Conv*: `kernel` (rank >= 2), then `bias`."""

  def names(config: Optional[Config],
            shapes: List[Tuple[int, ...]]) -> Optional[List[str]]:
    if config is None:
      expected = len(shapes) if len(shapes) in (1, 2) else 0
    else:
      expected = 2 if _option(config, bias_key) else 1
    if len(shapes) != expected or len(shapes[0]) < 2 or (
        expected == 2 and len(shapes[1]) < 1):
      return None
    return [_lora("kernel", config), "bias"][:expected]

  return names


def _lora(name: str, config: Optional[Config]) -> str:
  """With LoRA on, Keras writes the kernel with its LoRA factors merged in:
  not the variable `name`, so a spec's `name` must not find it."""
  return f"{name}+lora" if config is not None and config.get("lora_rank") \
      else name


def _recurrent_cell(config: Optional[Config],
                    shapes: List[Tuple[int, ...]]) -> Optional[List[str]]:
  """LSTMCell, GRUCell, SimpleRNNCell: kernel, recurrent_kernel, bias."""
  expected = 3 if _option(config, "use_bias") else 2
  if config is None and len(shapes) in (2, 3):
    expected = len(shapes)
  if len(shapes) != expected or len(shapes[0]) != 2 or len(shapes[1]) != 2:
    return None
  return ["kernel", "recurrent_kernel", "bias"][:expected]


def _embedding(config: Optional[Config],
               shapes: List[Tuple[int, ...]]) -> Optional[List[str]]:
  if len(shapes) != 1 or len(shapes[0]) != 2:
    return None
  return [_lora("embeddings", config)]


def _normalization(optional: Sequence[Tuple[str, str]],
                   always: Sequence[str], unknown: str = "") -> _Names:
  """gamma and beta as `scale` and `center` say, then `always`; all of one
  shape."""

  def names(config: Optional[Config],
            shapes: List[Tuple[int, ...]]) -> Optional[List[str]]:
    if len(set(shapes)) > 1 or (config is not None and unknown
                                and config.get(unknown)):
      return None
    if config is not None:
      chosen = [name for key, name in optional if _option(config, key)]
    elif len(shapes) == len(optional) + len(always):
      chosen = [name for _, name in optional]
    else:
      chosen = []
    chosen += list(always)
    return chosen if len(chosen) == len(shapes) else None

  return names


_NAMES: Dict[str, _Names] = {
    "Dense": _kernel_and_bias("use_bias"),
    "EinsumDense": _kernel_and_bias("bias_axes"),
    "Embedding": _embedding,
    "BatchNormalization": _normalization(
        [("scale", "gamma"), ("center", "beta")],
        ["moving_mean", "moving_variance"], unknown="renorm"),
    "LayerNormalization": _normalization(
        [("scale", "gamma"), ("center", "beta")], [], unknown="rms_scaling"),
    "GroupNormalization": _normalization(
        [("scale", "gamma"), ("center", "beta")], []),
    "LSTMCell": _recurrent_cell,
    "GRUCell": _recurrent_cell,
    "SimpleRNNCell": _recurrent_cell,
}
_NAMES.update({f"Conv{kind}": _kernel_and_bias("use_bias")
               for kind in ("1D", "2D", "3D", "1DTranspose", "2DTranspose",
                            "3DTranspose")})


def _snake_case(class_name: str) -> str:
  """The key Keras gives a layer of this class in a list (as Keras does)."""
  name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", class_name)
  return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


_SNAKE = {_snake_case(name): name for name in _NAMES}


def variable_names(owner: Owner) -> Optional[List[str]]:
  """The names of `owner`'s variables, in order, where they are certain.

  The layer's class comes from config.json; failing that, from the key
  Keras gives a layer in a list, or from the layer's name where Keras made
  it up (`layer_normalization_1`): both are the class's snake_case name.
  """
  if not owner.stored:
    return None
  keys = [stored.key.rsplit("/", 1)[-1] for stored in owner.stored]
  if not any(key.isdigit() for key in keys):
    return keys  # Written under their own names by a custom layer.
  layer_config: Optional[Config] = None
  class_name: JSON
  if owner.config is not None:  # As `check_config` checked it.
    if not _is_built_in(owner.config):
      return None
    class_name = owner.config.get("class_name")
    given = owner.config.get("config")
    layer_config = given if isinstance(given, dict) else {}
  else:
    hints = [owner.key.rsplit("/", 1)[-1]] if owner.in_list else []
    hints += [owner.name] if owner.name else []
    class_name = next((_SNAKE[snake] for snake in (
        re.sub(r"_\d+$", "", hint) for hint in hints) if snake in _SNAKE),
                      None)
  if not isinstance(class_name, str) or class_name not in _NAMES:
    return None
  return _NAMES[class_name](layer_config, [s.shape for s in owner.stored])


def _is_built_in(config: Config) -> bool:
  module = config.get("module")
  return (isinstance(module, str) and module.split(".")[0] == "keras"
          and not config.get("registered_name"))


# What tfpartial reads of config.json, and the JSON types Keras writes
# there: in the entry of a model or layer, in its `config`, and in the
# `config` of a built-in layer of `_NAMES` (the options its variables' names
# depend on; a custom layer's options are its own).
_NONE = type(None)
_ENTRY: Dict[str, Tuple[Type[object], ...]] = {
    "class_name": (str,), "module": (str, _NONE),
    "registered_name": (str, _NONE), "config": (dict,)}
_CONFIG: Dict[str, Tuple[Type[object], ...]] = {
    "name": (str, _NONE), "layers": (list,)}
_OPTIONS: Dict[str, Tuple[Type[object], ...]] = {
    "use_bias": (bool,), "center": (bool,), "scale": (bool,),
    "renorm": (bool,), "rms_scaling": (bool,), "lora_rank": (int, _NONE),
    "bias_axes": (str, _NONE)}
_MISSING = object()
_JSON_TYPES: Dict[type, str] = {
    dict: "an object", list: "an array", str: "a string",
    bool: "true or false", int: "an integer", float: "a number",
    _NONE: "null"}


def check_config(config: JSON) -> Config:
  """`config` (config.json's value) if it is a model's config as Keras
  writes one, where tfpartial reads it.

  Raises:
    ValueError: naming the place (`config.layers[1].class_name`) and what
      it holds instead.
  """
  pending = [("", _object(config, "the top level"))]
  root = pending[0][1]
  while pending:
    where, entry = pending.pop()
    _check_keys(entry, _ENTRY, where)
    inner = _object(entry.get("config", {}), f"{where}config")
    _check_keys(inner, _CONFIG, f"{where}config.")
    if entry.get("class_name") in _NAMES and _is_built_in(entry):
      _check_keys(inner, _OPTIONS, f"{where}config.")
    layers = cast(List[JSON], inner.get("layers", []))  # As checked.
    pending.extend((f"{where}config.layers[{position}].",
                    _object(layer, f"{where}config.layers[{position}]"))
                   for position, layer in enumerate(layers))
  return root


def _object(value: JSON, where: str) -> Config:
  if not isinstance(value, dict):
    raise ValueError(f"{where} is {_json_type(value)}, not an object")
  return value


def _check_keys(mapping: Config, types: Dict[str, Tuple[Type[object], ...]],
                where: str) -> None:
  """ValueError unless each of `types`' keys in `mapping` holds one of its
  types."""
  for key, allowed in types.items():
    value: object = mapping.get(key, _MISSING)
    # JSON's true and false are Python bools, which are ints too.
    if value is _MISSING or (isinstance(value, allowed) and not (
        isinstance(value, bool) and bool not in allowed)):
      continue
    expected = " or ".join(dict.fromkeys(_JSON_TYPES[t] for t in allowed))
    raise ValueError(f"{where}{key} is {_json_type(value)}, not {expected}")


def _json_type(value: object) -> str:
  return _JSON_TYPES.get(type(value), type(value).__name__)
