"""Behaviour found from code, on the real releases: `Req.origin_input_ids` became an
`array` (0.5.9 -> 0.5.14), `--enable-piecewise-cuda-graph` has a replacement, and
`OpenAIServingChat` built without `__init__` misses what 0.5.23 reads (0.5.16 -> 0.5.23).
The consumers are written here, in the shape the real ones use."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftaudit.drift.serverarg_changes import FlagRemoved, ServerArgFieldRemoved, ServerArgsDrift
from driftaudit.pipeline import open_snapshots, run_compare

pytestmark = pytest.mark.integration


def _consumer(tmp_path: Path, source: str) -> Path:
    root = tmp_path / "consumer"
    root.mkdir()
    (root / "mod.py").write_text(source)
    return root


def _codes(result, code: str) -> list:
    return [f for f in result.findings if f.code.code == code]


def test_origin_input_ids_list_to_array(release_cache, tmp_path):
    root = _consumer(
        tmp_path,
        "from sglang.srt.managers.schedule_batch import Req\n"
        "def build(input_ids, params):\n"
        "    return Req(\n"
        '        rid="0",\n'
        '        origin_input_text="",\n'
        "        origin_input_ids=input_ids.view(-1).tolist(),\n"
        "        sampling_params=params,\n"
        "    )\n",
    )
    found = _codes(run_compare(root, "0.5.9", "0.5.14", release_cache, pack_dirs=[]), "DA704")
    assert [(f.line, f.symbol) for f in found] == [(6, "sglang.srt.managers.schedule_batch.Req")]
    assert "`List[int]` before and `array[int]` now" in found[0].message


def test_enable_piecewise_cuda_graph_replacement(release_cache):
    old, new = open_snapshots("0.5.9", "0.5.14", release_cache)
    drift = ServerArgsDrift(
        old.server_args(),
        new.server_args(),
        old.surface("server_arg_redirects"),
        new.surface("server_arg_redirects"),
    )
    (removed,) = drift.by_field["enable_piecewise_cuda_graph"]
    assert isinstance(removed, ServerArgFieldRemoved)
    assert removed.suggestion.setting == "cuda_graph_backend_prefill = Backend.TC_PIECEWISE"
    flag = drift.by_flag["--enable-piecewise-cuda-graph"]
    assert isinstance(flag, FlagRemoved)
    assert flag.replacement == "--cuda-graph-backend-prefill=tc_piecewise"


def test_serving_chat_built_without_init(release_cache, tmp_path):
    root = _consumer(
        tmp_path,
        "from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat\n"
        "def make(tokenizer_manager, template_manager):\n"
        "    serving = object.__new__(OpenAIServingChat)\n"
        "    serving.tokenizer_manager = tokenizer_manager\n"
        "    serving.template_manager = template_manager\n"
        "    return serving\n"
        "def prompt_ids(request, tm, tpl):\n"
        "    serving = make(tm, tpl)\n"
        "    return serving._process_messages(request, is_multimodal=False).prompt_ids\n",
    )
    found = _codes(run_compare(root, "0.5.16", "0.5.23", release_cache, pack_dirs=[]), "DA703")
    missing = {f.symbol.rpartition(".")[2] for f in found}
    assert "is_minimax_m3" in missing  # read first thing in _process_messages
    assert {f.line for f in found} == {3}
    assert "tokenizer_manager" not in missing and "template_manager" not in missing
