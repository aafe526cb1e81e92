"""Where a workspace actor may run: on a node that holds its checkout.

A workspace actor reads the repository's files (tools, preload, the watcher), so it must run
on a node where its canonical root is a readable directory. Nodes say which directories they
hold with a Ray custom resource per directory:

    ray start ... --resources '{"live_memory_checkout_<digest of /srv/repos>": 1000}'

`checkout_resource(directory)` gives the name (`live_memory.ray_backend.checkout_resource`;
deploy/ray/checkout-resources.py prints it). A node advertising a directory holds every
repository beneath it. A workspace actor asks for a sliver of the resource of the deepest
advertised ancestor of its root, so Ray places it only on such a node (and on another such
node after a node loss); when no live node advertises any ancestor, the request is refused
with `NoCheckoutNode`, naming the resource to add.

Among the nodes advertising that resource, `choose_node` picks one by rendezvous hashing of
the root: every gateway picks the same node for a root, and workspaces spread over the nodes
that hold them. The choice is soft (Ray's node affinity with `soft=True`): when that node is
gone (a node loss) or full, the actor starts, or restarts, on another node with the resource.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from live_memory.config import constants as C
from live_memory.errors import NoCheckoutNode

__all__ = ["actor_name", "checkout_resource", "choose_node", "choose_resource"]


def _digest(text: str, chars: int) -> str:
    return hashlib.sha256(os.fsencode(text)).hexdigest()[:chars]


def actor_name(root: str) -> str:
    """The Ray actor name of the workspace at canonical `root` (stable across gateways)."""
    return C.RAY_ACTOR_NAME_PREFIX + _digest(root, C.RAY_ACTOR_NAME_DIGEST_CHARS)


def checkout_resource(directory: str) -> str:
    """The node resource that says "this node holds `directory` and everything beneath"."""
    normal = str(PurePosixPath(os.path.normpath(directory)))
    return C.RAY_CHECKOUT_RESOURCE_PREFIX + _digest(normal, C.RAY_ACTOR_NAME_DIGEST_CHARS)


def _ancestors(root: str) -> list[str]:
    """`root` and its parents, deepest first (bounded: a path has few components)."""
    path = PurePosixPath(os.path.normpath(root))
    chain = [path, *path.parents]
    return [str(p) for p in chain[: C.RAY_CHECKOUT_MAX_DEPTH]]


def choose_resource(root: str, nodes: Iterable[Mapping[str, object]]) -> str:
    """The resource a workspace actor for `root` asks for, given `ray.nodes()`.

    Raises NoCheckoutNode when no live node advertises `root` or one of its ancestors.
    """
    advertised: set[str] = set()
    for node in nodes:
        resources = node.get("Resources")
        if node.get("Alive") and isinstance(resources, Mapping):
            advertised.update(k for k in resources if k.startswith(C.RAY_CHECKOUT_RESOURCE_PREFIX))
    for directory in _ancestors(root):
        name = checkout_resource(directory)
        if name in advertised:
            return name
    raise NoCheckoutNode(
        f"no Ray node holds the checkout of {root}: start a node that can read it with "
        f"--resources '{{\"{checkout_resource(root)}\": 1000}}' (or the resource of a directory "
        "above it; see docs/SCALING.md)"
    )


def choose_node(root: str, resource: str, nodes: Iterable[Mapping[str, object]]) -> str | None:
    """The node (its Ray id) that should host `root`'s actor: of the live nodes advertising
    `resource`, the one whose digest with the root is highest (None: no such node)."""
    holders = [
        str(node["NodeID"])
        for node in nodes
        if node.get("Alive")
        and isinstance(node.get("Resources"), Mapping)
        and resource in node["Resources"]  # type: ignore[operator]
    ]
    return max(holders, key=lambda node_id: _digest(f"{root}\0{node_id}", 64), default=None)
