"""`python -m fleetscope` runs the same CLI as the `fleetscope` command."""

import sys

from fleetscope.cli import main

sys.exit(main())
