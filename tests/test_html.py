"""`--format html`: the page's contents, and the page in a real browser (headless Chromium,
Debian's package: `apt-get install -y chromium`): its script runs without an error, the
counts and a finding's text are there, the filters (from the URL fragment) hide what they
should. The browser tests skip only when no chromium is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from driftaudit.cli import main

from .conftest import FIXTURES

CASE = FIXTURES / "themes" / "calls"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install -y chromium)"
)


class _Elements(HTMLParser):
    """Every element's (tag, attributes), and the text inside each element with an id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def elements(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    parser.close()
    return parser


def _consumer(root: Path) -> Path:
    """Two files, both the calls fixture: 11 errors and 1 warning each."""
    (root / "pkg").mkdir(parents=True)
    text = (CASE / "consumer" / "calls.py").read_bytes()
    (root / "calls.py").write_bytes(text)
    (root / "pkg" / "more.py").write_bytes(text)
    return root


def _compare(tmp_path: Path, fmt: str) -> str:
    out = tmp_path / f"report.{fmt}"
    consumer = tmp_path / "c" if (tmp_path / "c").is_dir() else _consumer(tmp_path / "c")
    argv = ["compare", "--old", str(CASE / "old"), "--new", str(CASE / "new"), str(consumer)]
    argv += ["--format", fmt, "-q", "--cache-dir", str(tmp_path / "cache"), "--output", str(out)]
    assert main(argv) == 1
    return out.read_text(encoding="utf-8")


@pytest.fixture
def reports(tmp_path) -> tuple[str, dict, Path]:
    page = _compare(tmp_path, "html")
    document = json.loads(_compare(tmp_path, "json"))
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    return page, document, tmp_path / "page.html"


def test_the_page_is_self_contained(reports):
    page, _, _ = reports
    parsed = elements(page)
    for tag, attrs in parsed.elements:
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
        assert not attrs.get("src") and not attrs.get("href"), (tag, attrs)
    policy = [a["content"] for t, a in parsed.elements if a.get("http-equiv")]
    assert policy and policy[0].startswith("default-src 'none'")


def test_the_page_shows_every_finding_with_its_evidence_and_fix(reports):
    page, document, _ = reports
    parsed = elements(page)
    summary = {s: n for s, n in document["summary"].items() if s != "facts"}  # by severity
    cards = re.findall(r'id="count-(\w+)"><b>(\d+)</b>', page)
    assert {s: int(n) for s, n in cards} == summary
    places = [a for t, a in parsed.elements if "place" in a.get("class", "").split()]
    assert len(places) == len(document["findings"])
    assert sorted(a["data-file"] for a in places) == sorted(f["path"] for f in document["findings"])
    text = "".join(parsed.text)
    for finding in document["findings"]:
        assert finding["message"] in text
        for side in ("old_location", "new_location"):
            if finding[side]:
                assert finding[side] in text
    # the moved keyword's fix is shown as a diff: the line without it
    removed = [f for f in document["findings"] if f["rule"] == "DA201" and f["fix"]["autofixable"]]
    assert removed
    assert page.count('<span class="del">-') >= len(removed)
    # the evidence: the old tree's line is shown
    old_path, _, line = removed[0]["old_location"].rpartition(":")
    old_line = (CASE / "old" / old_path).read_text().split("\n")[int(line) - 1]
    assert old_line.strip() in text


def _dom(page: Path, tmp_path: Path, fragment: str = "") -> str:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    argv = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom"]
    done = subprocess.run(
        [*argv, page.as_uri() + fragment], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _root_attrs(dom: str) -> dict:
    html = next(a for t, a in elements(dom).elements if t == "html")
    return html


def _visible_places(dom: str) -> list[dict]:
    return [
        a
        for t, a in elements(dom).elements
        if "place" in a.get("class", "").split() and "hidden" not in a
    ]


@needs_chromium
def test_the_page_in_a_browser(reports, tmp_path):
    page, document, path = reports
    dom = _dom(path, tmp_path)
    root = _root_attrs(dom)
    assert root["data-ready"] == "1", "the page's script did not finish"
    assert root["data-errors"] == "0", "the page's script raised"
    assert root["data-shown"] == str(len(document["findings"]))
    assert len(_visible_places(dom)) == len(document["findings"])
    assert document["findings"][0]["message"] in "".join(elements(dom).text)


@needs_chromium
@pytest.mark.parametrize(
    "fragment, keep",
    [
        ("#severity=warning", lambda f: f["severity"] == "warning"),
        ("#severity=error,info", lambda f: f["severity"] in ("error", "info")),
        ("#file=pkg%2Fmore.py", lambda f: f["path"] == "pkg/more.py"),
        (
            "#severity=error&file=calls.py",
            lambda f: f["severity"] == "error" and f["path"] == "calls.py",
        ),
        ("#file=not-a-file", lambda f: True),  # an unknown file: all files
    ],
)
def test_the_filters_in_a_browser(reports, tmp_path, fragment, keep):
    _, document, path = reports
    dom = _dom(path, tmp_path, fragment)
    root = _root_attrs(dom)
    assert root["data-ready"] == "1" and root["data-errors"] == "0"
    expected = sorted(f["path"] for f in document["findings"] if keep(f))
    assert 0 < len(expected)
    assert root["data-shown"] == str(len(expected))
    assert sorted(a["data-file"] for a in _visible_places(dom)) == expected
    facts = [a for t, a in elements(dom).elements if "fact" in a.get("class", "").split()]
    for attrs in facts:  # a fact with no place shown is hidden itself
        if "hidden" not in attrs:
            assert keep({"severity": attrs["data-severity"], "path": "calls.py"}) or keep(
                {"severity": attrs["data-severity"], "path": "pkg/more.py"}
            )


@needs_chromium
def test_a_script_error_is_caught(tmp_path):
    """The marker the tests read does see an error (the check can fail)."""
    page = tmp_path / "broken.html"
    from driftaudit.report.html import _ON_ERROR

    page.write_text(
        f"<html><head><script>{_ON_ERROR}</script></head><body><script>nope();</script>"
    )
    assert _root_attrs(_dom(page, tmp_path)).get("data-errors") == "1"


@needs_chromium
def test_the_diff_page_in_a_browser(tmp_path):
    argv = ["diff", "--old", str(CASE / "old"), "--new", str(CASE / "new"), "-q"]
    argv += ["--cache-dir", str(tmp_path / "cache")]
    assert main([*argv, "--format", "json", "--output", str(tmp_path / "d.json")]) == 0
    changes = json.loads((tmp_path / "d.json").read_text())["changes"]
    assert main([*argv, "--format", "html", "--output", str(tmp_path / "d.html")]) == 0
    page = (tmp_path / "d.html").read_text(encoding="utf-8")
    text = "".join(elements(page).text)
    assert all(c["message"] in text for c in changes)
    root = _root_attrs(_dom(tmp_path / "d.html", tmp_path))
    assert root["data-ready"] == "1" and root["data-errors"] == "0"
    assert root["data-shown"] == str(len(changes))
