"""YAML (PyYAML nodes, a line scanner for templates) and TOML (tomllib, keys located by
line): what the parsers add over a line scanner, and where they fall back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from driftaudit.usage.surface_uses import SurfaceUsages, scan_surfaces

from .conftest import write_tree


def scan(tmp_path: Path, files: dict[str, str]) -> SurfaceUsages:
    return scan_surfaces(write_tree(tmp_path, files))


def flags(found: SurfaceUsages) -> list[tuple]:
    return [(f.line, f.column, f.flag, f.value) for f in found.flags]


def test_yaml_flow_sequence_over_several_lines(tmp_path):
    text = """\
server:
  command: [python3, -m, sglang.launch_server,
            --tp-size, "2",
            --port, "30000"]
"""
    found = scan(tmp_path, {"deploy.yaml": text})
    assert flags(found) == [(3, 13, "--tp-size", "2"), (4, 13, "--port", "30000")]


def test_yaml_positions_count_characters_not_bytes(tmp_path):
    text = 'note: "é€😀"\nsglang:\n  tp_size: 2\n  ménage: x\nsglang_dp_size: 4\n'
    found = scan(tmp_path, {"a.yaml": text, "wrap.sh": "x --sglang-tp 1\n"})
    assert [f for f in flags(found) if f[2] != "--tp"] == [
        (3, 3, "--tp-size", "2"),
        (5, 1, "--dp-size", "4"),
    ]


def test_templated_yaml_falls_back_to_the_line_scanner(tmp_path):
    text = """\
{{- if .Values.server }}
server_args:
  tp_size: "{{ .Values.tp }}"
  dtype: bfloat16
{{- end }}
"""
    found = scan(tmp_path, {"chart/values.yaml": text})
    assert [(line, flag) for line, _, flag, _ in flags(found)] == [
        (3, "--tp-size"),
        (4, "--dtype"),
    ]


def test_yaml_aliases_are_walked_once(tmp_path):
    lines = ['a0: &a0 {sglang_tp_size: 1, SGLANG_X: "1"}']
    for i in range(1, 21):  # 2**20 paths through the aliases, one node each
        lines.append(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]")
    started = time.perf_counter()
    found = scan(tmp_path, {"bomb.yaml": "\n".join(lines) + "\n"})
    assert time.perf_counter() - started < 30  # 2**20 walks would take hours: a bound, not a target
    assert [(e.line, e.name) for e in found.envs] == [(1, "SGLANG_X")]


def test_toml_multi_line_arrays_and_strings(tmp_path):
    text = '''\
[tool.launcher.sglang]
extra = [
    "--tp-size", "2",
    "--enable-dp-attention",
]
[run]
command = """
python -m sglang.launch_server --dp-size 2
"""
'''
    found = scan(tmp_path, {"launch.toml": text})
    assert flags(found) == [
        (3, 6, "--tp-size", "2"),
        (4, 6, "--enable-dp-attention", None),
        (8, 32, "--dp-size", "2"),
    ]


def test_toml_arrays_of_tables_keep_each_tables_lines(tmp_path):
    text = """\
[[jobs]]
name = "a"
env = { SGLANG_A = "1" }

[[jobs]]
name = "b"
env = { SGLANG_B = "1" }
"""
    found = scan(tmp_path, {"jobs.toml": text})
    assert [(e.line, e.column, e.name) for e in found.envs] == [
        (3, 9, "SGLANG_A"),
        (7, 9, "SGLANG_B"),
    ]


def test_toml_that_does_not_parse_is_left_alone(tmp_path):
    found = scan(tmp_path, {"bad.toml": "[sglang\ntp_size = = 2\n", "ok.sh": "x --sglang-tp 1\n"})
    assert [f.path for f in found.flags] == ["ok.sh"]


@pytest.mark.parametrize(
    "text",
    ["model: x\n", "SGLang: 1\n", "cmd: Launch_Server\n", "Server-Args: {}\n", "CURL -X", "ſgl"],
)
def test_a_config_file_is_read_when_it_names_sglang_in_any_case(text):
    import re

    from driftaudit.usage.surface_uses.scan import _names_sglang

    expected = re.search(r"sgl|server[_-]args|launch_server|curl", text, re.I) is not None
    assert _names_sglang(text) == expected
