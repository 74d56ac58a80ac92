"""``python -m effects`` runs the ``agent-core`` command line."""

import sys

from .cli import main

sys.exit(main())
