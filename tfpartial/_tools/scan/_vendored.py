"""A copy of TensorFlow or Keras kept inside a project (`Keras-2.0.8/
keras/`, pinned beside the code that imports it): the framework's own
code, not the project's training code. Its internals (sample weights
left out by a flag, an optimizer's gradients) are what every user of
the framework runs; what a project freezes is in its own files. The
copy is a folder named as the framework's package, holding the
package's `__init__.py` that sets `__version__` (a release), in a folder
that is no package (a package's `tensorflow/` sub-package is the
project's own backend code). The scan skips it as it skips
`site-packages`."""

from __future__ import annotations

import os
import re
from typing import Callable

# The frameworks whose own code a project may carry a copy of.
FRAMEWORKS = frozenset({"keras", "tensorflow", "tf_keras"})
_VERSION = re.compile(rb"^__version__\s*=", re.M)


def framework_copy(folder: str, read: Callable[[str], bytes]) -> bool:
  """Whether `folder` is a copy of a framework's package (`read` gives a
  file's bytes, raising `ValueError` when it cannot).

  >>> framework_copy("/no/such/keras", lambda path: b"")
  False
  """
  if os.path.basename(folder) not in FRAMEWORKS or os.path.exists(
      os.path.join(os.path.dirname(folder), "__init__.py")):
    return False
  try:
    return bool(_VERSION.search(read(os.path.join(folder, "__init__.py"))))
  except ValueError:
    return False
