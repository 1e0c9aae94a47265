"""``python -m dashboards``: rebuild the dashboards' JSON (see `dashboards.build`)."""

import sys

from dashboards.build import main

sys.exit(main())
