"""Errors a user can cause. The CLI prints them as one line and exits 2."""


class DriftauditError(Exception):
    """Bad input: a missing path, an unknown version, an unreadable config."""
