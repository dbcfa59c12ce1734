"""Old API model, new API model -> changes. Knows nothing of the consumer."""

from driftaudit.drift.changes import Change
from driftaudit.drift.differ import Differ

__all__ = ["Change", "Differ"]
