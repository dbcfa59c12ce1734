"""Whose is a wrapped `sglang_*` name: what DestOwners finds declared and emitted, also
on lines far from any other spelling of the name (it skips the subtrees without one)."""

from __future__ import annotations

from driftaudit.usage.dest_owners import DestOwners
from driftaudit.usage.files import ConsumerFiles

SOURCE = """
import argparse
from dataclasses import dataclass


@dataclass
class RunConfig:
    sglang_mem_fraction: float = 0.8


def own_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sglang-pp-size", type=int)
    return parser


class Launcher:
    def __init__(self):
        self.sglang_tp_size = 2


def argv(cfg, args):
    flags = ["--mem-fraction-static", str(cfg.sglang_mem_fraction)]
    if args.sglang_pp_size:
        flags += ["--pp-size"]
    return flags, dict(tp_size=cfg.sglang_tp_size)
"""


def test_declarations_and_emitted_flags_are_found(tmp_path):
    (tmp_path / "run.py").write_text(SOURCE)
    names = {"sglang_mem_fraction", "sglang_pp_size", "sglang_tp_size", "sglang_unused"}
    owners = DestOwners(ConsumerFiles(tmp_path), names)
    assert owners.of("sglang_mem_fraction").declared == [("run.py", 8)]  # a class field
    assert owners.of("sglang_mem_fraction").emitted == [("run.py", 23, "--mem-fraction-static")]
    assert owners.of("sglang_pp_size").declared == [("run.py", 13)]  # its own option's dest
    assert owners.of("sglang_pp_size").emitted == [("run.py", 25, "--pp-size")]  # under an if
    assert owners.of("sglang_tp_size").declared == [("run.py", 19)]  # self.x = ... in a method
    assert owners.of("sglang_tp_size").emitted == [("run.py", 26, "tp_size")]  # a keyword
    assert owners.of("sglang_unused").declared == owners.of("sglang_unused").emitted == []
