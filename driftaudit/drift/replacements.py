"""What replaces a removed ServerArgs setting, and what a deprecated one now does.

A removed field or flag is matched to its replacement by evidence, strongest first:

1. the old release already deprecated it in favour of a flag the new release has
   (`new_flag=` of its registration, or a `--flag` its deprecation help names);
2. the new release registers a deprecated spelling of the same setting (the same words
   after `enable`/`enforce`/`use`, same polarity) that redirects to another field
   (`--enforce-piecewise-cuda-graph` -> `cuda_graph_backend_prefill = TC_PIECEWISE`);
3. a field added in the new release whose name shares most words with the old one and
   whose help text reads alike (`enable_gdn_replayssm_spec` -> `enable_linear_replayssm_spec`).

A setting the new release still has but maps onto another one (a deprecated flag with
a `dest=`, or `__post_init__` code that warns and sets another field from it) is a
redirect: `ServerArgRedirected` says what it sets now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.changes import Change
from driftaudit.snapshot.surfaces.serverarg_redirects import Redirect
from driftaudit.snapshot.surfaces.serverargs import ServerArgField, ServerArgsModel

_ON = {"enable", "enforce", "use", "with"}
_OFF = {"disable", "no", "skip", "without"}
_FLAG = re.compile(r"--[a-z0-9][\w-]*")
_MIN_WORDS = 0.5  # share of the old name's words the new name must have
_MIN_HELP = 0.4  # share of the help texts' words (Jaccard)


@dataclass
class Suggestion:
    field: str  # the new field to set
    value: str | None  # the value to give it, when the evidence says
    flag: str | None  # the command-line spelling, e.g. "--cuda-graph-backend-prefill=tc_piecewise"
    evidence: str
    alias: bool = False  # sglang's own deprecation maps the old setting to this one 1:1

    @property
    def setting(self) -> str:
        return f"{self.field} = {self.value}" if self.value else self.field


@dataclass
class ServerArgRedirected(Change):
    setting: str = ""  # the field or flag the consumer sets
    target: str = ""  # what it now sets: "y = True"
    deprecated_by: str | None = None  # what the deprecation says to use, if it says

    code = codes.SERVER_ARG_REDIRECTED

    def explain(self) -> str:
        text = f"`{self.setting}` is deprecated: it now only sets `{self.target}`"
        return text + (f" (use `{self.deprecated_by}`)" if self.deprecated_by else "")


def _words(name: str) -> tuple[str, list[str]]:
    """`--enable-piecewise-cuda-graph` -> ("on", ["piecewise", "cuda", "graph"])."""
    words = [w for w in re.split(r"[-_]+", name.lstrip("-").lower()) if w]
    polarity = ""
    if words and words[0] in _ON | _OFF:
        polarity = "on" if words[0] in _ON else "off"
        words = words[1:]
    return polarity, words


def _where(item) -> str:
    return f"{item.file}:{item.line}"


def _named_setting(text: str | None) -> tuple[str, str | None] | None:
    """The flag a deprecation names and the value it gives, if any: `Use --y=disabled`
    -> ("--y", "disabled"); `Alias for --y recover.` -> ("--y", "recover");
    `Use --cp-strategy instead` -> ("--cp-strategy", None)."""
    found = _FLAG.search(text or "")
    if not found:
        return None
    rest = text[found.end() :]
    value = re.match(r"=([\w.-]+)", rest)
    if value is None and re.search(r"alias\s+(?:of|for)\s*$", text[: found.start()], re.I):
        value = re.match(r"\s+([a-z][\w-]*)\b(?!-)", rest)
    return found.group(0), value.group(1) if value else None


class Replacements:
    def __init__(
        self,
        old: ServerArgsModel,
        new: ServerArgsModel,
        old_redirects: list[Redirect] | None = None,
        new_redirects: list[Redirect] | None = None,
    ):
        self.old, self.new = old, new
        self.old_redirects = old_redirects or []
        self.new_redirects = new_redirects or []
        self.added = [f for name, f in new.fields.items() if name not in old.fields]

    # ---- removed settings ----------------------------------------------------------

    def suggest(self, field: ServerArgField) -> Suggestion | None:
        spellings = [s for s in [field.flag, *field.aliases] if s]
        return (
            self._already_deprecated(field, spellings)
            or self._redirected_spelling(field, spellings)
            or self._similar_field(field)
        )

    def _already_deprecated(self, field: ServerArgField, spellings) -> Suggestion | None:
        notes = [
            (r.new_flag, f" ({_where(r)})")
            for r in self.old_redirects
            if r.new_flag and (r.source in spellings or r.source == field.name)
        ]
        notes += [
            (self.old.deprecated_flags[s], "") for s in spellings if s in self.old.deprecated_flags
        ]
        for text, where in notes:
            found = _named_setting(text)
            target = self.new.flags.get(found[0]) if found else None
            if target and target != field.name:
                flag, value = found
                evidence = f"the old release already deprecated it: `{text}`{where}"
                shown = repr(value) if value else None
                spelled = flag + (f"={value}" if value else "")
                return Suggestion(target, shown, spelled, evidence, alias=True)
        return None

    def flag_replacement(self, flag: str) -> tuple[str, str] | None:
        """A removed flag the old release registered as a deprecated alias with a
        `new_flag=` the new release understands: (that spelling, evidence)."""
        for redirect in self.old_redirects:
            found = _named_setting(redirect.new_flag) if redirect.source == flag else None
            if found and found[0] in self.new.flags:
                evidence = f"a deprecated alias of it in the old release ({_where(redirect)})"
                return redirect.new_flag, evidence
        return None

    def _redirected_spelling(self, field: ServerArgField, spellings) -> Suggestion | None:
        for spelling in spellings:
            polarity, words = _words(spelling)
            for redirect in self.new_redirects:
                if not redirect.source.startswith("--") or redirect.target == field.name:
                    continue
                if _words(redirect.source) == (polarity, words) and redirect.source != spelling:
                    evidence = (
                        f"the new release keeps `{redirect.source}` as a deprecated spelling "
                        f"that sets `{redirect.setting}` ({_where(redirect)})"
                    )
                    return Suggestion(
                        redirect.target, redirect.value, redirect.new_flag, evidence, alias=True
                    )
        return None

    def _similar_field(self, field: ServerArgField) -> Suggestion | None:
        polarity, words = _words(field.name)
        if not words:
            return None
        scored = []
        for candidate in self.added:
            other_polarity, other = _words(candidate.name)
            if polarity and other_polarity and polarity != other_polarity:
                continue
            shared = len(set(words) & set(other)) / len(set(words) | set(other))
            help_ratio = _help_ratio(field.help, candidate.help)
            if shared >= _MIN_WORDS and help_ratio >= _MIN_HELP:
                scored.append((shared + help_ratio, shared, help_ratio, candidate))
        if not scored:
            return None
        scored.sort(key=lambda s: -s[0])
        if len(scored) > 1 and scored[0][0] - scored[1][0] < 0.1:
            return None  # two candidates alike: no evidence which one
        _, shared, help_ratio, best = scored[0]
        evidence = (
            f"`{best.name}` is new ({_where(best)}), shares {shared:.0%} of the name's words "
            f"and its help reads alike ({help_ratio:.0%}); check the value means the same"
        )
        return Suggestion(best.name, None, best.flag, evidence)

    # ---- kept settings that now redirect ---------------------------------------------

    def redirect(self, setting: str, field: str) -> Redirect | None:
        """The new redirect of a field (or one of its flags) onto another field, when the
        old release did not redirect it the same way."""
        before = {(r.source, r.target) for r in self.old_redirects}
        for redirect in self.new_redirects:
            if redirect.source != setting or redirect.target == field:
                continue
            if (redirect.source, redirect.target) not in before:
                return redirect
        return None

    def redirected(
        self, symbol: str, setting: str, field: str, where
    ) -> ServerArgRedirected | None:
        redirect = self.redirect(setting, field)
        if redirect is None:
            return None
        return ServerArgRedirected(
            symbol, where, _where(redirect), setting, redirect.setting, redirect.new_flag
        )


def _help_ratio(old: str | None, new: str | None) -> float:
    """Shared words of two help texts (Jaccard; difflib's character ratio rates long
    rewordings of one feature too low)."""
    a, b = _help_words(old), _help_words(new)
    return len(a & b) / len(a | b) if a and b else 0.0


def _help_words(text: str | None) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9]+", (text or "").lower()) if len(w) > 2}
