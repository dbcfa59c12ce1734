"""Consumer tree -> what it touches of sglang. Knows nothing of the snapshots.

Read with `ast` (fast, positions included); libcst is kept for the fixer.
"""

from driftaudit.usage.collect import collect_usages
from driftaudit.usage.model import (
    AttributeNameUsage,
    CallShape,
    CallUsage,
    ClassFieldUsage,
    ImportUsage,
    IndexUsage,
    KeywordDictUsage,
    MemberUsage,
    MetaInfoUsage,
    OverrideUsage,
    ParseFailure,
    ReferenceUsage,
    UnpackUsage,
    Usage,
    UsageSet,
)

__all__ = [
    "AttributeNameUsage",
    "CallShape",
    "CallUsage",
    "ClassFieldUsage",
    "ImportUsage",
    "IndexUsage",
    "KeywordDictUsage",
    "MemberUsage",
    "MetaInfoUsage",
    "OverrideUsage",
    "ParseFailure",
    "ReferenceUsage",
    "UnpackUsage",
    "Usage",
    "UsageSet",
    "collect_usages",
]
