"""`tfpartial verify`: two checkpoints, one spec, and whether any frozen
element changed. `_verify` picks a reader by the path: `_checkpoints` for
TF checkpoints, `_keras_archive` and `_keras_files` for Keras files, whose
variables `_keras_names` names.
"""
