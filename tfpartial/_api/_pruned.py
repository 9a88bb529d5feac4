"""`keep_pruned`: a pruned model's pruned elements as a spec, so that
fine-tuning keeps its zeros (`_frozen/_pruning.py` finds them)."""

from __future__ import annotations

import os
from typing import Mapping, Optional, Union

from tfpartial._api._spec import FreezeSpec
from tfpartial._frozen import _pruning
from tfpartial._frozen._specfile import Variables
from tfpartial._frozen._types import Variable


def keep_pruned(source: Union[str, "os.PathLike[str]", object],
                variables: Optional[Union[Mapping[str, Variable],
                                          Variables]] = None, *,
                compact: bool = False) -> FreezeSpec:
  """A spec freezing the elements a pruned model pruned: its zeros stay.

  Each pruned element is frozen bit for bit (a -0.0 stays -0.0).

  `source` is where the pruning is recorded:

  * the path of a TF1 checkpoint pruned by `tf.contrib.model_pruning`
    (a prefix, or its folder): each `P/mask` variable (1 kept, 0 pruned)
    masks the weight beside it, `P`, `P/weights` or `P/kernel`, of its
    shape. Such a checkpoint stores the weights unmasked: load
    `weight * mask` into the model first.
  * a Keras model pruned by tfmot's `prune_low_magnitude` (a tf_keras
    model; Keras 2 on TensorFlow 2.15), before `strip_pruning`: the
    wrappers' masks; or after it: the zeros of its kernels (`kernel`,
    `depthwise_kernel`, `pointwise_kernel`, `recurrent_kernel`,
    `embeddings`), as tfmot prunes no other weight.

  The variables must hold the pruned weights already, zero at each
  pruned element (checked). `to_json` writes `{"freeze": {"where":
  "zero"}}` where a variable's zeros are exactly the pruned elements,
  else the mask; `tfpartial verify` proves the freeze either way.

  Args:
    source: a TF1 checkpoint path, or a tfmot-pruned Keras model.
    variables: the variables that hold the pruned weights now: the model
      that fine-tunes (or its variables), each pruned weight found by its
      name there, or by the one name ending in `/` and its name (a Keras
      3 model's variable paths start with the model's name); or a mapping
      from the pruned weights' names to variables. None: a Keras source's
      own variables.
    compact: the surviving elements train through a small variable of
      just those (as `tfpartial.train_only(..., compact=True)`): the
      optimizer's state and work follow what survived pruning.

  Returns:
    A `FreezeSpec` freezing the pruned elements of each pruned weight.

  Raises:
    ValueError: nothing pruned; a mask without a weight beside it; a
      pruned weight found in none or several of `variables`, or of
      another shape; a pruned element that is not zero there.
    TypeError: `source` is neither a path nor a model.

  >>> import os, tempfile
  >>> folder = tempfile.mkdtemp()
  >>> kernel = tf.Variable([[0.5, -0.0], [0.0, -2.0]], name="dense/kernel")
  >>> mask = tf.Variable([[1.0, 0.0], [0.0, 1.0]], name="dense/kernel/mask")
  >>> _ = tf.train.Checkpoint(kernel=kernel, mask=mask)  # Not TF1 names:
  >>> saver = tf.compat.v1.train.Saver([kernel, mask])   # the Saver's are.
  >>> _ = saver.save(None, os.path.join(folder, "pruned"))
  >>> spec = tfpartial.keep_pruned(folder, [kernel])
  >>> spec.frozen_mask(kernel)
  array([[False,  True],
         [ True, False]])
  """
  return FreezeSpec._of(_pruning.spec_value(source, variables, compact))
