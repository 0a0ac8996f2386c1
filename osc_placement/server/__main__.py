import sys

from osc_placement.server import launcher

sys.exit(launcher.main())
