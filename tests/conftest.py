from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT_RE = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A fresh cache per test (hand-made trees are tiny)."""
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def release_cache() -> Path:
    """The cache the integration tests share across runs: releases are fetched once."""
    path = os.environ.get("DRIFTAUDIT_TEST_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "driftaudit-tests"
    )
    return Path(path)


def expected_markers(consumer: Path) -> set[tuple[str, int, str]]:
    """(file, line, code) for every `# expect: CODE` comment in a consumer fixture."""
    found = set()
    for path in sorted(consumer.rglob("*.py")):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            match = EXPECT_RE.search(line)
            if match:
                for code in match.group(1).replace(",", " ").split():
                    found.add((path.relative_to(consumer).as_posix(), lineno, code))
    return found


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(autouse=True)
def _no_result_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run the pipeline itself: the findings cache is off (test_findings_cache
    turns it on)."""
    monkeypatch.setenv("DRIFTAUDIT_NO_RESULT_CACHE", "1")


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr is a pipe under pytest: the periodic progress line would land in the
    stderr that tests read, after however long a loaded machine takes (test_progress
    sets its own interval)."""
    from driftaudit import progress

    monkeypatch.setattr(progress, "INTERVAL", 3600.0)


@pytest.fixture
def fake_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A loopback package index (tests/fake_index.py) as the only one: pip's config
    files and PIP_* settings of this machine are out of play."""
    from driftaudit.sources import configure_sources

    from .fake_index import FakeIndex

    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    index = FakeIndex(tmp_path / "index-files")
    monkeypatch.setenv("PIP_INDEX_URL", index.url)
    configure_sources()
    yield index
    configure_sources()
    index.close()
