"""Prose that names a flag is not a use of it (`usage/surface_uses/prose.py`)."""

from __future__ import annotations

import ast

import pytest

from driftaudit.usage.surface_uses.prose import is_message_call, message_strings, reads_as_prose


@pytest.mark.parametrize(
    "text",
    [
        "Use --sglang-enforce-piecewise-cuda-graph to override.",
        "Colocate mode: defaulting --sglang-disable-piecewise-cuda-graph to avoid NVLS OOM.",
        "Check if `--sglang-disable-cuda-graph` helps isolate the overhead",
    ],
)
def test_sentences_read_as_prose(text):
    assert reads_as_prose(text)


@pytest.mark.parametrize(
    "text",
    [
        "--sglang-tp-size 2 --sglang-mem-fraction-static 0.8 --sglang-enable-dp-attention",
        "source env.sh && export X=1 && python train.py --sglang-tp-size 2",
        "--sglang-attention-backend flashinfer --sglang-router-policy round_robin",
        "--sglang-disable-cuda-graph",
        "cd /work && python train.py --sglang-tp-size 2 --sglang-use-fast-path",
    ],
)
def test_command_lines_do_not(text):
    assert not reads_as_prose(text)


@pytest.mark.parametrize(
    "source, expected",
    [
        ('logger.info("x")', True),
        ('logging.warning("x")', True),
        ('print(f"x {y}")', True),
        ('ValueError("x")', True),
        ('warnings.warn("x", DeprecationWarning)', True),
        ('subprocess.run(["python", "--tp-size", "2"])', False),
        ('cmd.append("--sglang-tp-size")', False),
    ],
)
def test_message_calls(source, expected):
    call = ast.parse(source).body[0].value
    assert is_message_call(call) is expected


def test_message_strings_are_the_string_arguments():
    call = ast.parse('logger.info("use --x", extra={"k": f"--y {z}"})').body[0].value
    texts = [ast.unparse(node) for node in message_strings(call)]
    assert sorted(texts) == sorted(["'use --x'", "'k'", "f'--y {z}'"])
