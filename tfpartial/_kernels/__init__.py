"""The compiled kernels: optimizer updates with the freeze inside them.

The C++ (`cc/`), its build (`_build`) into a private cache (`_cache`), the
loading (`_native`), and the per-call choice of which variables a kernel
updates (`_fused`). Imports only `_frozen`.
"""
