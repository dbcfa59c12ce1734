"""One codec per namespace: how its values become bytes and back, and what a stored
entry must look like to be used. `decode` raises `Invalid` for anything else (a
truncated write, an entry of another version's shape, a planted one): the store
treats it as a miss and computes the answer again."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

# what building a value from a damaged or foreign entry raises
_WRONG = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError)


class Invalid(Exception):
    """A stored entry that is not a value of its namespace."""


class Codec(Protocol):
    def encode(self, value: Any) -> bytes: ...

    def decode(self, data: bytes) -> Any: ...


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Json:
    """JSON: `dump` turns the value into JSON-ready data, `load` builds the value back
    from decoded data and raises on a wrong shape (see the `shape` helpers below)."""

    load: Callable[[Any], Any] = _same
    dump: Callable[[Any], Any] = _same

    def encode(self, value: Any) -> bytes:
        return json.dumps(self.dump(value), separators=(",", ":")).encode()

    def decode(self, data: bytes) -> Any:
        try:
            return self.load(json.loads(data))
        except _WRONG as exc:
            raise Invalid(str(exc)) from None


@dataclass(frozen=True)
class Pickled:
    """Pickle, for values of driftaudit's own classes (a pair's answers); only an
    instance of `kind` is accepted back. The store is the user's own cache directory,
    written only by driftaudit (see the README's threat model)."""

    kind: type | tuple[type, ...] = field(default=object)

    def encode(self, value: Any) -> bytes:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, data: bytes) -> Any:
        try:
            value = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 -- any damage or foreign form: a miss
            raise Invalid(str(exc)) from None
        if not isinstance(value, self.kind):
            raise Invalid(f"not a {self.kind}")
        return value


@dataclass(frozen=True)
class Raw:
    """Bytes as they are, checked by `check` (which raises on a wrong entry)."""

    check: Callable[[bytes], Any] = _same

    def encode(self, value: Any) -> bytes:
        return value

    def decode(self, data: bytes) -> Any:
        try:
            self.check(data)
        except _WRONG as exc:
            raise Invalid(str(exc)) from None
        return data


# ---- shapes: `load` functions that check decoded JSON ------------------------------------


def strings(data: Any) -> list[str]:
    """A list of strings."""
    if not isinstance(data, list) or not all(isinstance(s, str) for s in data):
        raise TypeError("not a list of strings")
    return data


def table_of_strings(data: Any) -> dict[str, list[str]]:
    """str -> list of strings."""
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(s, str) for s in v)
        for k, v in data.items()
    ):
        raise TypeError("not a table of string lists")
    return data


def optional(load: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`load`, or None for a stored null."""
    return lambda data: None if data is None else load(data)
