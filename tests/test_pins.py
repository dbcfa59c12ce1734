"""The consumer's requirement pins (one reader) and the sglang pin derived from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.pins import read_pin, read_pins

from .conftest import write_tree


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"pyproject.toml": 'dependencies = ["torch", "sglang[all]==0.5.9"]\n'},
            ("0.5.9", "pyproject.toml:1"),
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "x"\n'
                'dependencies = [\n  "sglang[all]==0.5.9",\n]\n'
            },
            ("0.5.9", "pyproject.toml:4"),
        ),
        (
            {"requirements.txt": "# sglang==0.1.0\nsglang==0.5.14\n"},
            ("0.5.14", "requirements.txt:2"),
        ),
        ({"setup.py": 'install_requires=["sglang == 0.5.2"]\n'}, ("0.5.2", "setup.py:1")),
        (
            {"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    sglang==0.5.3\n"},
            ("0.5.3", "setup.cfg:4"),
        ),
        (
            {"docker/Dockerfile": "ARG SGLANG_IMAGE_TAG=v0.5.16\n"},
            ("0.5.16", "docker/Dockerfile:1"),
        ),
        (
            {"Dockerfile": "# FROM lmsysorg/sglang:v0.5.1\nFROM lmsysorg/sglang:v0.5.10rc0\n"},
            ("0.5.10rc0", "Dockerfile:2"),
        ),
        (
            {"Dockerfile": "ARG SGLANG_IMAGE_TAG=v0.5.16-rocm720-mi35x\n"},
            ("0.5.16", "Dockerfile:1"),
        ),
        (
            {
                "docker/Dockerfile.sglang": (
                    "FROM nvidia/cuda:12.4\n# RUN pip install sglang==0.1.0\n"
                    'RUN echo sglang==0.2.0 && pip install "sglang[all]==0.4.6.post5" -U\n'
                )
            },
            ("0.4.6.post5", "docker/Dockerfile.sglang:3"),
        ),
        (
            {
                "Dockerfile": (
                    "RUN python -m pip install --no-cache-dir \\\n"
                    "    torch==2.6 sglang-router==0.2.3 \\\n"
                    "    sglang[srt]==0.5.2; echo sglang==0.9.0\n"
                )
            },
            ("0.5.2", "Dockerfile:3"),
        ),
        (
            {
                "Dockerfile": (
                    "RUN pip install sglang==${SGLANG_VERSION}\n"
                    "RUN pip install x && \\\n    echo sglang==0.9.0\n"
                )
            },
            None,
        ),
        ({"requirements.txt": "sglang-router>=0.2.3\nsglang>=0.5\n"}, None),
        (
            {"requirements.txt": "sglang==0.5.10rc0\n", "pyproject.toml": "[project]\nname='x'\n"},
            ("0.5.10rc0", "requirements.txt:1"),
        ),
    ],
)
def test_read_pin(tmp_path: Path, files, expected):
    write_tree(tmp_path, files)
    assert read_pin(tmp_path) == expected


def test_pyproject_comes_first(tmp_path):
    write_tree(
        tmp_path,
        {
            "requirements.txt": "sglang==0.5.2\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["sglang==0.5.9"]\n',
        },
    )
    assert read_pin(tmp_path) == ("0.5.9", "pyproject.toml:3")


def test_dependency_pins_keep_lines_columns_and_markers(tmp_path):
    write_tree(
        tmp_path,
        {
            "requirements.txt": (
                "--extra-index-url https://example.com/simple\n"
                "torch==2.9.1+cu128  # the CUDA build\n"
                "backports.strenum; python_version < '3.11'\n"
                "nvidia_resiliency_ext~=0.6.0; platform_system == 'Linux'\n"
                "numpy\n"
                "-r other.txt\n"
                "./local/path\n"
                "sglang[all]==0.5.9\n"
                "requests==2.0 --hash=sha256:abc\n"
            ),
            "pyproject.toml": (
                '[project]\nname = "x"\ndependencies = [\n'
                '    "transformers >= 4.0, < 5",  # comment\n'
                "]\n[project.optional-dependencies]\n"
                'dev = ["pytest==8.0"]\n'
                '[tool.other]\nlist = ["not==1.0"]\n'
            ),
        },
    )
    pins = {(p.path, p.name): p for p in read_pins(tmp_path)}
    assert set(pins) == {
        ("pyproject.toml", "transformers"),
        ("pyproject.toml", "pytest"),
        ("requirements.txt", "torch"),
        ("requirements.txt", "nvidia-resiliency-ext"),
        ("requirements.txt", "sglang"),
        ("requirements.txt", "requests"),
    }
    torch = pins["requirements.txt", "torch"]
    assert (torch.line, torch.column, torch.specifier, torch.sglang) == (
        2,
        1,
        "==2.9.1+cu128",
        "0.5.9",
    )
    nvidia = pins["requirements.txt", "nvidia-resiliency-ext"]
    assert (nvidia.line, nvidia.specifier, nvidia.marker) == (
        4,
        "~=0.6.0",
        'platform_system == "Linux"',
    )
    transformers = pins["pyproject.toml", "transformers"]
    assert (transformers.line, transformers.column, transformers.specifier) == (4, 6, "<5,>=4.0")
    assert transformers.sglang is None  # that file pins no sglang
    assert pins["pyproject.toml", "pytest"].line == 7
    assert pins["requirements.txt", "requests"].specifier == "==2.0"


def test_unreadable_files_are_skipped(tmp_path):
    write_tree(
        tmp_path,
        {
            "pyproject.toml": "[project\n",
            "setup.py": "def (:\n",
            "setup.cfg": "not an ini file\n",
            "requirements.txt": "sglang==0.5.9\n",
        },
    )
    assert read_pin(tmp_path) == ("0.5.9", "requirements.txt:1")


def test_environments_are_rooted_where_an_install_starts(tmp_path):
    """A file shares an environment with what it `-r` includes (directly or not) and a
    Dockerfile with the requirements files it names; two files that both include a
    third are two environments."""
    from driftaudit.usage.pins import installed_together

    write_tree(
        tmp_path,
        {
            "requirements-cuda.txt": "-r requirements-base.txt\nsglang==0.5.6\n",
            "requirements-rocm.txt": "-r requirements-base.txt\nsglang==0.5.5\n",
            "requirements-base.txt": "-r requirements-deep.txt\ntorch==2.9.1\n",
            "requirements-deep.txt": "numpy==2.0\n",
            "requirements.txt": "transformers==4.0\n",
            "docker/Dockerfile": "FROM lmsysorg/sglang:v0.5.6\nCOPY requirements.txt .\n",
            "docker/Dockerfile.rocm": "FROM lmsysorg/sglang:v0.5.5\nCOPY requirements.txt .\n",
        },
    )
    pins = {p.path: p for p in read_pins(tmp_path)}
    together = installed_together
    assert together(pins["requirements-cuda.txt"], pins["requirements-deep.txt"])
    assert together(pins["requirements-rocm.txt"], pins["requirements-base.txt"])
    assert not together(pins["requirements-cuda.txt"], pins["requirements-rocm.txt"])
    assert together(pins["docker/Dockerfile"], pins["requirements.txt"])
    assert not together(pins["docker/Dockerfile"], pins["docker/Dockerfile.rocm"])
    assert not together(pins["requirements-cuda.txt"], pins["docker/Dockerfile"])
    assert pins["requirements-deep.txt"].with_sglang  # both stacks install it


SUB_PROJECT = """\
[project]
name = "skyrl-train"
dependencies = ["torch==2.7.0"]

[project.optional-dependencies]
sglang = [
    "sglang[srt,openai]==0.4.8.post1",
]
"""


def test_a_sub_project_pins_sglang_when_the_root_does_not(tmp_path):
    """The root's metadata pins no sglang release: the sub-projects' metadata below it
    is read (any depth, shallowest first; only those that require sglang), through the
    consumer's file index (.gitignore, virtualenvs and --exclude hold)."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "root"\ndependencies = ["sglang"]\n',
            ".gitignore": "scratch/\n",
            "skyrl-train/pyproject.toml": SUB_PROJECT,
            "skyrl-gym/pyproject.toml": '[project]\nname = "gym"\ndependencies = ["numpy==2.0"]\n',
            "examples/deep/serve/requirements.txt": "sglang==0.4.6\n",
            "scratch/requirements.txt": "sglang==0.1.0\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site/pyproject.toml": 'dependencies = ["sglang==0.2.0"]\n',
        },
    )
    assert read_pin(tmp_path) == ("0.4.8.post1", "skyrl-train/pyproject.toml:7")
    pins = {(p.path, p.name): p for p in read_pins(tmp_path)}
    assert set(pins) == {
        ("skyrl-train/pyproject.toml", "torch"),
        ("skyrl-train/pyproject.toml", "sglang"),
        ("examples/deep/serve/requirements.txt", "sglang"),
    }
    torch = pins["skyrl-train/pyproject.toml", "torch"]
    assert torch.with_sglang and torch.sglang == "0.4.8.post1"
    assert pins["skyrl-train/pyproject.toml", "sglang"].group == "sglang"


def test_a_root_pin_leaves_the_sub_projects_unread(tmp_path):
    write_tree(
        tmp_path,
        {
            "requirements.txt": "sglang==0.5.2\n",
            "serving/pyproject.toml": 'dependencies = ["sglang==0.4.0", "torch==2.0"]\n',
        },
    )
    assert read_pin(tmp_path) == ("0.5.2", "requirements.txt:1")
    assert [p.path for p in read_pins(tmp_path)] == ["requirements.txt"]
    assert read_pin(ConsumerFiles(tmp_path / "serving")) == ("0.4.0", "pyproject.toml:1")
    assert read_pin(ConsumerFiles(tmp_path, exclude=["serving"])) == ("0.5.2", "requirements.txt:1")
