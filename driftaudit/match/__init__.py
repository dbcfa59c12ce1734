"""Usages x drift -> findings."""

from driftaudit.match.matcher import match_usages

__all__ = ["match_usages"]
