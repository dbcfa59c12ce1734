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
