"""The replacement of an environment variable the new sglang no longer reads.

Three ways, the first that answers wins:

- `alias`: the old sglang maps the old name onto a name the new tree reads
  (`SGLANG_DSA_X = EnvIntWithAlias(..., deprecated_name="SGLANG_NSA_X")`,
  `_print_deprecated_env("SGLANG_OLD", "SGLANG_NEW")`, `_DeprecatedEnv("SGLANG_NEW")`):
  the old value meant the same as the new one. Safe to rename. (Where the new tree maps
  it, the old name is still read there: no DA504.)
- `prefix`: `SGL_X` is gone and `SGLANG_X` is read (the legacy-prefix rename).
- `similar`: the one variable new in the new tree, read in the same file with the same
  type and default, whose name says the same (see `similar`:
  `SGLANG_ENABLE_X` -> `SGLANG_X_ENABLED`). A guess: unsafe.

A replacement of the opposite sense (`SGL_DISABLE_X` forwarded to `SGLANG_ENABLE_X`) is
`inverted`: the value must be negated, so it is no rename.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from driftaudit.snapshot.surfaces.envs import ENV_NAME_RE, EnvVar

_PREFIXES = ("SGLANG", "SGL")
_SAME = {"ENABLED": "ENABLE", "DISABLED": "DISABLE"}
_OPPOSITES = (("ENABLE", "DISABLE"),)
_FILLERS = {"OPT", "USE", "ENABLE"}  # words a rename adds or drops freely
_RESPELLED = 0.6  # difflib ratio of a respelled word (`NSA` -> `DSA`: 0.67)


@dataclass(frozen=True)
class EnvReplacement:
    name: str
    how: str  # "alias" | "prefix" | "similar"
    inverted: bool = False  # the new variable means the opposite

    @property
    def safe(self) -> bool:
        return self.how == "alias" and not self.inverted


def find_replacement(
    name: str, old: dict[str, EnvVar], new: dict[str, EnvVar]
) -> EnvReplacement | None:
    """The variable that takes over `name` (read in `old`, not in `new`), or None."""
    target = mapped_to(name, old)
    if target and target in new and target != name:
        return EnvReplacement(target, "alias", _opposite(name, target))
    if name.startswith("SGL_"):
        target = "SGLANG_" + name.removeprefix("SGL_")
        if target in new:
            return EnvReplacement(target, "prefix")
    before = old.get(name)
    if before is None:
        return None
    candidates = [
        env.name
        for env in new.values()
        if env.name not in old
        and env.file == before.file
        and env.type == before.type
        and env.default == before.default
        and similar(name, env.name)
    ]
    if len(candidates) != 1:
        return None
    return EnvReplacement(candidates[0], "similar", _opposite(name, candidates[0]))


def mapped_to(name: str, tree: dict[str, EnvVar]) -> str | None:
    """The name `tree` forwards `name` to: its `deprecated` note naming one variable."""
    env = tree.get(name)
    note = (env.deprecated or "") if env else ""
    target = note.removeprefix("alias of ")
    return target if ENV_NAME_RE.match(target) else None


def tokens(name: str) -> set[str]:
    """The words of a name after its prefix, `ENABLED` read as `ENABLE`."""
    parts = name.split("_")
    if parts and parts[0] in _PREFIXES:
        parts = parts[1:]
    return {_SAME.get(p, p) for p in parts if p}


def similar(a: str, b: str) -> bool:
    """Do two names say the same thing? Their content words (not `OPT`/`USE`/`ENABLE`)
    are the same in another order, or one more word on one side (`SGLANG_ENABLE_NVTX` ->
    `SGLANG_ENABLE_NVTX_SCHEDULER`), or one word respelled (`NSA` -> `DSA`)."""
    left, right = tokens(a) - _FILLERS, tokens(b) - _FILLERS
    if _opposite(a, b) or not left or not right:
        return False
    only_left, only_right = left - right, right - left
    if not only_left and not only_right:
        return True  # reordered, or a filler word added or dropped
    if len(left & right) < 2:
        return False
    if not only_left or not only_right:
        return len(only_left | only_right) == 1  # one word more
    if len(only_left) == len(only_right) == 1:
        x, y = next(iter(only_left)), next(iter(only_right))
        return SequenceMatcher(None, x, y).ratio() >= _RESPELLED
    return False


def _opposite(a: str, b: str) -> bool:
    left, right = tokens(a), tokens(b)
    only_left, only_right = left - right, right - left
    return any(
        (x in only_left and y in only_right) or (y in only_left and x in only_right)
        for x, y in _OPPOSITES
    )
