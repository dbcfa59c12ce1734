"""Where a consumer touches sglang's flags, env vars and HTTP routes: tiny hand-made trees."""

from __future__ import annotations

from pathlib import Path

from driftaudit.usage.surface_uses import (
    EnvUsage,
    FlagUsage,
    SurfaceUsages,
    UrlUsage,
    detect_prefixes,
    scan_surfaces,
)

from .conftest import write_tree


def scan(tmp_path: Path, files: dict[str, str], **kwargs) -> SurfaceUsages:
    return scan_surfaces(write_tree(tmp_path, files), **kwargs)


def flags(found: SurfaceUsages, path: str | None = None) -> list[tuple]:
    return [
        (f.line, f.flag, f.prefix, f.value) for f in found.flags if path is None or f.path == path
    ]


def envs(found: SurfaceUsages) -> set[tuple[str, str, str]]:
    return {(e.name, e.kind, e.context) for e in found.envs}


def urls(found: SurfaceUsages) -> set[tuple]:
    return {(u.route, u.method, tuple(u.payload_keys)) for u in found.urls}


# ---- shell -------------------------------------------------------------------------


LAUNCH_SH = """\
#!/bin/bash
# python -m sglang.launch_server --commented-out 1
CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server \\
    --model-path /models/qwen \\
    --tp-size 2 \\
    --enable-metrics \\
    --mem-fraction-static=0.8 &
torchrun --nproc-per-node 8 train.py --lr 1e-4
"""


def test_shell_launcher_with_continuation_lines(tmp_path):
    found = scan(tmp_path, {"run.sh": LAUNCH_SH})
    assert flags(found) == [
        (4, "--model-path", None, "/models/qwen"),
        (5, "--tp-size", None, "2"),
        (6, "--enable-metrics", None, None),
        (7, "--mem-fraction-static", None, "0.8"),
    ]
    first = found.flags[0]
    assert (first.path, first.column, first.written, first.context) == (
        "run.sh",
        5,
        "--model-path",
        "shell",
    )


def test_shell_other_tools_report_nothing(tmp_path):
    found = scan(
        tmp_path,
        {
            "train.sh": "torchrun --nproc-per-node 8 train.py --lr 1e-4\n"
            "python -m sglang.bench_serving --backend sglang --num-prompts 10\n"
        },
    )
    assert found.flags == []
    assert found.prefixes == []


def test_shell_sglang_serve_and_a_script_without_extension(tmp_path):
    found = scan(tmp_path, {"bin/serve": "#!/usr/bin/env bash\nsglang serve --tp 4 --port 30000\n"})
    assert flags(found) == [(2, "--tp", None, "4"), (2, "--port", None, "30000")]
    assert scan(tmp_path / "other", {"notes": "sglang serve --tp 4\n"}).flags == []


def test_shell_variables_expanded_on_the_launch_line(tmp_path):
    script = """\
SERVER_ARGS="--tp-size 2 --dp-size 1"
python -m sglang.launch_server $SERVER_ARGS --port 30000
OTHER="--lr 1"
"""
    found = scan(tmp_path, {"serve.sh": script})
    assert {(f.flag, f.value) for f in found.flags} == {
        ("--tp-size", "2"),
        ("--dp-size", "1"),
        ("--port", "30000"),
    }


def test_shell_wrapped_flags_in_an_array_with_a_detected_prefix(tmp_path):
    script = """\
SGLANG_ARGS=(
   --rollout-num-gpus-per-engine 8
   # --sglang-disabled 1
   --sglang-mem-fraction-static 0.7
   --sglang-enable-metrics
   --sglang-cuda-graph-bs 1 2 4
)
python3 train.py ${SGLANG_ARGS[@]} --sglang-tp-size "$TP"
"""
    found = scan(tmp_path, {"train.sh": script})
    assert found.prefixes == ["--sglang-"]
    assert flags(found) == [
        (4, "--mem-fraction-static", "--sglang-", "0.7"),
        (5, "--enable-metrics", "--sglang-", None),
        (6, "--cuda-graph-bs", "--sglang-", "1"),
        (8, "--tp-size", "--sglang-", None),
    ]
    assert found.flags[0].written == "--sglang-mem-fraction-static"
    # the array is the script's own variable, not an sglang env var
    assert found.envs == []


def test_configured_prefix(tmp_path):
    script = "python train.py --rollout-sgl-tp-size 2 --lr 1\n"
    code = "def f(args):\n    return args.rollout_sgl_dp_size + args.lr\n"
    assert scan(tmp_path, {"a.sh": script, "f.py": code}).flags == []
    found = scan(tmp_path, {"a.sh": script, "f.py": code}, prefixes=["--rollout-sgl-"])
    assert found.prefixes == ["--rollout-sgl-"]
    assert [(f.path, f.flag, f.prefix, f.context, f.value) for f in found.flags] == [
        ("a.sh", "--tp-size", "--rollout-sgl-", "shell", "2"),
        ("f.py", "--dp-size", "--rollout-sgl-", "python-attr", None),
    ]


def test_shell_env_vars_set_and_read(tmp_path):
    script = """\
export SGLANG_USE_AITER=1
SGLANG_LOG_LEVEL=debug python -m sglang.launch_server --port 1
SGL_PLAIN=1
echo "${SGLANG_TORCH_PROFILER_DIR:-/tmp}" $SGL_OTHER
# export SGLANG_COMMENTED=1
MY_VAR=1
"""
    found = scan(tmp_path, {"env.sh": script})
    assert envs(found) == {
        ("SGLANG_USE_AITER", "set", "shell"),
        ("SGLANG_LOG_LEVEL", "set", "shell"),
        ("SGL_PLAIN", "set", "shell"),
        ("SGLANG_TORCH_PROFILER_DIR", "read", "shell"),
        ("SGL_OTHER", "read", "shell"),
    }
    export = next(e for e in found.envs if e.name == "SGLANG_USE_AITER")
    assert (export.line, export.column) == (1, 8)


def test_shell_curl(tmp_path):
    script = """\
curl -s http://localhost:30000/health
curl -X POST "$BASE_URL/generate?x=1" -d '{"text": "hi", "sampling_params": {}}'
curl localhost:30000/flush_cache -d '{}'
curl -o /tmp/out.json https://example.com/file.json
"""
    found = scan(tmp_path, {"c.sh": script})
    assert urls(found) == {
        ("/health", "GET", ()),
        ("/generate", "POST", ("text", "sampling_params")),
        ("/flush_cache", "POST", ()),
    }


# ---- YAML, JSON, TOML ----------------------------------------------------------------


YAML = """\
sglang:
  - name: default
    server_groups:
      - worker_type: prefill
        overrides:
          tp_size: 2          # a comment
          skip_tokenizer_init: true
          cuda_graph_bs: [1, 2, 4]
training:
  tp_size: 8
  lr: 1e-4
sglang_mem_fraction_static: 0.7
"""


def test_yaml_section_keys_and_prefixed_keys(tmp_path):
    found = scan(tmp_path, {"conf/deploy.yaml": YAML, "train.sh": "x --sglang-tp-size 1\n"})
    assert flags(found, "conf/deploy.yaml") == [
        (6, "--tp-size", None, "2"),
        (7, "--skip-tokenizer-init", None, "true"),
        (8, "--cuda-graph-bs", None, "[1, 2, 4]"),
        (12, "--mem-fraction-static", "--sglang-", "0.7"),
    ]
    tp = found.flags[0]
    assert (tp.column, tp.written, tp.context) == (11, "tp_size", "yaml")


def test_yaml_section_without_overrides_and_a_plain_section(tmp_path):
    text = "server_args:\n  tp-size: 2\n  dtype: bfloat16\nmodel:\n  tp_size: 4\n"
    found = scan(tmp_path, {"a.yml": text})
    assert flags(found) == [(2, "--tp-size", None, "2"), (3, "--dtype", None, "bfloat16")]


def test_yaml_env_mapping_and_wrapped_flags_in_a_list(tmp_path):
    text = """\
runtime_env:
  env_vars:
    SGLANG_ENABLE_JIT_DEEPGEMM: "0"
    HF_HOME: /cache
train_args:
  - --sglang-tp-size
  - "2"
  - --lr
  - "1e-4"
"""
    found = scan(tmp_path, {"job.yaml": text})
    assert envs(found) == {("SGLANG_ENABLE_JIT_DEEPGEMM", "set", "yaml")}
    assert flags(found) == [(6, "--tp-size", "--sglang-", "2")]
    assert (found.envs[0].line, found.envs[0].column) == (3, 5)


def test_yaml_commands_env_and_k8s_args(tmp_path):
    text = """\
services:
  server:
    command: python3 -m sglang.launch_server --tp 2 --port 30000
    environment:
      - SGLANG_ENABLE_TORCH_COMPILE=1
      - OTHER=1
---
spec:
  containers:
    - name: sglang
      command: ["python3", "-m", "sglang.launch_server"]
      args:
        - --model-path
        - /models/x
        - --dp-size
        - "2"
      env:
        - name: SGLANG_HOST_IP
          value: "0.0.0.0"
        - name: NOT_OURS
          value: "1"
    - name: trainer
      args: ["--lr", "1"]
      script: |
        export SGLANG_SET_CPU_AFFINITY=1
        python -m sglang.launch_server \\
          --mem-fraction-static 0.8
"""
    found = scan(tmp_path, {"deploy.yaml": text})
    assert [(f.line, f.flag, f.value) for f in found.flags] == [
        (3, "--tp", "2"),
        (3, "--port", "30000"),
        (13, "--model-path", "/models/x"),
        (15, "--dp-size", "2"),
        (27, "--mem-fraction-static", "0.8"),
    ]
    assert envs(found) == {
        ("SGLANG_ENABLE_TORCH_COMPILE", "set", "yaml"),
        ("SGLANG_HOST_IP", "set", "yaml"),
        ("SGLANG_SET_CPU_AFFINITY", "set", "yaml"),
    }


def test_json_sections_argv_and_plain_keys(tmp_path):
    text = """{
  "training": {"tp_size": 8},
  "sglang_args": {"tp_size": 2, "enable_metrics": true},
  "launch": {"module": "sglang.launch_server", "args": ["--port", "30000"]},
  "env": {"SGLANG_LOG_MS": "1"}
}
"""
    found = scan(tmp_path, {"cfg.json": text})
    assert flags(found) == [
        (3, "--tp-size", None, "2"),
        (3, "--enable-metrics", None, "true"),
        (4, "--port", None, "30000"),
    ]
    assert found.flags[0].column == 20
    assert envs(found) == {("SGLANG_LOG_MS", "set", "json")}


def test_toml_sections(tmp_path):
    text = """\
[tool.myproject.sglang]
tp_size = 2
attention-backend = "fa3"

[training]
tp_size = 8

[server]
sglang_args = ["--dp-size", "2"]
"""
    found = scan(tmp_path, {"settings.toml": text})
    assert flags(found) == [
        (2, "--tp-size", None, "2"),
        (3, "--attention-backend", None, "fa3"),
        (9, "--dp-size", None, "2"),
    ]
    assert {f.context for f in found.flags} == {"toml"}


# ---- Dockerfile ----------------------------------------------------------------------


DOCKERFILE = """\
ARG SGLANG_IMAGE_TAG=v0.5.9
FROM lmsysorg/sglang:${SGLANG_IMAGE_TAG}
ENV SGLANG_USE_AITER=1 OTHER=2
ENV SGL_LEGACY value
RUN pip install x && \\
    export SGLANG_BUILD_FLAG=1
CMD ["python3", "-m", "sglang.launch_server", "--tp", "2", "--host", "0.0.0.0"]
"""


def test_dockerfile(tmp_path):
    found = scan(tmp_path, {"docker/Dockerfile.rocm": DOCKERFILE})
    assert flags(found) == [(7, "--tp", None, "2"), (7, "--host", None, "0.0.0.0")]
    assert found.flags[0].context == "dockerfile"
    assert envs(found) == {
        ("SGLANG_IMAGE_TAG", "set", "dockerfile"),
        ("SGLANG_IMAGE_TAG", "read", "dockerfile"),
        ("SGLANG_USE_AITER", "set", "dockerfile"),
        ("SGL_LEGACY", "set", "dockerfile"),
        ("SGLANG_BUILD_FLAG", "set", "dockerfile"),
    }


def test_dockerfile_shell_form_entrypoint(tmp_path):
    text = "FROM x\nENTRYPOINT python3 -m sglang.launch_server \\\n    --tp-size 4\n"
    found = scan(tmp_path, {"serve.dockerfile": text})
    assert flags(found) == [(3, "--tp-size", None, "4")]


# ---- Python: flags -------------------------------------------------------------------


PY_LAUNCH = '''\
import subprocess
import sys


def launch(model, port, extra):
    """Start it: python -m sglang.launch_server --from-docstring 1"""
    cmd = [sys.executable, "-m", "sglang.launch_server", "--model-path", model, "--tp", "2"]
    cmd += ["--port", str(port)]
    cmd.append("--enable-metrics")
    cmd.extend(["--attention-backend", "triton"])
    other = ["--lr", "1e-4"]
    subprocess.Popen(cmd)
    shell = f"python3 -m sglang.launch_server --dp-size {extra} --host 0.0.0.0"
    return subprocess.run(" ".join(["torchrun", "--nproc-per-node", "8", "train.py"]))
'''


def test_python_argv(tmp_path):
    found = scan(tmp_path, {"pkg/launch.py": PY_LAUNCH})
    assert flags(found) == [
        (7, "--model-path", None, None),
        (7, "--tp", None, "2"),
        (8, "--port", None, None),
        (9, "--enable-metrics", None, None),
        (10, "--attention-backend", None, "triton"),
        (13, "--dp-size", None, None),
        (13, "--host", None, "0.0.0.0"),
    ]
    tp = found.flags[1]
    assert (tp.column, tp.context) == (82, "python-argv")


def test_python_popen_launch_server_other_args(tmp_path):
    text = """\
from sglang.test.test_utils import popen_launch_server


def start(model, url):
    sglang_args = ["--mem-fraction-static", "0.7"]
    sglang_args.extend(["--quantization", "fp8"])
    return popen_launch_server(model, url, timeout=60, other_args=sglang_args)
"""
    found = scan(tmp_path, {"bench.py": text})
    assert flags(found) == [
        (5, "--mem-fraction-static", None, "0.7"),
        (6, "--quantization", None, "fp8"),
    ]


def test_python_wrapped_flags_and_attributes(tmp_path):
    text = """\
import argparse

import miles.backends.sglang_utils


def add(parser: argparse.ArgumentParser):
    parser.add_argument("--sglang-mem-fraction-static", type=float, help="see --sglang-ignored")


def use(args):
    if args.sglang_mem_fraction_static > 0.5:
        args.sglang_tp_size = 2
    print(getattr(args, "sglang_enable_metrics", False))
    miles.backends.sglang_utils.sglang_engine.start()
    extra = "--sglang-dp-size 2 --other 1"
    local_tp_size = {"tp_size": 2}
"""
    found = scan(tmp_path, {"args.py": text})
    assert found.prefixes == ["--sglang-"]
    assert [(f.line, f.flag, f.written, f.context, f.value) for f in found.flags] == [
        (7, "--mem-fraction-static", "--sglang-mem-fraction-static", "python-argv", None),
        (11, "--mem-fraction-static", "sglang_mem_fraction_static", "python-attr", None),
        (12, "--tp-size", "sglang_tp_size", "python-attr", None),
        (13, "--enable-metrics", "sglang_enable_metrics", "python-attr", None),
        (15, "--dp-size", "--sglang-dp-size", "python-argv", "2"),
    ]
    attr = found.flags[1]
    assert (attr.column, attr.prefix) == (13, "--sglang-")


def test_python_class_fields_and_detected_prefix_from_a_keyword(tmp_path):
    text = """\
from dataclasses import dataclass


@dataclass
class Args:
    sglang_attention_backend: str = "fa3"
    eval_sglang_tp_size: int = 1
    lr: float = 1e-4


def register(parser):
    add_prefixed(parser, flag_prefix="eval-sglang", dest_prefix="eval_sglang_")
    parser.add_argument("--sglang-ep-size")
"""
    found = scan(tmp_path, {"cfg.py": text})
    assert found.prefixes == ["--eval-sglang-", "--sglang-"]
    assert [(f.line, f.flag, f.prefix, f.context) for f in found.flags] == [
        (6, "--attention-backend", "--sglang-", "python-attr"),
        (7, "--tp-size", "--eval-sglang-", "python-attr"),
        (13, "--ep-size", "--sglang-", "python-argv"),
    ]


def test_detect_prefixes_is_conservative(tmp_path):
    texts = {
        "a.sh": "--dashboard-sglang-scrape-mode x --dashboard-sglang-metrics y\n",
        "b.sh": "--eval-sglang-tp-size 1 --eval-sglang-port 2\n",
        "c.sh": "--sgl-only-once 1\n",
    }
    assert detect_prefixes(tmp_path, texts) == ["--eval-sglang-"]
    texts["d.py"] = 'parser.add_argument("--sglang-tp-size")\n'
    assert detect_prefixes(tmp_path, texts) == ["--eval-sglang-", "--sglang-"]


# ---- Python: env vars ----------------------------------------------------------------


PY_ENV = """\
import os
import subprocess
from unittest import mock

from sglang.srt.environ import envs

os.environ["SGLANG_SET_ITEM"] = "1"
os.environ.setdefault("SGLANG_SET_DEFAULT", "1")
value = os.environ.get("SGLANG_GET")
other = os.getenv("SGL_GETENV", "0")
flag = "SGLANG_IN" in os.environ
subprocess.Popen(["x"], env={**os.environ, "SGLANG_ENV_DICT": "1"})
env = {}
env["SGLANG_SUBSCRIPT"] = "1"
with mock.patch.dict(os.environ, {"SGLANG_PATCHED": "1"}):
    pass
envs.SGLANG_REGISTRY_READ.get()
envs.SGLANG_REGISTRY_SET.set(True)
os.environ.update(SGLANG_KEYWORD="1")
NAMES = ["SGLANG_BARE_NAME"]
cmd = "SGLANG_IN_COMMAND=1 python -m x"
SGLANG_PY_CONSTANT = 3
message = "set SGLANG_NOT_EXACT to enable"


def test_it(monkeypatch):
    monkeypatch.setenv("SGLANG_MONKEYPATCHED", "1")
"""


def test_python_env_vars(tmp_path):
    found = scan(tmp_path, {"envs.py": PY_ENV})
    assert envs(found) == {
        ("SGLANG_SET_ITEM", "set", "python"),
        ("SGLANG_SET_DEFAULT", "set", "python"),
        ("SGLANG_GET", "read", "python"),
        ("SGL_GETENV", "read", "python"),
        ("SGLANG_IN", "read", "python"),
        ("SGLANG_ENV_DICT", "set", "python"),
        ("SGLANG_SUBSCRIPT", "set", "python"),
        ("SGLANG_PATCHED", "set", "python"),
        ("SGLANG_REGISTRY_READ", "read", "python"),
        ("SGLANG_REGISTRY_SET", "set", "python"),
        ("SGLANG_KEYWORD", "set", "python"),
        ("SGLANG_BARE_NAME", "read", "python"),
        ("SGLANG_IN_COMMAND", "set", "python"),
        ("SGLANG_MONKEYPATCHED", "set", "python"),
    }
    item = next(e for e in found.envs if e.name == "SGLANG_SET_ITEM")
    assert (item.path, item.line, item.column) == ("envs.py", 7, 13)
    registry = next(e for e in found.envs if e.name == "SGLANG_REGISTRY_READ")
    assert (registry.line, registry.column) == (17, 6)


# ---- Python: URLs --------------------------------------------------------------------


PY_URLS = """\
import aiohttp
import requests


class Engine:
    def _make_request(self, endpoint, payload=None):
        url = f"http://{self.host}:{self.port}/{endpoint}"
        return requests.post(url, json=payload or {}).json()

    def flush(self):
        return requests.get(f"http://{self.host}:{self.port}/flush_cache?x=1")

    def update(self, names):
        payload = {"names": names, "flush_cache": True}
        payload["weight_version"] = "v2"
        return self._make_request("update_weights_from_tensor", payload)

    def models(self, base_url, model):
        return requests.get(base_url + "/v1/models/" + model)

    def info(self):
        for endpoint in ("/model_info", "/get_model_info"):
            requests.get(f"{self.base}{endpoint}")


async def generate(session: aiohttp.ClientSession, base_url, ids):
    async with session.post(f"{base_url}/generate", json={"input_ids": ids, "rid": 1}) as resp:
        return await resp.json()


def paths(tmp):
    with open("/tmp/x/config.json") as handle:
        data = handle.read()
    load("/models/qwen")
    save(hf_checkpoint="/fake/model")
    logdict = {f"{tmp}/acc_{1}": 1}
    route = "/health"
    return f"{tmp}/metrics/{data}"
"""


def test_python_urls_methods_and_payloads(tmp_path):
    found = scan(tmp_path, {"client.py": PY_URLS})
    assert urls(found) == {
        ("/flush_cache", "GET", ()),
        ("/update_weights_from_tensor", "POST", ("names", "flush_cache", "weight_version")),
        ("/v1/models/{}", "GET", ()),
        ("/model_info", "GET", ()),
        ("/get_model_info", "GET", ()),
        ("/generate", "POST", ("input_ids", "rid")),
        ("/health", None, ()),
    }
    helper = next(u for u in found.urls if u.route == "/update_weights_from_tensor")
    assert (helper.path, helper.line, helper.column) == ("client.py", 16, 36)
    flush = next(u for u in found.urls if u.route == "/flush_cache")
    assert (flush.line, flush.column) == (11, 61)


def test_python_route_definitions_are_not_calls(tmp_path):
    text = """\
from fastapi import FastAPI

app = FastAPI()


@app.post("/generate")
def generate():
    return {}


app.get("/health")(lambda: None)
app.add_api_route("/flush_cache", generate)
"""
    assert scan(tmp_path, {"server.py": text}).urls == []


def test_helpers_are_resolved_across_files(tmp_path):
    files = {
        "pkg/http.py": """\
import httpx


def call_server(base, route, body):
    return httpx.post(f"{base}/{route}", json=body)
""",
        "pkg/use.py": """\
from pkg.http import call_server


def pause(base):
    return call_server(base, "pause_generation", {"mode": "abort"})
""",
    }
    found = scan(tmp_path, files)
    assert [(u.path, u.line, u.route, u.method, u.payload_keys) for u in found.urls] == [
        ("pkg/use.py", 5, "/pause_generation", "POST", ["mode"])
    ]


def test_models_of_the_api(tmp_path):
    found = scan(tmp_path, {"x.sh": "python -m sglang.launch_server --tp 1\n"})
    usage = found.flags[0]
    assert isinstance(usage, FlagUsage)
    assert isinstance(found, SurfaceUsages)
    env = EnvUsage("a.py", 1, 1, "SGLANG_X", "set", "python")
    url = UrlUsage("a.py", 1, 1, "/generate", "POST", ["text"])
    assert env.kind == "set" and url.payload_keys == ["text"]


# ---- the walk ------------------------------------------------------------------------


def test_skipped_folders_exclude_and_undecodable_files(tmp_path):
    files = {
        ".venv/lib/run.sh": "python -m sglang.launch_server --tp 1\n",
        "node_modules/x/run.sh": "python -m sglang.launch_server --tp 1\n",
        "build/lib/run.sh": "python -m sglang.launch_server --tp 1\n",  # setuptools output
        "env/pyvenv.cfg": "home = /usr/bin\n",
        "env/bin/run.sh": "python -m sglang.launch_server --tp 1\n",  # a virtualenv
        "scripts/skip_me.sh": "python -m sglang.launch_server --tp 1\n",
        "scripts/keep.sh": "python -m sglang.launch_server --dp 1\n",
        "broken.py": "def (:\n  'SGLANG_X'\n",
    }
    root = write_tree(tmp_path, files)
    (root / "latin.sh").write_bytes(b"python -m sglang.launch_server --ep 1 \xff\n")
    found = scan_surfaces(root, exclude=["scripts/skip_*.sh"])
    assert [(f.path, f.flag) for f in found.flags] == [("scripts/keep.sh", "--dp")]
    assert found.envs == []


def test_text_inside_a_multiline_string_is_not_code(tmp_path):
    text = '''\
import os

HELP = """
os.environ["SGLANG_INSIDE_A_STRING"] = "1"
"""


def f():
    value = os.environ.get("SGLANG_REAL")
    return value
'''
    found = scan(tmp_path, {"m.py": text})
    assert envs(found) == {("SGLANG_REAL", "read", "python")}
    assert (found.envs[0].line, found.envs[0].column) == (9, 29)


def test_a_unit_that_does_not_parse_alone_falls_back_to_the_whole_file(tmp_path):
    text = 'import os\nvalue = os.environ.setdefault(\\\n"SGLANG_SPLIT", "1")\n'
    found = scan(tmp_path, {"m.py": text})
    assert [(e.line, e.column, e.kind) for e in found.envs] == [(3, 2, "set")]
