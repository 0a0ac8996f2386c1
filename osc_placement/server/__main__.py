# SPDX-License-Identifier: Apache-2.0
import sys

from osc_placement.server import launcher

sys.exit(launcher.main())
