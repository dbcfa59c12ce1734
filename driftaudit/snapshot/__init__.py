"""Source tree -> API model (griffe), loaded lazily per module and cached by content."""

from driftaudit.snapshot.snapshot import Resolved, Snapshot

__all__ = ["Resolved", "Snapshot"]
