"""Source tree -> API model (griffe), loaded lazily per module and cached by content."""

from driftaudit.snapshot.resolution import Resolved
from driftaudit.snapshot.snapshot import Snapshot

__all__ = ["Resolved", "Snapshot"]
