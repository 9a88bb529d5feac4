"""Deletes the tox env running this script, on CI only.

tox runs it after an env's tests (`commands_post` in tox.ini), pass or
fail. With TFPARTIAL_CI_DROP_ENVS=1 (set by .ci/run) it deletes the
virtual environment of the interpreter running it, so a CI machine holds
the two envs running at a time rather than every TensorFlow of the matrix
(2 to 3 GB each). Anywhere else it does nothing: a developer's envs stay.
It deletes only a virtual environment in a folder named `.tox`.
"""

import os
import pathlib
import shutil
import sys


def main() -> int:
  if os.environ.get("TFPARTIAL_CI_DROP_ENVS") != "1":
    return 0
  env = pathlib.Path(sys.prefix)
  if env == pathlib.Path(sys.base_prefix) or env.parent.name != ".tox":
    print(f"drop_env: {env} is no tox env; kept", file=sys.stderr)
    return 0
  shutil.rmtree(env)
  print(f"drop_env: deleted {env}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
