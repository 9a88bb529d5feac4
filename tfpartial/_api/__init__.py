"""The public API: `FreezeSpec` and the functions that make one (`_spec`).

Imports `_families` and the layers below it.
"""
