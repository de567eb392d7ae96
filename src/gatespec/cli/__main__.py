"""`python -m gatespec.cli`: the `gatespec` command."""

import sys

from gatespec.cli import main

sys.exit(main())
