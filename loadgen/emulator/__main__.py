"""``python -m loadgen.emulator``: the same as ``loadgen emulator``."""

import sys

from loadgen.emulator.command import main

sys.exit(main())
