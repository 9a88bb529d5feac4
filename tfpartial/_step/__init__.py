"""One training step under a spec: check, plan, run.

`_checks` validates the step's input, `_plan` sorts each variable into what
the step does with it, `_apply` runs the plan: mask (`_mask`), apply, restore
(`_restore`, under the step lock `_lock`), a compact copy (`_compact`),
writes under `tf.distribute` (`_distribute`), and the per-call choice of
the variables a compiled kernel updates (`_fused`). Imports `_kernels` and
`_frozen`.
"""
