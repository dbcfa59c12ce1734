"""Tool-call and reasoning parser names, on hand-made trees, then real releases."""

from __future__ import annotations

import pytest

from driftaudit.snapshot.surfaces.parsers import Parsers, extract_parsers

from .conftest import write_tree

FUNCTION_CALL_PARSER = """\
from typing import Dict, Type


class FunctionCallParser:
    ToolCallParserEnum: Dict[str, Type[BaseFormatDetector]] = {
        "llama3": Llama32Detector,
        "qwen25": Qwen25Detector,
        "deepseekv3": DeepSeekV3Detector,
        **EXTRA_DETECTORS,
    }

    def __init__(self, tools, tool_call_parser):
        detector_class = self.ToolCallParserEnum.get(tool_call_parser)
        other = {"not_a_parser": 1}


FunctionCallParser.ToolCallParserEnum["late"] = LateDetector
FunctionCallParser.ToolCallParserEnum.update({"plugin": PluginDetector})
"""

REASONING_PARSER = """\
class ReasoningParser:
    DetectorMap = {
        "deepseek-r1": DeepSeekR1Detector,
        "qwen3": Qwen3Detector,
    }
"""

NAMES = """\
TOOL_CALL_PARSER_NAMES = ["llama3", "qwen25", "deepseekv3", "only_listed"]
"""

REASONING_NAMES = """\
REASONING_PARSER_NAMES = [
    "deepseek-r1",
    "qwen3",
    "listed-reasoner",
]
"""


def _tree(tmp_path, with_lists=True):
    files = {
        "sglang/__init__.py": "",
        "sglang/srt/function_call/function_call_parser.py": FUNCTION_CALL_PARSER,
        "sglang/srt/parser/reasoning_parser.py": REASONING_PARSER,
        # a consumer of the registry, not a registration
        "sglang/srt/server_args.py": "choices = list(ReasoningParser.DetectorMap.keys())\n",
        "sglang/srt/function_call/test_parsers.py": 'ToolCallParserEnum = {"from_test": 1}\n',
    }
    if with_lists:
        files["sglang/srt/function_call/parser_names.py"] = NAMES
        files["sglang/srt/parser/reasoning_parser_names.py"] = REASONING_NAMES
    return write_tree(tmp_path, files)


def test_registries(tmp_path):
    parsers = extract_parsers(_tree(tmp_path, with_lists=False))
    assert list(parsers.tool_call) == ["deepseekv3", "late", "llama3", "plugin", "qwen25"]
    assert parsers.tool_call["qwen25"] == "sglang/srt/function_call/function_call_parser.py:7"
    assert parsers.tool_call["late"] == "sglang/srt/function_call/function_call_parser.py:17"
    assert parsers.reasoning == {
        "deepseek-r1": "sglang/srt/parser/reasoning_parser.py:3",
        "qwen3": "sglang/srt/parser/reasoning_parser.py:4",
    }
    assert "not_a_parser" not in parsers.tool_call
    assert "from_test" not in parsers.tool_call


def test_name_lists_complete_the_registries(tmp_path):
    parsers = extract_parsers(_tree(tmp_path))
    # the registry keeps its location; a listed-only name gets the list's
    assert parsers.tool_call["qwen25"].startswith("sglang/srt/function_call/function_call_parser")
    assert parsers.tool_call["only_listed"] == "sglang/srt/function_call/parser_names.py:1"
    assert parsers.reasoning["listed-reasoner"] == ("sglang/srt/parser/reasoning_parser_names.py:4")


def test_empty_and_round_trip(tmp_path):
    assert extract_parsers(write_tree(tmp_path / "a", {"sglang/__init__.py": ""})) == Parsers()
    parsers = extract_parsers(_tree(tmp_path / "b"))
    assert Parsers.from_json(parsers.to_json()) == parsers


# ---------------------------------------------------------------- real releases


def _parsers(version, release_cache):
    from driftaudit.sources import resolve_spec

    return extract_parsers(resolve_spec(version, release_cache).root)


@pytest.mark.integration
def test_real_0_5_23_parsers(release_cache):
    parsers = _parsers("0.5.23", release_cache)
    for name in ("qwen25", "deepseekv3", "deepseekv31", "llama3", "gpt-oss", "kimi_k2", "glm45"):
        assert parsers.tool_call[name].startswith(
            "sglang/srt/function_call/function_call_parser.py:"
        ), name
    for name in ("deepseek-r1", "qwen3", "gpt-oss", "kimi", "deepseek-v4"):
        assert parsers.reasoning[name].startswith("sglang/srt/parser/reasoning_parser.py:"), name
    assert len(parsers.tool_call) == 44
    assert len(parsers.reasoning) == 36


@pytest.mark.integration
def test_real_parser_changes(release_cache):
    v22 = _parsers("0.5.22", release_cache)
    v23 = _parsers("0.5.23", release_cache)
    assert set(v23.tool_call) - set(v22.tool_call) == {"beam", "response_template"}
    assert set(v23.reasoning) - set(v22.reasoning) == {"beam", "response_template"}
    v9 = _parsers("0.5.9", release_cache)
    v14 = _parsers("0.5.14", release_cache)
    assert "deepseekv4" not in v9.tool_call and "deepseekv4" in v14.tool_call
    assert set(v9.tool_call) <= set(v14.tool_call)
