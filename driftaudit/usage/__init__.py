"""Consumer tree -> what it touches of sglang. Knows nothing of the snapshots.

Read with `ast` (fast, positions included); libcst is kept for the fixer.
"""

from driftaudit.usage.usages import (
    AttributeNameUsage,
    CallShape,
    CallUsage,
    ClassFieldUsage,
    DataclassCallUsage,
    EnumLookupUsage,
    ImportUsage,
    IndexUsage,
    KeywordDictUsage,
    MemberUsage,
    MetaInfoUsage,
    OverrideUsage,
    ParseFailure,
    ReferenceUsage,
    SubclassUsage,
    UnpackUsage,
    Usage,
    UsageSet,
)

__all__ = [
    "AttributeNameUsage",
    "CallShape",
    "CallUsage",
    "ClassFieldUsage",
    "DataclassCallUsage",
    "EnumLookupUsage",
    "ImportUsage",
    "IndexUsage",
    "KeywordDictUsage",
    "MemberUsage",
    "MetaInfoUsage",
    "OverrideUsage",
    "ParseFailure",
    "ReferenceUsage",
    "SubclassUsage",
    "UnpackUsage",
    "Usage",
    "UsageSet",
    "collect_usages",
]


def __getattr__(name: str):
    """`collect_usages` is imported on first use: the consumer file index
    (`usage.files`) is read without the visitors (and griffe) loaded."""
    if name == "collect_usages":
        from driftaudit.usage.collect import collect_usages

        return collect_usages
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
