"""Type aliases shared by the modules of tfpartial."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

import tensorflow as tf

# A variable tfpartial can freeze part of: `tf.Variable` (resource or TF1 ref),
# a distributed variable, or a Keras 3 variable.
Variable = Any

# What an optimizer receives for one variable.
Gradient = Optional[Union[tf.Tensor, tf.IndexedSlices]]

GradAndVar = Tuple[Gradient, Variable]
GradsAndVars = Iterable[GradAndVar]

# An index as NumPy understands it inside brackets: an int, a slice, a tuple of
# those, `Ellipsis`, `None`, integer index arrays or a boolean mask.
Index = Any

# Any optimizer tfpartial knows a family for.
Optimizer = Any

# The optimizer's own `apply_gradients`, bound to its arguments except the pairs.
ApplyFn = Callable[[Sequence[GradAndVar]], Any]
