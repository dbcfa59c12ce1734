"""Between match and report: what the team silenced inline (suppressions) and what it
accepted as known (the baseline), so that CI fails only on what is new."""

from driftaudit.check.baseline import Baseline, fingerprint
from driftaudit.check.gate import Gate, triage
from driftaudit.check.suppressions import apply_suppressions

__all__ = ["Baseline", "Gate", "apply_suppressions", "fingerprint", "triage"]
