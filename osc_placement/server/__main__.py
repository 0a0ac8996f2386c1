import sys

from osc_placement.server import cmd

sys.exit(cmd.main())
