"""DA403 on hand-made trees: a ServerArgs field the consumer leaves unset changed its
default (offline; the real-release test covers 0.5.22 -> 0.5.23)."""

from __future__ import annotations

from pathlib import Path

from driftaudit.pipeline import run_compare

from .conftest import write_tree

SERVER_ARGS = """import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    chunked_prefill_size: int = {chunk}
    enable_bounded_replay: bool = {replay}
    tp_size: int = 1
"""


def _tree(root: Path, version: str, chunk: int, replay: bool) -> Path:
    return write_tree(
        root / version,
        {
            "sglang/__init__.py": "",
            "sglang/version.py": f"__version__ = {version!r}\n",
            "sglang/srt/__init__.py": "",
            "sglang/srt/server_args.py": SERVER_ARGS.format(chunk=chunk, replay=replay),
        },
    )


def test_default_changed_where_the_field_is_left_unset(tmp_path: Path):
    old = _tree(tmp_path, "1.0.0", 8192, False)
    new = _tree(tmp_path, "1.1.0", 4096, True)
    consumer = write_tree(
        tmp_path / "consumer",
        {
            "launch.py": (
                "from sglang.srt.server_args import ServerArgs\n"
                "\n"
                "args = ServerArgs(model_path='m', chunked_prefill_size=2048)\n"
                "everything = ServerArgs(model_path='m', chunked_prefill_size=1,"
                " enable_bounded_replay=False)\n"
                "print(args.enable_bounded_replay)\n"  # read: the consumer sees the default
            )
        },
    )
    result = run_compare(consumer, str(old), str(new), tmp_path / "cache")
    found = {(f.path, f.line, f.symbol.rpartition(".")[2]) for f in result.findings}
    assert ("launch.py", 3, "enable_bounded_replay") in found  # left unset: False -> True
    assert not any(f.line == 4 for f in result.findings)  # both set: nothing changes for it
    assert not any(s == "chunked_prefill_size" for _, _, s in found)  # set explicitly
    (replay,) = [f for f in result.findings if f.code.code == "DA403"]
    assert replay.severity == "warning" and "False to True" in replay.message
    assert replay.fix is not None and "enable_bounded_replay=False" in replay.fix.description
