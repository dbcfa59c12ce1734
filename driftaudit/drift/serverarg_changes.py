"""ServerArgs drift: fields, types, defaults, CLI flags and deprecations between two
releases, from the ServerArgs field model (whatever layout declares the fields)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.annotations import accepts_as_written, widens
from driftaudit.drift.changes import Change
from driftaudit.drift.literals import UNKNOWN, under_defaults, value_of
from driftaudit.drift.replacements import Replacements, ServerArgRedirected, Suggestion
from driftaudit.snapshot.surfaces.serverarg_redirects import Redirect
from driftaudit.snapshot.surfaces.serverarg_resolutions import Resolutions
from driftaudit.snapshot.surfaces.serverargs import ServerArgField, ServerArgsModel

SERVER_ARGS = "sglang.srt.server_args.ServerArgs"


def _where(field: ServerArgField | None) -> str | None:
    return f"{field.file}:{field.line}" if field else None


@dataclass
class ServerArgFieldRemoved(Change):
    field: str = ""
    replacement: str | None = None  # the field that now takes the old flag, if any
    suggestion: Suggestion | None = None  # else the setting that replaces it, with evidence

    code = codes.SERVER_ARG_REMOVED

    def explain(self) -> str:
        text = f"ServerArgs field `{self.field}` was removed"
        if self.replacement:
            text += f" (its flag now sets `{self.replacement}`)"
        elif self.suggestion:
            text += f"; set `{self.suggestion.setting}` instead ({self.suggestion.evidence})"
        return text


@dataclass
class ServerArgTypeChanged(Change):
    field: str = ""
    old_type: str | None = None
    new_type: str | None = None
    # the new type accepts every value the old one did (`int -> Optional[int]`): a
    # value the consumer passes still fits; only `driftaudit diff` lists it
    widened: bool = False

    code = codes.SERVER_ARG_TYPE_CHANGED

    def explain(self) -> str:
        return (
            f"ServerArgs field `{self.field}` changed type from `{self.old_type}` "
            f"to `{self.new_type}`"
        )

    def fits(self, value: str | None) -> bool:
        """Does a value the consumer passes (its type, when known) still fit?"""
        if self.widened:
            return True
        return value is not None and accepts_as_written(self.new_type, value) is True


@dataclass
class ServerArgDefaultChanged(Change):
    field: str = ""
    old_default: str | None = None
    new_default: str | None = None
    # where the new release resolves the new default (None) back to the old value at
    # startup: the change is not one a consumer can observe (changelog only)
    resolved_at: str | None = None
    old_value: str | None = None  # the old default's value, when it names a constant

    code = codes.SERVER_ARG_DEFAULT_CHANGED

    def explain(self) -> str:
        old = self.old_default
        old += f" (= {self.old_value})" if self.old_value and self.old_value != old else ""
        text = f"default of ServerArgs field `{self.field}` changed from {old} to "
        text += str(self.new_default)
        if self.resolved_at:
            return f"{text}, which sglang resolves to the old value at startup ({self.resolved_at})"
        return text + ": results may change silently where it is not set"

    @property
    def keep(self) -> str | None:
        """The value to pass to keep the old behaviour."""
        return self.old_value or self.old_default


@dataclass
class FlagRemoved(Change):
    flag: str = ""
    replacement: str | None = None  # the flag to use instead, when one maps to the field
    evidence: str | None = None  # why that flag replaces it, when it is not the same field
    # still registered, but its argparse action refuses it when passed: its dest still
    # parses (default), passing the flag stops startup
    refused: bool = False

    code = codes.FLAG_REMOVED

    def explain(self) -> str:
        text = f"CLI flag `{self.flag}` was removed"
        if self.refused:
            text = f"CLI flag `{self.flag}` is refused when passed (its argparse action raises)"
        text += f": use `{self.replacement}`" if self.replacement else ""
        return text + (f" ({self.evidence})" if self.evidence else "")


@dataclass
class FlagDeprecated(Change):
    flag: str = ""
    note: str = ""

    code = codes.FLAG_DEPRECATED

    def explain(self) -> str:
        return f"CLI flag `{self.flag}` is deprecated" + (f": {self.note}" if self.note else "")


@dataclass
class FlagDestChanged(Change):
    """Flags that stored into `dest` still parse, but into `new_dest` now (an old long
    spelling kept only as an alias of a field's flag)."""

    dest: str = ""
    new_dest: str = ""
    flags: tuple[str, ...] = ()  # the old flags that stored into `dest`

    code = codes.FLAG_DEST_CHANGED

    def explain(self) -> str:
        spelled = ", ".join(f"`{f}`" for f in self.flags)
        return f"argparse dest `{self.dest}` is gone: {spelled} now store into `{self.new_dest}`"


def _same(a: object, b: object) -> bool:
    """Equal values of one kind (True is not 1; 2 and 2.0 are the same number)."""
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, numbers) and isinstance(b, numbers):
        return a == b
    return type(a) is type(b) and a == b


def _normal_type(text: str | None) -> str:
    text = (text or "").replace(" ", "").replace("typing.", "")
    match = re.fullmatch(r"Optional\[(.+)\]", text)
    return f"{match.group(1)}|None" if match else text


class ServerArgsDrift:
    """Changes by field name and by flag, for matching and for `driftaudit diff`."""

    def __init__(
        self,
        old: ServerArgsModel,
        new: ServerArgsModel,
        old_redirects: list[Redirect] | None = None,
        new_redirects: list[Redirect] | None = None,
        old_resolutions: Resolutions | None = None,
        new_resolutions: Resolutions | None = None,
        tables: tuple | None = None,
    ):
        """`tables`: (by_field, by_flag, by_dest) computed before on the same models."""
        self.old, self.new = old, new
        self.old_resolutions = old_resolutions or Resolutions()
        self.new_resolutions = new_resolutions or Resolutions()
        self.replacements = Replacements(old, new, old_redirects, new_redirects)
        if tables is not None:
            self.by_field, self.by_flag, self.by_dest = tables
            return
        self.by_field: dict[str, list[Change]] = {}
        self.by_flag: dict[str, Change] = {}
        for name, field in old.fields.items():
            self.by_field[name] = self._field_changes(name, field)
        for flag, name in old.flags.items():
            change = self._flag_change(flag, name)
            if change is not None:
                self.by_flag[flag] = change
        self.by_dest: dict[str, FlagDestChanged] = self._dest_changes()

    @classmethod
    def between(cls, old, new) -> ServerArgsDrift | None:
        """The drift of two snapshots' ServerArgs (None unless both have the model). Its
        tables depend on the trees alone: kept per version pair (drift/pairs.py)."""
        from driftaudit.drift.pairs import MISSING, PairMemo

        old_model, new_model = old.server_args(), new.server_args()
        if not old_model or not new_model:
            return None
        surfaces = [
            tree.surface(name)
            for name in ("server_arg_redirects", "server_arg_resolutions")
            for tree in (old, new)
        ]
        memo = PairMemo(old, new, "serverargs-drift")
        tables = memo.get("tables", tuple)
        drift = cls(old_model, new_model, *surfaces, tables=None if tables is MISSING else tables)
        if tables is MISSING:
            memo.put("tables", (drift.by_field, drift.by_flag, drift.by_dest))
            memo.flush()
        return drift

    def _dest_changes(self) -> dict[str, FlagDestChanged]:
        """Old argparse dests no flag stores into any more while their flags still parse.
        A dest that names a removed field is left to that removal (DA401)."""
        new_dests = set(self.new.dests.values())
        moved: dict[str, dict[str, list[str]]] = {}  # old dest -> new dest -> flags
        for flag, dest in self.old.dests.items():
            now = self.new.dests.get(flag)
            if now is None or now == dest or dest in new_dests:
                continue
            if any(isinstance(c, ServerArgFieldRemoved) for c in self.by_field.get(dest, [])):
                continue
            moved.setdefault(dest, {}).setdefault(now, []).append(flag)
        changes = {}
        for dest, targets in moved.items():
            new_dest, flags = max(targets.items(), key=lambda item: len(item[1]))
            old_field = self.old.fields.get(self.old.flags.get(flags[0], ""))
            new_field = self.new.fields.get(self.new.flags.get(flags[0], ""))
            symbol = f"{SERVER_ARGS}.{old_field.name if old_field else dest}"
            changes[dest] = FlagDestChanged(
                symbol, _where(old_field), _where(new_field), dest, new_dest, tuple(flags)
            )
        return changes

    def _field_changes(self, name: str, field: ServerArgField) -> list[Change]:
        symbol = f"{SERVER_ARGS}.{name}"
        twin = self.new.fields.get(name)
        if twin is None:
            replacement = None
            for flag in [field.flag, *field.aliases]:
                if flag and self.new.flags.get(flag) not in (None, name):
                    replacement = self.new.flags[flag]
                    break
            suggestion = None if replacement else self.replacements.suggest(field)
            where = suggestion and _where(self.new.fields.get(suggestion.field))
            return [
                ServerArgFieldRemoved(symbol, _where(field), where, name, replacement, suggestion)
            ]
        changes: list[Change] = []
        where = (_where(field), _where(twin))
        redirected = self.replacements.redirected(symbol, name, name, where[0])
        if redirected is not None:
            changes.append(redirected)
        if _normal_type(field.annotation) != _normal_type(twin.annotation):
            widened = widens(field.annotation, twin.annotation)
            changes.append(
                ServerArgTypeChanged(
                    symbol, *where, name, field.annotation, twin.annotation, widened
                )
            )
        if (field.default or "") != (twin.default or ""):
            change = self._default_change(symbol, where, name, field.default, twin.default)
            if change is not None:
                changes.append(change)
        return changes

    def _default_change(
        self, symbol: str, where: tuple, name: str, old: str | None, new: str | None
    ) -> ServerArgDefaultChanged | None:
        """None where both defaults denote the same value (`list(EMPTY)` and `list()`);
        marked resolved where the new default is None and the new release's startup
        resolution gives the old value in its default configuration: a declared fallback,
        or an `if x is None:` branch whose other conditions (and the value, when it is a
        conditional expression) hold, read with every other field at its new default."""
        before = value_of(old, self.old_resolutions.constants)
        after = value_of(new, self.new_resolutions.constants)
        if before is not UNKNOWN and after is not UNKNOWN and _same(before, after):
            return None
        shown = repr(before) if before is not UNKNOWN and repr(before) != old else None
        change = ServerArgDefaultChanged(symbol, *where, name, old, new, old_value=shown)
        if before is not UNKNOWN and after is None:
            change.resolved_at = self._resolved_to(name, before)
        return change

    def _resolved_to(self, name: str, old_value: object) -> str | None:
        """Where the new release resolves field `name` (default None) to `old_value` in
        the default configuration (every field at its new default): a resolution whose
        conditions hold there gives it, and none that holds there gives another value (a
        declared fallback yields to them). Conditions that cannot be read (the model, the
        platform) leave a resolution out: it is not the default configuration's."""
        constants, at = self.new_resolutions.constants, None
        for resolution in self.new_resolutions.by_field.get(name, []):
            if resolution.when and (
                under_defaults(resolution.when, self._new_default, constants) is not True
            ):
                continue
            value = under_defaults(resolution.value, self._new_default, constants)
            if value is not UNKNOWN and _same(old_value, value):
                at = at or f"{resolution.file}:{resolution.line}"
            elif resolution.how != "fallback":
                return None  # the default configuration resolves it to something else
        return at

    def _new_default(self, name: str) -> object:
        """The new default value of field `name` (UNKNOWN when not a literal)."""
        field = self.new.fields.get(name)
        if field is None:
            return UNKNOWN
        return value_of(field.default, self.new_resolutions.constants)

    def _flag_change(self, flag: str, name: str) -> Change | None:
        symbol = f"{SERVER_ARGS}.{name}"
        old_field, new_name = self.old.fields.get(name), self.new.flags.get(flag)
        still_parsed = flag in self.new.dests and flag not in self.new.rejected_flags
        if new_name is None and still_parsed:
            if flag in self.new.deprecated_flags and flag not in self.old.deprecated_flags:
                note = self.new.deprecated_flags[flag] + " It sets no ServerArgs field now."
                return FlagDeprecated(symbol, _where(old_field), None, flag, note)
            return None  # accepted and ignored: no field reads its dest
        if new_name is None:
            twin = self.new.fields.get(name)
            replacement = twin.flag if twin is not None and twin.flag != flag else None
            evidence = None
            alias = self.replacements.flag_replacement(flag)
            if alias is not None:
                replacement, evidence = alias
                twin = self.new.fields.get(self.new.flags.get(replacement.split("=")[0], ""))
            if replacement is None and old_field is not None:
                suggestion = self.replacements.suggest(old_field)
                if suggestion is not None and (suggestion.flag or suggestion.value is None):
                    twin = self.new.fields.get(suggestion.field)
                    replacement = suggestion.flag or (twin.flag if twin else None)
                    evidence = suggestion.evidence if replacement else None
            refused = flag in self.new.rejected_flags
            return FlagRemoved(
                symbol, _where(old_field), _where(twin), flag, replacement, evidence, refused
            )
        # what the flag sets now: its own redirect (a `dest=`), else its field's
        redirect = self.replacements.redirect(flag, new_name) or self.replacements.redirect(
            new_name, new_name
        )
        if flag in self.new.deprecated_flags and flag not in self.old.deprecated_flags:
            twin = self.new.fields.get(new_name)
            note = self.new.deprecated_flags[flag]
            if redirect is not None:
                note += f" It now sets `{redirect.setting}`."
            return FlagDeprecated(symbol, _where(old_field), _where(twin), flag, note)
        if redirect is not None:
            where = f"{redirect.file}:{redirect.line}"
            setting = redirect.setting
            return ServerArgRedirected(
                symbol, _where(old_field), where, flag, setting, redirect.new_flag
            )
        return None

    def all_changes(self) -> list[Change]:
        changes = [c for group in self.by_field.values() for c in group]
        return changes + list(self.by_flag.values()) + list(self.by_dest.values())
