"""sglang's own surfaces x consumer usages: ServerArgs fields and CLI flags (direct and
wrapped), HTTP routes and payloads, env vars, parser names, meta_info keys, pins."""

from __future__ import annotations

import re
import sys

from driftaudit import codes
from driftaudit.drift import Differ
from driftaudit.drift.gates import never_runs
from driftaudit.drift.replacements import ServerArgRedirected
from driftaudit.drift.serverarg_changes import (
    SERVER_ARGS,
    FlagDeprecated,
    FlagRemoved,
    ServerArgDefaultChanged,
    ServerArgFieldRemoved,
    ServerArgsDrift,
    ServerArgTypeChanged,
)
from driftaudit.drift.surface_changes import (
    MetaInfoKeyRemoved,
    ParserRemoved,
    RequestFieldRemoved,
    RouteMethodChanged,
    RouteRemoved,
    env_tables,
    env_var_unused,
)
from driftaudit.errors import DriftauditError
from driftaudit.findings import Finding, Fix, Place, finding_at
from driftaudit.match.members import MemberMatcher
from driftaudit.match.renames import (
    deprecated_fix,
    dest_fix,
    env_fix,
    flag_fix,
    keyword_fix,
    respell,
)
from driftaudit.pysource import Span
from driftaudit.requirements import applies, satisfiable
from driftaudit.snapshot.surfaces.http import route_key
from driftaudit.sources.tree import has_metadata
from driftaudit.usage import (
    CallUsage,
    ClassFieldUsage,
    KeywordDictUsage,
    MemberUsage,
    MetaInfoUsage,
    UsageSet,
)
from driftaudit.usage.dest_owners import DestOwners, defines_own_flag
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.pins import Pin
from driftaudit.usage.surface_uses import SurfaceUsages
from driftaudit.versions import parse_version

PARSER_FLAGS = {"--tool-call-parser": "tool_call", "--reasoning-parser": "reasoning"}
_CONFIG_FILES = {"yaml", "json", "toml"}
_KWARG_KEY = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")  # snake_case: a field name


def _refuses_unknown(snapshot, struct) -> bool:
    """Does the request struct refuse a key it has no field for? Dataclasses, msgspec
    structs and pydantic models parse a JSON body dropping unknown keys unless told not
    to (`extra="forbid"`, `forbid_unknown_fields=True`): read in the class's source."""
    module = struct.file.removesuffix(".py").replace("/", ".")
    source = snapshot.source(module) or ""
    lines = source.splitlines()[max(struct.line - 1, 0) :]
    end = next((i for i, t in enumerate(lines[1:], 1) if t[:1] not in ("", " ", "\t")), None)
    return "forbid" in "\n".join(lines[:end])


def _finding(code, place, symbol, message, old=None, new=None, fix=None, **kw) -> Finding:
    path, line, column = place
    return Finding(code, path, line, column, symbol, message, old, new, fix, **kw)


def _at(usage) -> Place:
    return Place(usage.path, usage.line, usage.column)


def _word(usage, word: str) -> Span:
    """A flag's or env var's name as written at the usage (a point plus its length)."""
    return Span(usage.line, usage.column, usage.line, usage.column + len(word))


class SurfaceMatcher:
    def __init__(
        self,
        differ: Differ,
        usages: UsageSet,
        members: MemberMatcher,
        pack=None,
        files: ConsumerFiles | None = None,
    ):
        self.files = files  # the consumer's files: whose is a wrapped dest (DestOwners)
        self._dest_owners: DestOwners | None = None
        self.differ = differ
        self.usages = usages
        self.members = members
        self.canonical = pack.canonical if pack else (lambda s: s)
        self._uses: tuple[set[str], set[tuple]] | None = None
        self.server_args = ServerArgsDrift.between(differ.old, differ.new)

    # ---- ServerArgs ---------------------------------------------------------------

    def _field(
        self,
        name: str,
        place,
        how: str,
        passed: bool = True,
        at=None,
        rename: str | None = None,
        write: bool = False,
        value: str | None = None,
    ) -> list[Finding]:
        """Findings for a field the consumer names; `passed`: it sets a value (a type
        change matters), else it only reads or wraps it (only a removal matters);
        `rename`: the edit that renames it at `place` (rename-keyword of the ServerArgs
        call, rename-key of a keyword dict), when a field replaces it; `write`: an
        attribute store on an instance (a removed field's is a no-op, not a crash);
        `value`: the type of the value it sets, when known (a new type may still take it)."""
        if self.server_args is None:
            return []
        findings = []
        for change in self.server_args.by_field.get(name, []):
            if isinstance(change, ServerArgDefaultChanged):
                continue  # only where the field is left unset (see _defaults)
            if isinstance(change, ServerArgTypeChanged) and change.fits(value):
                continue  # what it passes still fits the new type
            if isinstance(change, ServerArgFieldRemoved) or passed:
                fix = None
                if isinstance(change, ServerArgFieldRemoved):
                    instead = change.replacement or (
                        change.suggestion.setting if change.suggestion else None
                    )
                    fix = Fix(f"set `{instead}` instead" if instead else f"drop `{name}`")
                    fix = (rename and keyword_fix(name, change, rename)) or fix
                elif isinstance(change, ServerArgRedirected):
                    fix = Fix(f"set `{change.target}` instead")
                message = f"{how}: {change.explain()}"
                severity = ""
                if write and isinstance(change, ServerArgFieldRemoved):
                    # a dataclass takes any attribute: the store runs and nothing reads it
                    message = f"{how} = ...: {change.explain()}, so the write does nothing"
                    severity = "warning"
                findings.append(finding_at(place, change, message, fix, at=at, severity=severity))
        return findings

    def server_args_findings(self, surfaces: SurfaceUsages | None) -> list[Finding]:
        if self.server_args is None:
            return []
        findings: list[Finding] = []
        fields = set(self.server_args.old.fields)
        splatted = []
        for usage in self.usages.usages:
            if isinstance(usage, CallUsage) and self.canonical(usage.symbol) == SERVER_ARGS:
                for keyword in usage.keywords:
                    if keyword in usage.spread:
                        continue  # judged at the dict's key, below
                    how, at = f"ServerArgs({keyword}=...)", usage.places.get(keyword)
                    findings += self._field(
                        keyword,
                        usage,
                        how,
                        at=at,
                        rename="rename-keyword",
                        value=usage.arg_types.get(keyword),
                    )
                if usage.star_kwargs or usage.spread:
                    splatted.append(usage)
                else:
                    findings += self._defaults(usage)
            elif isinstance(usage, MemberUsage) and usage.member in fields:
                if SERVER_ARGS in self.members.classes_of(usage.receiver):
                    how = f"server_args.{usage.member}"
                    findings += self._field(
                        usage.member,
                        usage,
                        how,
                        passed=usage.store,
                        write=usage.store,
                        value=usage.value_type,
                    )
            elif isinstance(usage, ClassFieldUsage):
                name = usage.name.removeprefix("sglang_")
                if name in fields:
                    how = f"`{usage.owner}.{usage.name}` wraps ServerArgs field `{name}`"
                    found = self._field(name, usage, how, passed=False)
                    findings += self._passed_as_flag(usage.name, name, found, surfaces)
        if splatted:
            where = ", ".join(f"{u.path}:{u.line}" for u in splatted[:3])
            for usage in self.usages.usages:
                if not isinstance(usage, KeywordDictUsage):
                    continue
                known = [k for k in usage.keys if k[0] in fields]
                if len(known) < 3 or len(known) < 0.6 * len(usage.keys):
                    continue
                confidence = "certain" if len(known) >= 0.8 * len(usage.keys) else "likely"
                for key, span in known:
                    how = (
                        f"keyword `{key}` of a dict passed as ServerArgs(**kwargs) "
                        f"({len(known)} of its {len(usage.keys)} keys are ServerArgs fields; "
                        f"splatted at {where})"
                    )
                    place = Place(usage.path, span.line, span.column)
                    for found in self._field(key, place, how, at=span, rename="rename-key"):
                        found.confidence = confidence
                        if confidence == "likely":
                            found.severity = "warning"
                        findings.append(found)
        if surfaces is not None:
            findings += self._flags(surfaces)
            findings = self._one_fact(findings, surfaces)
        unique = {(f.path, f.line, f.column, f.code.code, f.symbol): f for f in findings}
        return list(unique.values())

    def _one_fact(self, findings: list[Finding], surfaces: SurfaceUsages) -> list[Finding]:
        """A consumer's own config plumbing named `sglang_x` (a dataclass field, a read of
        `cfg.sglang_x`, a `getattr` name) feeds the flag literal it emits (`"--sglang-x"`):
        where such a literal in the same file has a finding of the same code and symbol,
        the plumbing's go (issue 9: one fact, one finding, at the flag)."""
        plumbing = {(u.path, u.line, u.column) for u in surfaces.flags if _is_attr(u)}
        plumbing |= {
            (u.path, u.line, u.column) for u in self.usages.usages if isinstance(u, ClassFieldUsage)
        }
        literals = {(u.path, u.line, u.column) for u in surfaces.flags if not _is_attr(u)}
        at_literal = {
            (f.path, f.code.code, f.symbol) for f in findings if (f.path, *f.fix_at) in literals
        }
        return [
            f
            for f in findings
            if (f.path, *f.fix_at) not in plumbing
            or (f.path, f.code.code, f.symbol) not in at_literal
        ]

    def _defaults(self, call: CallUsage) -> list[Finding]:
        """ServerArgs(...) leaves these fields unset, and their defaults changed: a warning
        where the consumer reads the field, info where it never does; nothing where the
        same function sets it after construction (the default is never seen), where
        the new release resolves the new None default to the old value at startup, or,
        the consumer not reading it, where every read of it in the new release sits
        behind a setting the call leaves off (`gates.read_conditions`)."""
        findings = []
        reads, writes = self._field_uses()
        values = None
        for name, changes in self.server_args.by_field.items():
            if name in call.keywords or (call.path, call.scope, name) in writes:
                continue
            for change in changes:
                if isinstance(change, ServerArgDefaultChanged) and not change.resolved_at:
                    if name not in reads:
                        values = self._call_values(call) if values is None else values
                        sglang_reads = self.differ.new_reads(SERVER_ARGS, name)
                        if never_runs(sglang_reads, {k: v for k, v in values.items() if k != name}):
                            continue  # every read in sglang is behind a setting left off
                    message = f"ServerArgs(...) leaves `{name}` unset: {change.explain()}"
                    fix = Fix(f"pass `{name}={change.keep}` to keep the old behaviour")
                    severity = "" if name in reads else "info"
                    findings.append(finding_at(call, change, message, fix, severity=severity))
        return findings

    def _call_values(self, call: CallUsage) -> dict[str, str]:
        """Each field's value in a ServerArgs(...) call: the literal it passes, else (left
        out) its new default; a field it passes otherwise is not known."""
        fields = self.server_args.new.fields
        values = {n: f.default for n, f in fields.items() if f.default and n not in call.keywords}
        values.update((k, v) for k, v in call.literals.items() if not k.isdigit())
        return values

    def _field_uses(self) -> tuple[set[str], set[tuple]]:
        """ServerArgs fields the consumer reads (names); and sets on an instance, as
        (path, function, name)."""
        if self._uses is None:
            reads, writes = set(), set()
            fields = self.server_args.old.fields
            for usage in self.usages.usages:
                if not isinstance(usage, MemberUsage) or usage.member not in fields:
                    continue
                if SERVER_ARGS in self.members.classes_of(usage.receiver):
                    if usage.store:
                        writes.add((usage.path, usage.scope, usage.member))
                    else:
                        reads.add(usage.member)
            self._uses = reads, writes
        return self._uses

    def _owners(self, surfaces: SurfaceUsages | None) -> DestOwners | None:
        """Whose are the wrapped names read in Python and the class fields (once)."""
        if self._dest_owners is None and self.files is not None:
            names = {u.name for u in self.usages.usages if isinstance(u, ClassFieldUsage)}
            for usage in surfaces.flags if surfaces is not None else ():
                if usage.prefix and usage.context == "python-attr":
                    names.add(usage.written)
            self._dest_owners = DestOwners(self.files, names)
        return self._dest_owners

    def _passed_as_flag(self, written, name, found, surfaces) -> list[Finding]:
        """A consumer's own class field wrapping a removed ServerArgs field: when a
        statement passes it to sglang behind a flag literal, that literal's finding is
        the fix, and this one needs no edit (`Fix.covered_by`). Where the literal already
        is the new flag (after `fix`), the consumer's own name is no finding at all."""
        owners = self._owners(surfaces)
        settled = []
        old = self.server_args.old.fields.get(name)
        for finding in found:
            if owners is None or old is None or not old.flag or finding.fix is None:
                continue
            wrapped = "--" + written.replace("_", "-")
            passed = {old.flag, wrapped, name}  # a flag literal, or a ServerArgs keyword
            current = set()
            for change in self.server_args.by_field.get(name, []):  # already the new flag?
                if isinstance(change, ServerArgFieldRemoved):
                    new_name = change.replacement or getattr(change.suggestion, "field", None)
                    new = self.server_args.new.fields.get(new_name or "")
                    if new is not None and new.flag:
                        current |= {new.flag, respell(wrapped, old.flag, new.flag), new.name}
            emitted = [e for e in owners.of(written).emitted if e[2] in passed | current]
            if emitted and finding.fix.edit is None:
                at, line, flag = emitted[0]
                if all(e[2] not in passed for e in emitted):
                    settled.append(finding)  # it reaches sglang as the new flag only
                    continue
                finding.fix = Fix(
                    f"{finding.fix.description} where `{flag}` passes it ({at}:{line}): "
                    f"nothing to rename here, `{written}` is the consumer's own name",
                    covered_by=f"{at}:{line}",
                )
        return [f for f in found if f not in settled]

    def _own_option(self, usage) -> bool:
        """`parser.add_argument("--sglang-x")` in the consumer's own parser."""
        if self.files is None or usage.context != "python-argv":
            return False
        return defines_own_flag(self.files, usage.path, usage.line, usage.column)

    @staticmethod
    def _declares(owners: DestOwners | None, usage) -> bool:
        """Does the usage's file declare the name it reads as a field of its own?"""
        declared = owners.of(usage.written).declared if owners else []
        return any(path == usage.path for path, _ in declared)

    def _dest_still_parsed(self, usage, change) -> bool:
        """A Python read or write of a wrapped dest (`args.sglang_x`, `getattr(args,
        "sglang_x", ...)`) whose flag the new release still registers, refusing it only
        when passed: the attribute exists on the parsed namespace, nothing breaks here.
        Passing the flag (scripts, argv lists) is the break and is still reported."""
        if not (usage.prefix and usage.context == "python-attr"):
            return False
        if not isinstance(change, FlagRemoved) or not change.refused:
            return False
        dest = self.server_args.old.dests.get(usage.flag)
        return dest is not None and dest in self.server_args.new.dests.values()

    def _generated(self) -> tuple[str, int] | None:
        """Where the consumer registers sglang's own flags on a parser of its own
        (`ServerArgs.add_cli_args(parser)`): the dests read from it are sglang's."""
        wanted = f"{SERVER_ARGS}.add_cli_args"
        for usage in self.usages.usages:
            if isinstance(usage, CallUsage) and self.canonical(usage.symbol) == wanted:
                return usage.path, usage.line
        return None

    def _flags(self, surfaces: SurfaceUsages) -> list[Finding]:
        findings = []
        drift = self.server_args
        owners = self._owners(surfaces)
        generated = self._generated()
        reads = {}  # flag -> where the consumer's code reads its wrapped dest (not a field
        # of its own declared in that file, when there is such a place)
        for usage in sorted(surfaces.flags, key=lambda u: self._declares(owners, u)):
            if usage.prefix and usage.context == "python-attr":
                reads.setdefault(usage.flag, (usage.path, usage.line, usage.written))
        old_names = set(drift.old.fields) | set(drift.old.dests.values())
        for usage in surfaces.flags:
            owner = owners.of(usage.written) if owners else None
            change = drift.by_flag.get(usage.flag)
            how = f"`{usage.written}`" + (f" wraps sglang's `{usage.flag}`" if usage.prefix else "")
            moved = None
            keyword = not usage.prefix and _KWARG_KEY.fullmatch(usage.written)
            if usage.context in _CONFIG_FILES and keyword:
                # `cuda_graph_max_bs: 128` in a config: a ServerArgs keyword, not a flag
                # spelling (its alias `--cuda-graph-max-bs` is no concern of a keyword)
                change = None
                if usage.written in old_names:
                    how = f"`{usage.written}` (a ServerArgs keyword)"
                    at = _word(usage, usage.written)
                    findings += self._field(usage.written, _at(usage), how, at=at)
            elif usage.prefix and usage.context == "python-attr":
                moved = drift.by_dest.get(usage.flag.removeprefix("--").replace("-", "_"))
            if self._dest_still_parsed(usage, change):
                continue  # reads the dest of a refused flag: it still parses (default)
            if _settled(usage, owner):
                continue  # the consumer's own name, which it passes as another flag now
            if moved is not None:  # a dest read: the attribute a wrapping parser stores
                how = f"`{usage.written}` names sglang's dest `{moved.dest}`"
                new_name = usage.written[: len(usage.written) - len(moved.dest)] + moved.new_dest
                use = f"use `{new_name}` instead"
                fix = dest_fix(usage.path, usage.written, new_name, use, "safe", owner, generated)
                findings.append(finding_at(usage, moved, f"{how}: {moved.explain()}", fix))
            elif change is not None:
                fix = (
                    flag_fix(usage, change, drift, owner, generated)
                    if isinstance(change, FlagRemoved)
                    else Fix(f"use `{change.replacement}`")
                    if getattr(change, "replacement", None)
                    else None
                )
                if isinstance(change, ServerArgRedirected):
                    fix = Fix(f"set `{change.target}` instead")
                elif isinstance(change, FlagDeprecated):
                    read = reads.get(usage.flag) if usage.prefix else None
                    fix = deprecated_fix(usage, change, drift, owner, generated, read)
                if fix is not None and fix.edit is not None and self._own_option(usage):
                    fix = Fix(
                        f"{fix.description} where its value reaches sglang: `{usage.written}` "
                        "names an option of the consumer's own parser, which is not respelled"
                    )
                message, at = f"{how}: {change.explain()}", _word(usage, usage.written)
                findings.append(finding_at(usage, change, message, fix, at=at))
            elif usage.prefix and usage.context == "python-attr":
                name = usage.flag.removeprefix("--").replace("-", "_")
                at = _word(usage, usage.written)
                findings += self._field(name, _at(usage), how, passed=False, at=at)
            kind = PARSER_FLAGS.get(usage.flag)
            if kind and usage.value:
                findings += self._parser(kind, usage.value, _at(usage))
        return findings

    # ---- parsers, routes, env vars, meta_info, pins ---------------------------------

    def _parser(self, kind: str, name: str, place) -> list[Finding]:
        old = getattr(self.differ.old.surface("parsers"), kind)
        new = getattr(self.differ.new.surface("parsers"), kind)
        if name in old and name not in new:
            label = "tool-call" if kind == "tool_call" else "reasoning"
            change = ParserRemoved(name, old[name], None, label)
            message = f"{label} parser `{name}` is no longer registered"
            return [finding_at(place, change, message)]
        return []

    def http_findings(self, surfaces: SurfaceUsages) -> list[Finding]:
        if not surfaces.urls:
            return []
        old_routes = _route_table(self.differ.old.surface("routes"))
        new_routes = _route_table(self.differ.new.surface("routes"))
        old_structs = self.differ.old.surface("request_structs")
        new_structs = self.differ.new.surface("request_structs")
        findings = []
        for usage in surfaces.urls:
            key = route_key(usage.route)
            before, after = old_routes.get(key), new_routes.get(key)
            if before is None or all(r.stub for r in before):
                continue  # not an sglang route of the old server, or one that only erred
            old_where = f"{before[0].file}:{before[0].line}"
            if after is None or all(r.stub for r in after):
                findings += self._route_gone(usage, old_where, after, new_routes)
                continue
            new_where = f"{after[0].file}:{after[0].line}"
            methods = {m for r in after for m in r.methods}
            old_methods = {m for r in before for m in r.methods}
            if (
                usage.method
                and usage.method in old_methods
                and "*" not in methods
                and usage.method not in methods
            ):
                message = (
                    f"`{usage.method} {usage.route}`: the new server accepts "
                    f"{', '.join(sorted(methods))} only"
                )
                change = RouteMethodChanged(usage.route, old_where, new_where, (usage.method,))
                findings.append(finding_at(usage, change, message))
            struct = _struct_for(key)
            if usage.payload_keys and struct in old_structs and struct in new_structs:
                for name in usage.payload_keys:
                    if (
                        name in old_structs[struct].fields
                        and name not in new_structs[struct].fields
                    ):
                        message = (
                            f"sends `{name}` to `{usage.route}`: `{struct}.{name}` was removed"
                        )
                        change = RequestFieldRemoved(f"{struct}.{name}", old_where, new_where)
                        severity = "warning"
                        if _refuses_unknown(self.differ.new, new_structs[struct]):
                            message += ", and the struct refuses unknown keys"
                            severity = ""
                        else:  # the server parses the body, dropping keys it has no field for
                            message += ", so the new server ignores it"
                        findings.append(finding_at(usage, change, message, severity=severity))
        return findings

    @staticmethod
    def _route_gone(usage, old_where: str, stubs, new_routes) -> list[Finding]:
        """DA501 for a route the new server lacks, or only keeps as an error stub; none
        where a fallback loop tries another route the new server has first, info where
        it tries one after it (`routes.is_fallback`)."""
        if stubs:
            where = f"{stubs[0].file}:{stubs[0].line}"
            message = f"HTTP route `{usage.route}` only answers with an error in the new server"
        else:
            where, message = None, f"HTTP route `{usage.route}` is gone from the new sglang server"
        change = RouteRemoved(usage.route, old_where, where)
        tried = usage.alternatives
        cover = next(
            (r for r in tried if r != usage.route and _live(new_routes.get(route_key(r)))), None
        )
        if cover is None:
            return [finding_at(usage, change, message)]
        if tried.index(cover) < tried.index(usage.route):
            return []  # tried only when `cover` fails, which the new server has
        message += f" (covered: the loop falls back to `{cover}`, which the new server has)"
        return [finding_at(usage, change, message, severity="info")]

    def env_findings(self, surfaces: SurfaceUsages) -> list[Finding]:
        if not surfaces.envs:
            return []
        names = {usage.name for usage in surfaces.envs}
        old, new = env_tables(self.differ.old, self.differ.new, names)
        findings = []
        for usage in surfaces.envs:
            change = env_var_unused(usage.name, old, new)
            if change is not None:
                verb = "sets" if usage.kind == "set" else "reads"
                message = f"{verb} `{usage.name}`, which the new sglang no longer reads"
                fix, at = env_fix(usage.name, change.replacement), _word(usage, usage.name)
                # the consumer's own read still gets the value: nothing it does changes
                # (a place that sets the variable carries the warning)
                severity = "info" if usage.kind == "read" else ""
                findings.append(
                    finding_at(
                        usage, change, message + change.instead(), fix, at=at, severity=severity
                    )
                )
        return findings

    def meta_info_findings(self) -> list[Finding]:
        reads = [u for u in self.usages.usages if isinstance(u, MetaInfoUsage)]
        if not reads:
            return []
        old = self.differ.old.surface("meta_info_keys")
        new = self.differ.new.surface("meta_info_keys")
        return [
            finding_at(
                u,
                MetaInfoKeyRemoved(f"meta_info.{u.key}", old[u.key], None),
                f"reads meta_info[{u.key!r}], which the new server no longer writes",
            )
            for u in reads
            if u.key in old and u.key not in new
        ]

    def pin_findings(self, pins: list[Pin]) -> list[Finding]:
        """DA507: a pin no version of which the new wheel's Requires-Dist accepts, in the
        environment driftaudit.requirements assumes (markers false there do not apply)."""
        required: dict[str, list] = {}
        for requirement in self.differ.new.surface("requirements"):
            if not requirement.extra and requirement.specifier and applies(requirement.marker):
                required.setdefault(requirement.name, []).append(requirement)
        findings = []
        old_version = self.differ.old.tree.version
        new_tree = self.differ.new.tree
        others = sum(pin.name != "sglang" for pin in pins)
        if not required and others and not has_metadata(new_tree.root):
            print(
                f"driftaudit: warning: sglang {new_tree.spec} has no wheel METADATA "
                f"(Requires-Dist): the consumer's {others} dependency pins are not "
                "checked (DA507)",
                file=sys.stderr,
            )
        for pin in pins:
            if pin.name == "sglang" or not applies(pin.marker) or pin.with_sglang is False:
                continue  # (not installed with sglang: another file or extra)
            if pin.sglang and old_version and not _same_release(pin.sglang, old_version):
                continue  # that file pins another sglang (another stack, e.g. ROCm)
            wanted = required.get(pin.name, [])
            verdict = satisfiable(pin.specifier, *(r.specifier for r in wanted))
            if not wanted or verdict is not False:  # None: cannot be told (`===`, a URL)
                continue
            requires = ", ".join(f"`{r.name}{r.specifier}`" for r in wanted)
            message = (
                f"pins `{pin.name}{pin.specifier}`; sglang {self.differ.new.tree.version} "
                f"requires {requires}"
            )
            findings.append(
                _finding(
                    codes.REQUIREMENT_CONFLICT,
                    (pin.path, pin.line, pin.column),
                    pin.name,
                    message,
                    None,
                    "METADATA: Requires-Dist",
                )
            )
        return findings


def _is_attr(usage) -> bool:
    return usage.context == "python-attr"


def _route_table(routes) -> dict[str, list]:
    table: dict[str, list] = {}
    for route in routes:
        table.setdefault(route_key(route.path), []).append(route)
    return table


def _live(routes) -> bool:
    """Does the server answer the route (not only with an error stub)?"""
    return bool(routes) and not all(r.stub for r in routes)


def _struct_for(route: str) -> str:
    """/update_weights_from_tensor -> UpdateWeightsFromTensorReqInput."""
    last = route.rstrip("/").rsplit("/", 1)[-1]
    return "".join(part.capitalize() for part in last.split("_")) + "ReqInput"


def _same_release(a: str, b: str) -> bool:
    """0.5.9 and v0.5.9.0 are one release; text that is no version compares as text."""
    try:
        return parse_version(a) == parse_version(b)
    except DriftauditError:
        return a == b


def _settled(usage, owner) -> bool:
    """A consumer's own field or config attribute `sglang_x` (declared by it, issue 9:
    not sglang's name) whose every statement passes it under a flag other than
    `--sglang-x` (after `fix` respelled the literal): nothing of sglang's is left there."""
    if owner is None or not owner.declared or not owner.emitted:
        return False
    if not (usage.prefix and usage.context == "python-attr"):
        return False
    if all(path != usage.path for path, _ in owner.declared):
        return False  # read where the name is not declared: maybe sglang's dest there
    wrapped = "--" + usage.written.replace("_", "-")
    return all(flag.split("=")[0] not in (wrapped, usage.flag) for _, _, flag in owner.emitted)
