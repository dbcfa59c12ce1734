"""reports/regenerate.py: pins read from released metadata, pages and the index table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .conftest import write_tree

REPORTS = Path(__file__).parent.parent / "reports"


@pytest.fixture(scope="module")
def regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", REPORTS / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sglang_pin_of_a_released_package(tmp_path, regenerate):
    metadata = (
        "Metadata-Version: 2.1\nName: x\nVersion: 1\n"
        "Requires-Dist: sglang-router==0.2.2; extra == 'ci'\n"
        "Requires-Dist: torch\n"
        "Requires-Dist: sglang[tracing]==0.5.10.post1 ; sys_platform == 'linux' and extra == 's'\n"
    )
    write_tree(tmp_path, {"x-1.dist-info/METADATA": metadata})
    assert regenerate._sglang_pin(tmp_path) == "0.5.10.post1"
    write_tree(tmp_path / "loose", {"x-1.dist-info/METADATA": "Requires-Dist: sglang>=0.5\n"})
    assert regenerate._sglang_pin(tmp_path / "loose") is None


def test_every_page_is_listed_and_renders(regenerate):
    entries = json.loads(
        json.dumps(regenerate.tomllib.loads((REPORTS / "audits.toml").read_text()))
    )
    pages = sorted(p for p in REPORTS.glob("*.md") if p.name != "README.md")
    assert len(pages) == len(entries["audit"])
    index = MarkdownIt("commonmark").enable("table").render((REPORTS / "README.md").read_text())
    parser = MarkdownIt("commonmark").enable("table")
    for page in pages:
        assert f'href="{page.name}"' in index
        text = page.read_text()
        row = json.loads(regenerate._ROW.search(text).group("json"))
        html = parser.render(text)
        assert html.startswith("<h1>") and html.count("<li>") == row["findings"]
