"""The cyclic garbage collector paused while a cold run builds a model from source.

Parsing allocates hundreds of thousands of AST nodes and griffe objects per module;
each allocation burst triggers collections, and a full one walks every object alive
(the models and call data built so far), so the collector's cost grows with the run:
measured at a quarter of a cold compare. What extraction discards is freed by
reference counting, or by the first collection after the pause (cycles: griffe's
parent links), so memory stays bounded by one module's garbage.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (nests; restores the caller's setting)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
