"""`python -m tfpartial`, the same as the `tfpartial` command.

`python -m` puts the current folder first on `sys.path`, so a command run
inside a codebase (`tfpartial scan .`) would import that codebase's
`json/`, `ast.py` or `tensorflow/` in place of the real ones. The
`tfpartial` command never has the current folder there; once tfpartial
itself is found (its package imports nothing more), neither does this.
"""

import os
import sys


def _without_current_folder() -> None:
  """Takes the current folder `python -m` added off `sys.path`."""
  if not sys.path or getattr(sys.flags, "safe_path", False):
    return  # `python -P` or PYTHONSAFEPATH: it was not added.
  try:
    if sys.path[0] in ("", ".") or os.path.samefile(sys.path[0],
                                                    os.getcwd()):
      del sys.path[0]
  except OSError:
    pass  # The folder is gone: nothing can be imported from it either.


_without_current_folder()

from tfpartial import cli  # pylint: disable=g-import-not-at-top,wrong-import-position

sys.exit(cli.main())
