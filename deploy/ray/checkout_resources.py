#!/usr/bin/env python3
"""Print the `ray start --resources` JSON that says "this node holds these checkouts".

    python deploy/ray/checkout_resources.py /srv/repos /home/dev/src
    ray start --address=HEAD:6379 --resources="$(python deploy/ray/checkout_resources.py /srv/repos)"

A node advertising a directory may run the workspace actor of any repository beneath it.
"""

from __future__ import annotations

import json
import sys

from live_memory.ray_backend import checkout_resource

UNITS = 1000  # each workspace actor takes 0.001 of it: room for a million per directory


def main(directories: list[str]) -> int:
    if not directories:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps({checkout_resource(d): UNITS for d in directories}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
