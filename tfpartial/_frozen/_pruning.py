"""A pruned model's pruned elements, from where pruning left them.

- A TF1 checkpoint of `tf.contrib.model_pruning`: a float mask variable
  `P/mask` (1 kept, 0 pruned) beside the weight it masks, which is `P`
  itself or `P/weights` / `P/kernel` (contrib's masked layers), of the
  same shape. The checkpoint stores the weight unmasked; the model used
  `mask * weight`.
- A Keras model pruned by tfmot's `prune_low_magnitude`, before
  `strip_pruning`: each `PruneLowMagnitude` wrapper's `pruning_vars`,
  (weight, mask, threshold) triples. After `strip_pruning` no mask is
  left, only zeros: the pruned elements are then the zeros of each kernel
  (`kernel`, `depthwise_kernel`, `pointwise_kernel`, `recurrent_kernel`,
  `embeddings`), the weights tfmot prunes; biases never are.

`bind` finds the variable each pruned weight is in the model being
fine-tuned, and checks that it holds zeros there.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Union

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _criteria
from tfpartial._frozen import _specfile
from tfpartial._frozen import _value
from tfpartial._frozen import _values
from tfpartial._frozen import _variables
from tfpartial._frozen._types import Index, Variable

_KERNELS = ("kernel", "depthwise_kernel", "pointwise_kernel",
            "recurrent_kernel", "embeddings")
_MASKED = ("", "/weights", "/kernel")  # Where a `P/mask` weight is: P....


class Pruned(NamedTuple):
  """One pruned weight: its name where it was pruned, its pruned elements,
  and the variable holding it (a Keras source's own; None for a
  checkpoint)."""

  name: str
  mask: np.ndarray  # True where pruned.
  variable: Optional[Variable]


def spec_value(source: object, variables: "Targets",
               compact: bool = False) -> _value.SpecValue:
  """The value freezing the pruned elements of `source` in the variables
  that hold its weights now; each written by `to_json` as `{"where":
  "zero"}` where that selects exactly them (the pruned weights loaded, and
  no other zero), else as the mask."""
  pruned = find(source)
  targets = bind(pruned, variables)
  value = _value.SpecValue()
  for item in pruned:
    variable = targets[item.name]
    zeros = check_zeros(item, variable) == 0
    index: Index = item.mask
    if np.array_equal(zeros, item.mask):
      index = _criteria.Computed(_criteria.Criterion("where"), item.mask)
    # A table's value is read in the checkpoint's rows.
    strategy = "div" if _variables.is_table(variable) else None
    value = value.union(_value.freeze(variable, index, strategy, compact))
  return value


def find(source: object) -> List[Pruned]:
  """The pruned weights of a TF1 checkpoint (a path) or a Keras model.

  Raises:
    ValueError: nothing pruned is found, or a mask has no weight beside it.
    TypeError: `source` is neither a path nor a model.
  """
  if isinstance(source, (str, os.PathLike)):
    return _in_checkpoint(os.fspath(source))
  if not hasattr(source, "layers"):
    raise TypeError(
        "`source` must be the path of a TF1 checkpoint pruned by "
        "tf.contrib.model_pruning, or a Keras model pruned by tfmot; got "
        f"{type(source).__name__}.")
  return _in_model(source)


def _in_checkpoint(path: str) -> List[Pruned]:
  try:
    reader = tf.train.load_checkpoint(path)
  except (tf.errors.OpError, ValueError) as error:
    raise ValueError(f"cannot read the checkpoint '{path}': "
                     f"{getattr(error, 'message', error)}") from None
  shapes = reader.get_variable_to_shape_map()
  found = []
  for name in sorted(shapes):
    if not name.endswith("/mask"):
      continue
    prefix = name[:-len("/mask")]
    weights = [prefix + tail for tail in _MASKED
               if prefix + tail in shapes and shapes[prefix + tail]
               == shapes[name]]
    if not weights:
      raise ValueError(
          f"the checkpoint '{path}' holds the pruning mask '{name}' of shape "
          f"{tuple(shapes[name])}, but no weight of that shape beside it "
          f"({', '.join(repr(prefix + t) for t in _MASKED)}).")
    mask = np.asarray(reader.get_tensor(name))
    found.append(Pruned(weights[0], mask == 0, None))
  if not found:
    raise ValueError(
        f"the checkpoint '{path}' holds no pruning mask (a variable named "
        "'<name>/mask', as tf.contrib.model_pruning makes).")
  return found


def _in_model(model: object) -> List[Pruned]:
  layers = list(_layers(model))
  wrapped = [layer for layer in layers if hasattr(layer, "pruning_vars")]
  found = []
  for layer in wrapped:
    for weight, mask, _ in layer.pruning_vars:
      found.append(Pruned(_variables.checkpoint_name(weight),
                          _values.read(mask) == 0, weight))
  if wrapped:
    return found
  for layer in layers:
    for weight in getattr(layer, "weights", ()):
      name = _variables.checkpoint_name(weight)
      if name.rsplit("/", 1)[-1] in _KERNELS:
        zeros = _values.read(weight) == 0
        if zeros.any():
          found.append(Pruned(name, zeros, weight))
  if not found:
    raise ValueError(
        f"the model '{getattr(model, 'name', '?')}' holds no pruning "
        "wrapper (tfmot's prune_low_magnitude) and no kernel with a zero: "
        "nothing is pruned.")
  return found


def _layers(model: object) -> Iterable[object]:
  """Every layer, nested models' too, each once (a wrapper, not what it
  wraps: its weights are the wrapper's pruning_vars)."""
  seen = set()
  stack = list(reversed(getattr(model, "layers", [])))
  while stack:
    layer = stack.pop()
    if id(layer) in seen:
      continue
    seen.add(id(layer))
    yield layer
    if not hasattr(layer, "pruning_vars"):
      stack.extend(reversed(getattr(layer, "layers", None) or []))


Targets = Union[Mapping[str, Variable], _specfile.Variables, None]


def bind(pruned: List[Pruned], variables: Targets) -> Dict[str, Variable]:
  """Pruned name -> the variable that holds that weight now.

  `variables`: None (a Keras source's own), a mapping from the pruned
  names, or variables / a model found by name: the variable of that
  checkpoint name, or the one whose name ends with `/` and it (a Keras 3
  model's paths start with the model's name).

  Raises:
    ValueError: a pruned weight has no variable, or several; a mapping
      names what is not pruned.
  """
  if variables is None:
    if any(p.variable is None for p in pruned):
      raise ValueError(
          "a checkpoint's pruning masks need `variables`: the variables of "
          "the model that fine-tunes, found by name, or a mapping from the "
          "checkpoint's names to them.")
    return {p.name: p.variable for p in pruned if p.variable is not None}
  names = [p.name for p in pruned]
  if isinstance(variables, Mapping):
    extra = sorted(set(variables) - set(names))
    missing = [n for n in names if n not in variables]
    if extra or missing:
      raise ValueError(
          f"`variables` maps the pruned weights' names to variables; it "
          f"lacks {missing or 'none'} and names {extra or 'none'}, which "
          f"are not pruned (pruned: {', '.join(names)}).")
    return {n: variables[n] for n in names}
  named = _specfile.variables_by_name(variables)
  return {n: _by_name(n, named) for n in names}


def _by_name(name: str, named: Mapping[str, Variable]) -> Variable:
  if name in named:
    return named[name]
  found = [v for candidate, v in named.items()
           if candidate.endswith("/" + name)]
  if len(found) != 1:
    listed = ", ".join(sorted(named)[:20]) or "none"
    how = "several" if found else "none"
    raise ValueError(
        f"the pruned weight '{name}' matches {how} of the variables given "
        f"({listed}) by name (the name, or a name ending in '/{name}'); "
        "pass `variables` as a mapping from the pruned names to variables.")
  return found[0]


def check_zeros(item: Pruned, variable: Variable) -> np.ndarray:
  """The variable's value, checked: the pruned weight's shape, zero at
  every pruned element.

  Raises:
    ValueError: another shape, or a pruned element is not zero.
  """
  described = _variables.describe(variable)
  shape = _variables.static_shape(variable)
  if shape != item.mask.shape:
    raise ValueError(
        f"the pruned weight '{item.name}' has the shape {item.mask.shape}, "
        f"but {described} is to hold it.")
  value = _values.read(variable)
  nonzero = int(np.count_nonzero(value[item.mask] != 0))
  if nonzero:
    raise ValueError(
        f"{described} is nonzero at {nonzero} of the {int(item.mask.sum())} "
        f"elements the pruning of '{item.name}' zeroed: load the pruned "
        "weights first (a TF1 checkpoint stores the weights unmasked: "
        "assign weight * mask, which keeps each zero's sign).")
  return value
