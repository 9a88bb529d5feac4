"""The optimizer families and wrapping.

One `Family` row (`_family`) per family in `_optimizers.FAMILIES`: the
TF1 optimizers (`_v1`), Keras 3 (`_keras`), Keras 2 (`_tf_keras`); the
kernel mixins of their classes, which override the optimizers' private
per-variable updates (`_fused_adam`, `_fused_sgd`: the v1 ones;
`_fused_keras`, `_fused_tf_keras`; and the select update
`_select_keras`); `spec.wrap`
(`_wrap`). Imports `_step` and the layers below it.
"""
