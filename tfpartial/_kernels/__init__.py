"""The compiled kernels: optimizer updates with the freeze inside them.

The C++ (`cc/`), its build (`_build`) into a private cache (`_cache`) and
its loading (`_native`), and the masks and offsets its ops take
(`_inputs`): the library, and nothing about optimizers or
steps (which variables a kernel updates is the step's choice,
`_step/_fused`; which optimizer member a kernel replaces, the family's,
`_families/_fused_*`). Imports only `_frozen`.
"""
