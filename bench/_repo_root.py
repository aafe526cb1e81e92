"""Put the repository root on `sys.path`, so a bench run as `python bench/NAME.py` can use the
test support (`tests.support`: the fake provider, the server-process helper), which is not part
of the installed package. Import it before anything from `tests`."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
