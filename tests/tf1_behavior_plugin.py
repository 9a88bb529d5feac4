"""A pytest plugin that switches the whole process to TF1 behaviour.

Loaded with `-p tf1_behavior_plugin` in a child process only: after
`disable_v2_behavior()` there is no eager mode, and variables are ref
variables unless asked otherwise, as in a TF1 codebase.
"""

import tensorflow as tf

tf.compat.v1.disable_v2_behavior()
