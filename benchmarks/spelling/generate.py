"""Write the corpus: one consumer file per (change, spelling), each with `# BREAK` on the
line the new release breaks, under one consumer package (re-exports import through it)."""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path

try:
    from . import spellings
    from .mine import MEMBER_KINDS, NAME_KINDS, Target
except ImportError:  # run as a script
    import spellings  # type: ignore[no-redef]
    from mine import MEMBER_KINDS, NAME_KINDS, Target  # type: ignore[no-redef]

PKG = "corpus_consumer"


@dataclass
class Case:
    target: Target
    spelling: str
    file: str  # relative to the corpus root: where the break is
    line: int  # its line (1-based)


def templates(target: Target) -> dict[str, str]:
    if target.kind in NAME_KINDS:
        return spellings.NAME
    if target.kind in MEMBER_KINDS:
        return spellings.MEMBER
    if len(target.qualname) == 1:
        return spellings.FUNCTION
    if target.qualname[1] == "__init__":
        return spellings.CONSTRUCTOR
    return spellings.METHOD


def _arguments(target: Target) -> list[str]:
    """The keywords of a call valid against the old signature that reaches the change:
    the old required parameters, and the removed or renamed one."""
    names = list(target.params)
    if target.kind != "required-parameter-added" and target.param not in names:
        names.append(target.param)
    return [n for n in names if not keyword.iskeyword(n)]


def _fill(template: str, target: Target, ident: str) -> str:
    names = _arguments(target)
    values = {
        "M": target.module,
        "N": target.qualname[0],
        "C": target.qualname[0],
        "m": target.qualname[-1],
        "ARGS": ", ".join(f"{n}=None" for n in names),
        "KW": "{" + ", ".join(f'"{n}": None' for n in names) + "}",
        "PKG": PKG,
        "ID": ident,
    }
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def write(targets: list[Target], root: Path) -> list[Case]:
    """The corpus under `root/PKG/`; the cases, one per (target, spelling)."""
    package = root / PKG
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    cases = []
    for index, target in enumerate(targets):
        for spelling, template in templates(target).items():
            ident = f"{index:03d}_{spelling}"
            text = _fill(template, target, ident)
            main, _, extra = text.partition(f"---- compat_{ident}.py ----\n")
            files = {f"case_{ident}.py": main}
            if extra:
                files[f"compat_{ident}.py"] = extra
            for name, body in files.items():
                (package / name).write_text(body)
                for number, line in enumerate(body.splitlines(), 1):
                    if line.endswith("# BREAK"):
                        cases.append(Case(target, spelling, f"{PKG}/{name}", number))
    return cases
