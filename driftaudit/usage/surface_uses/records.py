"""The records of where a consumer touches sglang's surfaces: flags, env vars, URLs."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FlagUsage:
    path: str
    line: int
    column: int
    flag: str  # the sglang flag as sglang spells it: "--tp-size"
    written: str  # as written: "--sglang-tp-size", "--tp-size", "sglang_tp_size"
    prefix: str | None  # the wrapping prefix ("--sglang-"), None when direct
    context: str  # shell | yaml | json | toml | dockerfile | python-argv | python-attr
    value: str | None  # the value that follows when evident, else None


@dataclass
class EnvUsage:
    path: str
    line: int
    column: int
    name: str  # SGLANG_* / SGL_*
    kind: str  # "set" | "read"
    context: str  # python | shell | yaml | json | toml | dockerfile


@dataclass
class UrlUsage:
    path: str
    line: int
    column: int
    route: str  # "/generate", "/v1/models/{}"
    method: str | None  # "GET", "POST", ... when the call shows it
    payload_keys: list[str] = field(default_factory=list)
    # the routes a fallback loop tries in order, this one among them (see `routes.fallback`)
    alternatives: list[str] = field(default_factory=list)


@dataclass
class SurfaceUsages:
    flags: list[FlagUsage] = field(default_factory=list)
    envs: list[EnvUsage] = field(default_factory=list)
    urls: list[UrlUsage] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)  # wrapping prefixes in effect
