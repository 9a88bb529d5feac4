"""What is frozen, and its file form: the bottom layer.

The spec value (`_value`) and its selections (`_selection`), NumPy's index
semantics (`_index`), index text (`_parse`, `_index_text`), spec files
(`_specfile`, reading untrusted JSON and `.npy` through `_safejson` and
`_npy`), how every file tfpartial reads is opened (`_files`), the tensors
a selection becomes in a step (`_tensors`), and what every layer names a
variable, an error or a version with (`_variables`, `_errors`, `_types`,
`_compat`, `_tfprivate`). Imports no other layer.
"""
