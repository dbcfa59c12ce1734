"""A consumer file as the fixer reads it: decoded text plus what writing it back must keep
(encoding, BOM, the digest taken when it was read). Findings' columns are characters
already (`pysource.Columns`), as libcst counts them.

`read_source` is the one place `fix/` reads a consumer file.
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import io
import os
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path


class UnreadableSource(Exception):
    """The file cannot be decoded (say why in the message)."""


class ChangedSinceScan(Exception):
    """The file was written after the scan that found its findings."""


@dataclass(frozen=True)
class Source:
    text: str  # decoded, newlines as in the file (CRLF stays CRLF), without the BOM
    encoding: str  # the PEP 263 encoding (utf-8 when none is declared)
    bom: bool
    digest: str  # sha256 of the bytes read

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> Source:
    """Decode bytes as Python does (BOM, PEP 263 cookie), keeping every newline as is."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise UnreadableSource(str(exc)) from None
    bom = encoding == "utf-8-sig"
    encoding = "utf-8" if bom else encoding
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UnreadableSource(f"cannot decode as {encoding}: {exc}") from None
    return Source(text, encoding, bom, digest_of(data))


def source_of(entry, path: Path, scanned_at: int | None = None) -> Source:
    """The source of a consumer file as the file index read it during the scan (an
    `usage.files.ConsumerFile`), so the fixer reads nothing twice; without an index entry
    (a file the walk left out), read from disk."""
    if entry is None or entry.text is None or entry.raw is None:
        return read_source(path, scanned_at)
    _check_unchanged(path, scanned_at)
    bom = entry.encoding == "utf-8-sig"
    return Source(entry.raw, "utf-8" if bom else entry.encoding, bom, entry.digest)


def _check_unchanged(path: Path, scanned_at: int | None) -> None:
    if scanned_at is not None:
        modified = os.stat(path).st_mtime_ns
        # a file dated in the future (clock skew, an unpacked archive) cannot tell
        if scanned_at < modified <= time.time_ns():
            raise ChangedSinceScan("changed since the scan; run again")


def read_source(path: Path, scanned_at: int | None = None) -> Source:
    """Read and decode a consumer file the index did not read. `scanned_at` (time.time_ns()
    when the scan began): a file modified since is refused, its findings' positions may be
    stale."""
    _check_unchanged(path, scanned_at)
    return decode(path.read_bytes())


def parses(data: bytes, path: str) -> str | None:
    """None when the bytes parse as Python (with their own encoding), else why not."""
    try:
        ast.parse(data, path)
    except (SyntaxError, ValueError) as exc:
        return str(exc)
    return None
