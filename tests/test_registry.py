"""The registry of codes: every change kind carries a documented code, every drift code
has a change kind, and `driftaudit rule` shows them all."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import driftaudit.drift
from driftaudit import codes
from driftaudit.cli import main
from driftaudit.drift.changes import Change, MemberRemoved, ParameterMoved, SymbolMoved
from driftaudit.options import parser as _parser


def _change_classes() -> list[type[Change]]:
    for module in pkgutil.iter_modules(driftaudit.drift.__path__):
        importlib.import_module(f"driftaudit.drift.{module.name}")
    found, todo = [], [Change]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls is not Change:
            found.append(cls)
    return found


CHANGE_CLASSES = _change_classes()


def test_change_classes_are_found():
    names = {cls.__name__ for cls in CHANGE_CLASSES}
    assert {"ModuleRemoved", "ServerArgFieldRemoved", "RouteRemoved", "RequirementChanged"} <= names


@pytest.mark.parametrize("cls", CHANGE_CLASSES, ids=lambda cls: cls.__name__)
def test_every_change_class_carries_a_documented_drift_code(cls):
    code = cls.__dict__.get("code") or cls.code
    assert isinstance(code, codes.Code)
    assert codes.CODES[code.code] is code
    assert code.origin == "drift", f"{cls.__name__} carries {code.code}, a {code.origin} code"


def test_every_drift_code_has_a_change_class():
    carried = {cls.code.code for cls in CHANGE_CLASSES}
    drift = {c.code for c in codes.CODES.values() if c.origin == "drift"}
    assert drift - carried == set()


def test_consumer_side_variants_map_drift_codes():
    variants = [c for c in codes.CODES.values() if c.origin == "usage"]
    assert {c.code for c in variants} == {"DA104", "DA304", "DA305"}
    for variant in variants:
        assert variant.use in ("patch", "override") and variant.variant_of
        for code in variant.variant_of:
            assert codes.CODES[code].origin == "drift"
            assert codes.variant(codes.CODES[code], variant.use) is variant
    # one variant per (use, drift code): the mapping is a function
    pairs = [(v.use, code) for v in variants for code in v.variant_of]
    assert len(pairs) == len(set(pairs))


def test_variant_keeps_the_code_when_the_use_does_not_change_it():
    assert codes.variant(MemberRemoved.code, None) is MemberRemoved.code
    assert codes.variant(MemberRemoved.code, "override").code == "DA304"
    assert codes.variant(ParameterMoved.code, "override").code == "DA305"
    assert codes.variant(SymbolMoved.code, "patch").code == "DA104"
    assert codes.variant(codes.DEFAULT_CHANGED, "override") is codes.DEFAULT_CHANGED


def test_every_code_is_documented():
    kinds = set()
    for key, code in codes.CODES.items():
        assert key == code.code and re.fullmatch(r"DA\d{3}", key)
        assert code.severity in codes.SEVERITIES and code.origin in codes.ORIGINS
        assert all((code.kind, code.summary, code.why, code.example, code.fix, code.fix_safety))
        assert code.kind not in kinds
        kinds.add(code.kind)
        assert code.origin != "usage" or code.variant_of


def test_rule_lists_every_code(capsys):
    assert main(["rule"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines]
    assert listed == sorted(codes.CODES)
    shown = {line.split()[0]: line.split()[3] for line in lines}
    assert shown["DA102"] == "safe" and shown["DA201"] == "unsafe" and shown["DA901"] == "unsafe"


def test_fix_safety_says_safe_or_unsafe_for_every_code_with_a_codemod():
    """The applicability the fixer, the report and `rule` use comes from here."""
    applicability = {c.code: c.applicability for c in codes.CODES.values()}
    assert {k for k, v in applicability.items() if v} == {
        "DA102",
        "DA201",
        "DA202",
        "DA302",
        "DA303",
        "DA401",
        "DA404",
        "DA405",
        "DA407",
        "DA504",
        "DA901",
    }
    assert {v for v in applicability.values()} == {"safe", "unsafe", None}
    with pytest.raises(ValueError, match="safe:"):
        codes.Code("DA999", "x", "error", "s", "w", "e", "f", "maybe")


def test_rule_explains_a_code_with_its_fix_safety(capsys):
    assert main(["rule", "da102"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("DA102 (import-moved) — severity error")
    assert "Fix safety\n  safe: the same name, with a compatible signature" in out
    assert main(["rule", "DA201"]) == 0
    assert "Fix safety\n  unsafe: " in capsys.readouterr().out
    assert main(["rule", "DA304"]) == 0
    assert "Reported instead of DA301 where the consumer overrides" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["compare", "check", "fix"])
def test_packs_option_and_its_hidden_deprecated_alias(command, capsys):
    args = _parser().parse_args([command, "--packs", "a", "--rules", "b", "--new", "x"])
    assert [str(p) for p in args.packs] == ["a", "b"]
    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--help"])
    shown = capsys.readouterr().out
    assert "--packs DIR" in shown and "--rules" not in shown


def test_readme_table_lists_every_code():
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (DA\d{3}) \| ([a-z-]+) \| (\w+) \|", readme, re.M)
    assert rows == [
        (c.code, c.kind, c.severity) for c in sorted(codes.CODES.values(), key=lambda c: c.code)
    ]


def test_surface_changes_are_one_class_per_kind(tmp_path):
    from driftaudit.drift.surface_changes import surface_changes
    from driftaudit.pipeline import open_snapshots

    root = Path(__file__).parent / "fixtures" / "themes" / "surfaces"
    old, new = open_snapshots(str(root / "old"), str(root / "new"), tmp_path)
    found = {
        (type(c).__name__, c.code.code, c.symbol): c.explain() for c in surface_changes(old, new)
    }
    assert found == {
        (
            "RouteMethodChanged",
            "DA502",
            "/flush_cache",
        ): "HTTP route /flush_cache no longer accepts GET",
        ("RouteRemoved", "DA501", "/update_weights_from_distributed"): (
            "HTTP route /update_weights_from_distributed was removed"
        ),
        ("RequestFieldRemoved", "DA503", "GenerateReqInput.stream_interval"): (
            "request struct field GenerateReqInput.stream_interval was removed"
        ),
        ("MetaInfoKeyRemoved", "DA506", "meta_info.spec_verify_ct"): (
            "meta_info key 'spec_verify_ct' is no longer written"
        ),
        ("EnvVarUnused", "DA504", "SGLANG_USE_OLD_PATH"): (
            "environment variable SGLANG_USE_OLD_PATH is no longer read"
        ),
        ("ParserRemoved", "DA505", "qwen25"): "tool-call parser 'qwen25' is no longer registered",
        ("RequirementChanged", "DA508", "torch"): (
            "requirement torch: changed (==2.9.1 -> ==2.11.0)"
        ),
    }


def test_a_fix_may_be_less_safe_than_its_code():
    """A rename sglang makes is safe (the code's word); one found by similarity says
    unsafe on the fix itself, and the fixer holds it back without --unsafe-fixes."""
    from driftaudit.findings import Finding, Fix

    edit = {"kind": "replace-text", "old": "--a", "new": "--b"}
    code = codes.CODES["DA404"]
    safe = Finding(code, "x.sh", 1, 1, "s", "m", fix=Fix("use `--b`", edit))
    unsafe = Finding(code, "x.sh", 1, 1, "s", "m", fix=Fix("use `--b`", edit, "unsafe"))
    assert (safe.fix_applicability, unsafe.fix_applicability) == ("safe", "unsafe")
    assert Finding(code, "x.sh", 1, 1, "s", "m", fix=Fix("use `--b`")).fix_applicability is None
