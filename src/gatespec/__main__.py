"""`python -m gatespec`: the `gatespec` command."""

import sys

from gatespec.cli import main

sys.exit(main())
