"""`python -m tfpartial`, the same as the `tfpartial` command."""

import sys

from tfpartial import cli

sys.exit(cli.main())
