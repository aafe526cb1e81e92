"""`python -m live_memory.cli`."""

from __future__ import annotations

import sys

from live_memory.cli import main

sys.exit(main())
