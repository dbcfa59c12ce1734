"""driftaudit: static API-drift auditor for sglang upgrades.

Pipeline (see docs/ARCHITECTURE.md): sources -> snapshot -> drift + usage -> match -> report.
"""

__version__ = "0.1.0"
