"""The one key helper: every store key is built here, from its namespace, the version
of what the namespace's entries mean (bumped when an extractor or a shape changes), the
digests of its inputs and the question. Parts are joined with ':'; the question, when
it may hold anything, is hashed."""

from __future__ import annotations

import hashlib


def key(namespace: str, version: str | int, *parts: str) -> str:
    """`namespace:version:part:...` (namespace and version must hold no ':')."""
    return ":".join((namespace, str(version), *parts))


def question(*parts: str) -> str:
    """A digest standing for a question of any length or content."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()
