"""DA004: the consumer's sglang pins that cannot all hold (`codes.SGLANG_PINS_DISAGREE`).

The reference is the first pin the audited old release satisfies, exact pins first: the
pin --old was read from, when it was (`pins.sglang_pin` takes the first exact one). Each
pin no version of which also satisfies the reference is a place of the one fact; when
no pin holds the audited release (an --old given by hand), each pin that disagrees with
another is. Two specifiers agree when one version satisfies both
(`requirements.satisfiable`): `>=0.5.6` and `==0.5.6` agree, extras do not count
(`sglang[all]==0.5.6` is `sglang==0.5.6`), a marker false in the assumed environment
drops its pin (as DA507).

Severity by consequence, per place: a pin installed together with the one it disagrees
with (`pins.installed_together`: one requirements file or `-r` component, the project's
main dependencies and an extra with them; not a requirements file or Dockerfile of its
own beside the project's metadata) is an error: pip cannot resolve both, or the
later install replaces the other, and the audit may be of a release that never runs. A
pin of a separate environment (another Dockerfile, another extra, a requirements file
of its own) is a warning: a second supported release is legitimate, but this audit
covers only the reference's, and the other needs its own run (`--old`) or a supported
range: the message offers the `supports` value from the oldest to the newest release
the exact pins name (a `supports` run drops the warnings about pins its range covers,
`supported.run_supported`).
"""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from driftaudit import codes
from driftaudit.findings import Finding, Fix
from driftaudit.requirements import applies, satisfiable
from driftaudit.usage.pins import PROJECT_FILES, Pin, installed_together, pin_version


def pin_conflict_findings(pins: list[Pin], old_version: str | None) -> list[Finding]:
    """One fact: the sglang pins that disagree with the audited one (see the module)."""
    sglang = [p for p in pins if p.name == "sglang" and applies(p.marker)]
    if len(sglang) < 2:
        return []
    reference = _reference(sglang, old_version)
    findings = []
    for pin in sglang:
        others = [reference] if reference is not None else sglang
        against = [o for o in others if o is not pin and _disagree(pin, o)]
        if against:
            findings.append(_finding(pin, against, old_version, reference is not None))
    return findings


def _disagree(a: Pin, b: Pin) -> bool:
    return satisfiable(a.specifier, b.specifier) is False  # None: cannot be told


def _reference(sglang: list[Pin], old_version: str | None) -> Pin | None:
    """The first pin (exact ones first) the audited release satisfies; with no version
    known, the first exact pin (what --old defaults to)."""
    ordered = sorted(sglang, key=lambda p: p.exact is None)  # stable: file order kept
    try:
        audited = Version(old_version) if old_version else None
    except InvalidVersion:
        audited = None
    if audited is None:
        return next((p for p in ordered if p.exact), None)
    for pin in ordered:
        try:
            if SpecifierSet(pin.specifier).contains(audited, prereleases=True):
                return pin
        except InvalidSpecifier:
            continue
    return None


def _one_install(a: Pin, b: Pin) -> bool:
    """Installed together for certain: `installed_together`, less its assumption that the
    project's main dependencies go everywhere (right for DA507, which asks what may meet
    sglang; not to call a conflict an error). A requirements file or Dockerfile of its
    own beside the project's metadata (`requirements-rocm.txt`) is another way to install
    it, not the same install."""
    project = [p.path in PROJECT_FILES for p in (a, b)]
    return installed_together(a, b) and (project[0] == project[1])


def _finding(pin: Pin, against: list[Pin], old_version: str | None, audited: bool) -> Finding:
    together = [o for o in against if _one_install(pin, o)]
    shown = together or against
    others = ", ".join(f"`sglang{o.specifier}` at {o.where}{_extra(o)}" for o in shown)
    if audited:  # one pin: the reference
        exact = shown[0].exact is not None
        others = f"the audited {others}" if exact else f"{others} (audited: {old_version})"
    if together:
        message = f"pins `sglang{pin.specifier}`{_extra(pin)}, installed together with {others}"
        message += f" ({_why_together(pin, together[0])}): both cannot hold"
        fix = "Make the pins agree: one sglang release per environment."
    else:
        message = f"pins `sglang{pin.specifier}`{_extra(pin)} for another environment than {others}"
        if audited:
            message += ": this audit does not cover it"
        again = f"`--old {pin_version(pin)}`" if pin.exact else "an `--old` it allows"
        fix = f"Audit that release too ({again}), or make the pins agree."
        supports = _supported_range([pin, *shown])
        if supports:
            message += f" (the range both run: `supports = {supports}` in [tool.driftaudit])"
            fix = f"Audit that release too ({again}; every release both run: `supports`), or "
            fix += "make the pins agree."
    return Finding(
        codes.SGLANG_PINS_DISAGREE,
        pin.path,
        pin.line,
        pin.column,
        "sglang",
        message,
        fix=Fix(fix),
        severity="error" if together else "warning",
    )


def _supported_range(pins: list[Pin]) -> str | None:
    """The `supports` value from the oldest to the newest release the exact pins name:
    `">=0.5.22,<=0.5.23"`; None with fewer than two (not the audited release: an --old
    given by hand may be no environment's)."""
    found = {}
    for text in [pin_version(p) for p in pins if p.exact]:
        try:
            found[Version(text)] = text
        except InvalidVersion:
            continue
    if len(found) < 2:
        return None
    return f'">={found[min(found)]},<={found[max(found)]}"'


def _why_together(a: Pin, b: Pin) -> str:
    if all(p.path in PROJECT_FILES for p in (a, b)) and a.path != b.path:
        return "both are the project's metadata"
    if a.path == b.path:
        return "one file" if a.group == b.group else "an extra installs with the dependencies"
    if any(p.path.rpartition("/")[2].startswith("Dockerfile") for p in (a, b)):
        return "the image installs the requirements file"
    return "one `-r` include chain"


def _extra(pin: Pin) -> str:
    return f" (extra `{pin.group}`)" if pin.group else ""
