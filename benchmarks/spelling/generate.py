"""Write the corpus: one consumer file per (change, spelling), each with `# BREAK` on the
line the new release breaks, under one consumer package (re-exports import through it)."""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path

try:
    from . import spellings
    from .mine import READ_KIND, Target
except ImportError:  # run as a script
    import spellings  # type: ignore[no-redef]
    from mine import READ_KIND, Target  # type: ignore[no-redef]

PKG = "corpus_consumer"


@dataclass
class Case:
    target: Target
    spelling: str
    file: str  # relative to the corpus root: where the break is
    line: int  # its line (1-based)


GROUPS = {
    "name": spellings.NAME,
    "member": spellings.MEMBER,
    "function": spellings.FUNCTION,
    "constructor": spellings.CONSTRUCTOR,
    "method": spellings.METHOD,
    "dataclass": spellings.DATACLASS,
    "stand_in": spellings.STAND_IN,
}


def templates(target: Target) -> dict[str, str]:
    """The spellings that break `target` on the new release."""
    if target.kind == READ_KIND and target.stand_in_group == "installed":
        return spellings.INSTALLED
    if target.kind == READ_KIND and target.stand_in_group == "method_arg":
        return spellings.METHOD_ARG
    return {s: t for s, t in GROUPS[target.group].items() if _applies(target, s)}


def near_misses(target: Target) -> dict[str, str]:
    """Code close to the spellings that does not break (a finding there is false)."""
    if target.kind == READ_KIND and target.stand_in_group == "installed":
        return {}
    if target.kind == READ_KIND and target.stand_in_group == "method_arg":
        return spellings.NEAR["method_arg"]
    return spellings.NEAR.get(target.group, {})


def _applies(target: Target, spelling: str) -> bool:
    if spelling not in spellings.OVERRIDES:
        return True
    # an override mirroring the old parameters breaks on a removed one only when it
    # was required (sglang stops passing it)
    return target.kind != "keyword-removed" or target.param in target.params


def _arguments(target: Target) -> list[str]:
    """The keywords of a call valid against the old signature that reaches the change:
    the old required parameters, and the removed or renamed one."""
    names = list(target.params)
    if target.kind != "required-parameter-added" and target.param not in names:
        names.append(target.param)
    return [n for n in names if not keyword.iskeyword(n)]


def _parameters(target: Target) -> str:
    """The old parameter list, required ones bare and the rest defaulting to None."""
    names = [n for n in target.old_params if not keyword.iskeyword(n)]
    return ", ".join(n if n in target.params else f"{n}=None" for n in names)


def _stand_in_values(target: Target, spelling: str) -> dict[str, str]:
    """The placeholders of a stand-in template (see spellings.STAND_IN)."""
    read = [n for n in target.read if not keyword.iskeyword(n)]
    group = target.stand_in_group
    callee = {"function": target.qualname[0], "constructor": target.qualname[0]}.get(
        group, ".".join(target.qualname)
    )
    attrs = ", ".join(f"{n}=None" for n in read)
    values = {
        "IMPORT": target.qualname[0],
        "CALLEE": callee,
        "ATTRS": attrs,
        "ATTRS_ALL": ", ".join(f"{n}=None" for n in [*read, target.member, *target.also_new]),
        "SETS": "".join(f"    stand_in.{n} = None\n" for n in read),
        "SELF_SETS": "".join(f"        self.{n} = None\n" for n in read) or "        pass\n",
        "H": target.holder,
        "m": target.qualname[-1],
        "OTHERS": ", ".join(
            f"{n}=None" for n in target.params if n != target.param and not keyword.iskeyword(n)
        ),
    }
    stand_in = spellings.STAND_IN_EXPR.get(spelling, "None")
    for key in ("ATTRS", "ATTRS_ALL"):
        stand_in = stand_in.replace("{" + key + "}", values[key])
    others = [f"{n}=None" for n in target.params if n != target.param and not keyword.iskeyword(n)]
    if group == "method":
        values["SARGS"] = ", ".join([stand_in, *others])
    else:
        values["SARGS"] = ", ".join([*others, f"{target.param}={stand_in}"])
    return values


def _fill(template: str, target: Target, ident: str, spelling: str = "") -> str:
    if target.kind == READ_KIND:
        values = {"M": target.module, **_stand_in_values(target, spelling)}
        for key, value in values.items():
            template = template.replace("{" + key + "}", value)
        return template
    names = _arguments(target)
    values = {
        "M": target.module,
        "N": target.qualname[0],
        "C": target.qualname[0],
        "m": target.qualname[-1],
        "ARGS": ", ".join(f"{n}=None" for n in names),
        "KW": "{" + ", ".join(f'"{n}": None' for n in names) + "}",
        "PARAMS": _parameters(target),
        "PKG": PKG,
        "ID": ident,
    }
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def write(targets: list[Target], root: Path) -> list[Case]:
    """The corpus under `root/PKG/`; the cases, one per (target, spelling). The near
    misses are written beside them, as `near_<index>_<spelling>.py` (see `near_files`)."""
    package = root / PKG
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    cases = []
    for index, target in enumerate(targets):
        for spelling, template in templates(target).items():
            ident = f"{index:03d}_{spelling}"
            text = _fill(template, target, ident, spelling)
            main, _, extra = text.partition(f"---- compat_{ident}.py ----\n")
            files = {f"case_{ident}.py": main}
            if extra:
                files[f"compat_{ident}.py"] = extra
            for name, body in files.items():
                (package / name).write_text(body)
                for number, line in enumerate(body.splitlines(), 1):
                    if line.endswith("# BREAK"):
                        cases.append(Case(target, spelling, f"{PKG}/{name}", number))
        for spelling, template in near_misses(target).items():
            ident = f"{index:03d}_{spelling}"
            text = _fill(template, target, ident, spelling)
            main, _, extra = text.partition(f"---- near_{ident}_own.py ----\n")
            (package / f"near_{ident}.py").write_text(main)
            if extra:  # a second file (a consumer module it imports)
                (package / f"near_{ident}_own.py").write_text(extra)
    return cases


def near_files(targets: list[Target], root: Path) -> dict[str, Target]:
    """The near-miss files `write` wrote, relative to `root`, with their target."""
    return {
        f"{PKG}/{path.name}": target
        for index, target in enumerate(targets)
        for spelling in near_misses(target)
        for path in (root / PKG).glob(f"near_{index:03d}_{spelling}*.py")
    }
