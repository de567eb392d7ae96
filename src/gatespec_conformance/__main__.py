"""``python -m gatespec_conformance``: the ``gatespec-conformance`` command."""

import sys

from gatespec_conformance.cli import main

sys.exit(main())
