"""Report forgery: consumer text (file names, string literals, the committed baseline,
messages quoting them) in every writer. Each vector is reproduced end to end through the
CLI, as the catalogue does: the consumer ships the text, the report must show it inert.

What "inert" means per format: on a terminal or in a CI log no control character (rich
renders without colour here, so none at all), no line that starts a GitHub Actions
workflow command (`::name::` after spaces) and no legacy `##[name]` anywhere; in Markdown
the block structure of a report of benign names, no link, image or raw HTML but ours; in
SARIF a percent-encoded relative URI that decodes back to the path; in the HTML page the
elements and attributes of a page of benign names, no element or attribute but the page's
own, the name back as the attribute's value (`visible`).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rich.console import Console

from driftaudit.cli import main
from driftaudit.codes import DEFAULT_CHANGED, IMPORT_MOVED, KEYWORD_REMOVED, SURFACE_ADDED
from driftaudit.drift.changes import ModuleRemoved
from driftaudit.drift.surface_changes import RouteAdded
from driftaudit.findings import Finding, Fix, group_facts
from driftaudit.report import (
    changes_markdown,
    findings_github,
    findings_html,
    findings_json,
    findings_markdown,
    findings_sarif,
    render_console,
)
from driftaudit.report.escape import visible
from driftaudit.report.markdown import GITHUB_LIMIT
from driftaudit.sources import SourceTree

from .conftest import FIXTURES, write_tree

CASE = FIXTURES / "themes" / "calls"
OLD, NEW = str(CASE / "old"), str(CASE / "new")
CALLS = (CASE / "consumer" / "calls.py").read_bytes()
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
FORMATS = ("console", "markdown", "github", "sarif", "json", "html")


def _cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err, out.err
    assert code in (0, 1), out.err
    return code, out.out, out.err


def _consumer(root: Path, names: list[bytes | str], text: bytes = CALLS) -> Path:
    """A consumer whose files, each a copy of the calls fixture, carry these names."""
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        raw = name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")
        with open(os.path.join(os.fsencode(root), raw), "wb") as handle:
            handle.write(text)
    return root


def _report(capsys, tmp_path, consumer: Path, fmt: str, *extra: str) -> str:
    """`compare` in `fmt`, written to --output (a file: UTF-8, as CI writes it)."""
    out = tmp_path / f"report.{fmt}"
    argv = ["compare", "--old", OLD, "--new", NEW, str(consumer), "--format", fmt, "-q"]
    _cli(capsys, [*argv, "--cache-dir", str(tmp_path / "cache"), "--output", str(out), *extra])
    return out.read_text(encoding="utf-8")


def assert_log_safe(text: str, commands: bool = False) -> None:
    """Nothing in `text` acts on a terminal or in an Actions log, line by line (but the
    workflow commands a line starts with, when they are the format: `commands`)."""
    for line in text.split("\n"):
        odd = [c for c in line if not c.isprintable()]
        assert not odd, (odd, line)
        assert commands or not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_OURS = re.compile(r"<details>\n<summary>(.*)</summary>\n|</details>\n")


def assert_markdown_inert(markdown: str) -> list:
    """No link, image, heading or HTML but the report's own; returns the block tokens."""
    tokens = _PARSER.parse(markdown)
    blocks = []
    for token in tokens:
        blocks.append((token.type, token.tag, token.nesting))
        if token.type == "html_block":
            match = _OURS.fullmatch(token.content)
            assert match, token.content
            assert re.sub(r"</?code>", "", match.group(1) or "").count("<") == 0, token.content
        for child in token.children or []:
            assert child.type in (
                "text",
                "code_inline",
                "softbreak",
                "strong_open",
                "strong_close",
            ), (child.type, child.content, token.content)
    headings = [t for t in blocks if t[0] == "heading_open"]
    assert headings[0][1] == "h1" and all(h[1] == "h2" for h in headings[1:]), headings
    return blocks


# the page's own elements and attributes: nothing else may appear, whatever a name holds
_HTML_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "script",
    "body",
    "h1",
    "h2",
    "h3",
    "p",
    "b",
    "small",
    "code",
    "pre",
    "span",
    "div",
    "section",
    "table",
    "tr",
    "th",
    "td",
    "label",
    "input",
    "select",
    "option",
}
_HTML_ATTRS = {
    "lang",
    "charset",
    "http-equiv",
    "content",
    "class",
    "id",
    "style",
    "title",
    "type",
    "name",
    "value",
    "checked",
    "data-ready",
    "data-errors",
    "data-severity",
    "data-code",
    "data-file",
}


class _Structure(HTMLParser):
    """The page as the browser's tokenizer sees it: elements, their attribute names, the
    values of the attributes that are data."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: Counter = Counter()
        self.files: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        self.tags[(tag, tuple(sorted(names)), names.get("class"))] += 1
        self.scripts += tag == "script"
        if tag == "div" and "data-file" in names:
            self.files.append(names["data-file"])

    def handle_endtag(self, tag):
        self.tags[("/" + tag,)] += 1


def assert_html_inert(page: str) -> _Structure:
    """Only the page's own elements and attributes, its two scripts; returns the structure."""
    parsed = _Structure()
    parsed.feed(page)
    parsed.close()
    for key in parsed.tags:
        if key[0].startswith("/"):
            continue
        assert key[0] in _HTML_TAGS, key
        assert set(key[1]) <= _HTML_ATTRS, key
    assert parsed.scripts == 2
    assert "##[" not in page
    return parsed


# ---- the vectors: file names -------------------------------------------------------------

# each: (what it attacks, the file name); every one must be shown inert in every format
NAMES = {
    "ansi-osc": "x\x1b]8;;https:\u2215\u2215e\x07link\x1b]8;;\x07\x1b[31mred\x9b2J.py",
    "newline-stop-commands": "evil\n::stop-commands::tok\n.py",
    "line-start-command": "::notice file=a.py::forged.py",
    "legacy-command": "n ##[warning]v1.py",
    "markdown-code-span": "b`q\n# H1 [l](x) <img src=x onerror=alert(1)>.py",
    "markdown-html": "<script>alert(1)<\u2215script>&#x202e;.py",
    "rich-markup": "[bold red]m[\u2215bold red]:smile:.py",
    "bidi": "\u202eyp.txt\u202c\u2066.py",
    "uri": "a b%20#?:x.py",
    "undecodable": b"bad\xff.py",
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("vector", sorted(NAMES))
def test_file_names_are_shown_inert(capsys, tmp_path, vector, fmt):
    name = NAMES[vector]
    text = _report(capsys, tmp_path, _consumer(tmp_path / "c", ["calls.py", name]), fmt)
    path = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    if fmt in ("console", "markdown"):
        assert_log_safe(text)
    if fmt == "markdown":
        assert_markdown_inert(text)
    if fmt == "github":
        lines = text.split("\n")
        assert lines[-1] == "" and all(
            re.match(r"::(error|warning|notice) file=", line) for line in lines[:-1]
        ), text
        assert_log_safe(text, commands=True)
    if fmt == "html":
        assert_log_safe(text, commands=True)
        assert visible(path) in assert_html_inert(text).files
    if fmt in ("sarif", "json"):
        assert "##[" not in text
        document = json.loads(text)
    if fmt == "json":
        assert path in {f["path"] for f in document["findings"]}
    if fmt == "sarif":
        jsonschema.Draft4Validator(SCHEMA).validate(document)
        run = document["runs"][0]
        assert run["columnKind"] == "unicodeCodePoints"
        uris = _uris(run)
        assert path in {unquote(uri, errors="surrogateescape") for uri in uris}
        for uri in uris:  # an RFC 3986 relative reference: no scheme, nothing unencoded
            assert re.fullmatch(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=@/]|%[0-9A-F]{2})+", uri), uri


def _uris(run: dict) -> set[str]:
    """Every place's URI: a fact's first place and its related locations."""
    return {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in run["results"]
        for loc in [*r["locations"], *r.get("relatedLocations", [])]
    }


def test_a_name_is_shown_with_its_escapes(capsys, tmp_path):
    consumer = _consumer(tmp_path / "c", [NAMES["ansi-osc"], NAMES["newline-stop-commands"]])
    console = _report(capsys, tmp_path, consumer, "console")
    assert "x\\x1b]8;;https:\u2215\u2215e\\x07link" in console
    assert "evil\\n::stop-commands::tok\\n.py" in console


def test_sarif_uri_is_percent_encoded(capsys, tmp_path):
    consumer = _consumer(tmp_path / "c", [NAMES["uri"], NAMES["undecodable"]])
    run = json.loads(_report(capsys, tmp_path, consumer, "sarif"))["runs"][0]
    uris = _uris(run)
    assert uris == {"a%20b%2520%23%3F%3Ax.py", "bad%FF.py"}
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        for r in run["results"]
    )


# ---- string literals: a message that quotes the consumer --------------------------------

# unidiff's error quotes the line it could not read: DA001's message carries it
BAD_PATCH = (
    "--- a/python/sglang/srt/distributed/parallel_state.py\n"
    "+++ b/python/sglang/srt/distributed/parallel_state.py\n"
    "@@ -1,2 +1,2 @@\n"
    " a\n"
    "?`\x1b]8;;x\x07 <img src=x> [evil](http://x) ##[warning]v1 `` ::error::y ** _a_ $x$\n"
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_message_quoting_the_consumer_is_inert(capsys, tmp_path, fmt):
    consumer = write_tree(tmp_path / "c", {"fix.patch": BAD_PATCH})
    text = _report(capsys, tmp_path, consumer, fmt)
    if fmt == "json":
        (finding,) = json.loads(text)["findings"]
        assert "\x1b]8;;x\x07 <img src=x>" in finding["message"]  # JSON keeps it exact
    elif fmt == "sarif":
        jsonschema.Draft4Validator(SCHEMA).validate(json.loads(text))
    else:
        assert_log_safe(text, commands=fmt in ("github", "html"))
        assert "\\x1b]8;;x\\x07" in text
    if fmt == "html":
        assert_html_inert(text)
        assert "&lt;img src=x&gt;" in text
    if fmt == "markdown":
        assert_markdown_inert(text)
        html = _PARSER.render(text)
        assert "&lt;img src=x&gt;" in html and "[evil](http://x)" in html
    assert "##[" not in text


# ---- the committed baseline ---------------------------------------------------------------

STALE = {
    "fingerprint": "0" * 32,
    "rule": "DA201\x1b[31m",
    "path": "x\n::error file=a.py::forged\n# H <img src=x>",
    "symbol": "`s`\n## [l](x) ##[warning]v1",
    "line": 1,
}


@pytest.mark.parametrize("fmt", ["console", "markdown", "github"])
def test_a_stale_baseline_entry_is_inert(capsys, tmp_path, fmt):
    consumer = _consumer(tmp_path / "c", ["calls.py"])
    (consumer / ".driftaudit-baseline.json").write_text(json.dumps({"findings": [STALE]}))
    argv = ["check", "--old", OLD, "--new", NEW, str(consumer), "--format", fmt, "-q"]
    _, out, err = _cli(capsys, [*argv, "--cache-dir", str(tmp_path / "cache")])
    assert "DA003" in out
    assert_log_safe(out, commands=fmt == "github")
    assert_log_safe(err)
    if fmt == "markdown":
        assert_markdown_inert(out)


# ---- stderr: notes, errors, progress -------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_note_naming_a_skipped_file_is_inert(capsys, tmp_path):
    consumer = _consumer(tmp_path / "c", ["calls.py"])
    os.mkfifo(consumer / "f\x1b[31m\n::error::forged ##[warning]v1.py")
    argv = ["compare", "--old", OLD, "--new", NEW, str(consumer), "--format", "json"]
    _, _, err = _cli(capsys, [*argv, "--cache-dir", str(tmp_path / "cache")])
    assert "not read: f\\x1b[31m\\n::error::forged" in err
    assert_log_safe(err)


def test_a_note_naming_the_baseline_reads_no_emoji_code(capsys, tmp_path):
    consumer = _consumer(tmp_path / "c", ["calls.py"])
    (consumer / "pyproject.toml").write_text(
        '[tool.driftaudit]\nbaseline = "b:smile:[bold]x.json"\n'
    )
    argv = ["check", "--old", OLD, "--new", NEW, str(consumer), "--update-baseline"]
    _, _, err = _cli(capsys, [*argv, "--cache-dir", str(tmp_path / "cache")])
    assert "b:smile:[bold]x.json" in err


def test_progress_reads_no_markup_from_the_config(capsys, tmp_path, monkeypatch):
    """The status line shows the consumer's `old` spec: rich read it as markup (a closing
    tag crashed the run with MarkupError)."""
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws the status as on a terminal
    consumer = _consumer(tmp_path / "c", ["calls.py"])
    (consumer / "pyproject.toml").write_text('[tool.driftaudit]\nold = "0.5.9[/bold]\\u001b[2J"\n')
    code = main(["check", "--new", NEW, str(consumer), "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "0.5.9[/bold]\\x1b[2J" in err and "\x1b[2J" not in err


def test_an_error_quoting_the_consumer_is_one_inert_line(capsys, tmp_path):
    consumer = _consumer(tmp_path / "c", ["calls.py"])
    (consumer / "pyproject.toml").write_text(
        '[tool.driftaudit]\nold = "x\\n::error::forged ##[warning]v1\\u001b[2J"\n'
    )
    code = main(["check", "--new", NEW, str(consumer), "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert_log_safe(err)


# ---- the fixer: its diff and its summary -------------------------------------------------


def _fix(capsys, tmp_path, consumer: Path) -> tuple[str, str]:
    argv = ["fix", "--old", OLD, "--new", NEW, str(consumer), "--unsafe-fixes"]
    _, out, err = _cli(capsys, [*argv, "--cache-dir", str(tmp_path / "cache")])
    return out, err


def _applies(patch: str, consumer: Path, tmp_path: Path, tool: list[str]) -> Path:
    """The patch applied by `tool` to a copy of the consumer: the copy."""
    copy = tmp_path / f"copy-{tool[0]}"
    shutil.copytree(consumer, copy)
    data = patch.encode("utf-8", "surrogateescape")
    done = subprocess.run(tool, cwd=copy, input=data, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode() + done.stdout.decode()
    return copy


PATCH_TOOLS = [
    pytest.param(["git", "apply", "-p1"], id="git-apply"),
    pytest.param(
        ["patch", "-p1", "-s", "-f"],
        id="patch",
        marks=pytest.mark.skipif(shutil.which("patch") is None, reason="no GNU patch here"),
    ),
]

# file names that broke the diff's headers, content that broke its lines
PATCH_CASES = {
    "newline-in-name": ("evil\n+++ b.py", CALLS),
    "quote-and-backslash": ('q"\\x.py', CALLS),
    "form-feed-line": ("calls.py", CALLS.replace(b"\n\n\ndef run", b"\n#\x0c\n\ndef run")),
    "no-final-newline": (
        "calls.py",
        b"from sglang.srt.distributed import init_group\n"
        b"init_group([0], 0, 'nccl', use_stream=False)",
    ),
}


@pytest.mark.parametrize("tool", PATCH_TOOLS)
@pytest.mark.parametrize("case", sorted(PATCH_CASES))
def test_the_fix_diff_applies_exactly(capsys, tmp_path, case, tool):
    name, text = PATCH_CASES[case]
    consumer = _consumer(tmp_path / "c", [name], text)
    patch, _ = _fix(capsys, tmp_path, consumer)
    assert patch.startswith(("--- a/", '--- "a/'))
    copy = _applies(patch, consumer, tmp_path, tool)
    assert sorted(os.listdir(copy)) == sorted(os.listdir(consumer))  # no other file made
    main(
        [
            "fix",
            "--old",
            OLD,
            "--new",
            NEW,
            str(consumer),
            "--unsafe-fixes",
            "--apply",
            "-q",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    capsys.readouterr()
    assert (copy / name).read_bytes() == (consumer / name).read_bytes() != text


def test_the_fix_summary_is_inert(capsys, tmp_path):
    consumer = _consumer(
        tmp_path / "c", [NAMES["newline-stop-commands"], NAMES["ansi-osc"], NAMES["legacy-command"]]
    )
    _, err = _fix(capsys, tmp_path, consumer)
    assert "findings need a human" in err
    assert_log_safe(err)


def test_the_fix_diff_on_a_terminal_is_inert(capsys, tmp_path, monkeypatch):
    consumer = _consumer(
        tmp_path / "c",
        [NAMES["ansi-osc"]],
        CALLS.replace(b"def run(opts):", b"def run(opts):  # \x1b]0;title\x07 ##[warning]v1"),
    )
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    out, _ = _fix(capsys, tmp_path, consumer)
    assert "+++ " in out and "\\x1b]0;title\\x07" in out
    assert_log_safe(out)


# ---- `driftaudit diff`: text from the sglang trees ---------------------------------------

ROUTE = '@app.get("/x`\\x1b[31m <img src=x> ##[warning]v1\\n# H [l](y)")\ndef f():\n    pass\n'


@pytest.mark.parametrize("fmt", ["console", "markdown", "json", "sarif", "html"])
def test_diff_shows_sglang_text_inert(capsys, tmp_path, fmt):
    head = "from fastapi import FastAPI\napp = FastAPI()\n"
    old = write_tree(
        tmp_path / "old", {"sglang/__init__.py": "", "sglang/srt/http_server.py": head}
    )
    new = write_tree(
        tmp_path / "new", {"sglang/__init__.py": "", "sglang/srt/http_server.py": head + ROUTE}
    )
    out = tmp_path / "out"
    argv = [
        "diff",
        "--old",
        str(old),
        "--new",
        str(new),
        "--format",
        fmt,
        "-q",
        "--output",
        str(out),
    ]
    _cli(capsys, [*argv, "--cache-dir", str(tmp_path / "cache")])
    text = out.read_text(encoding="utf-8")
    assert "route" in text.lower()
    if fmt in ("console", "markdown"):
        assert_log_safe(text)
    if fmt == "markdown":
        assert_markdown_inert(text)
    if fmt == "html":  # the route's line is shown as evidence: as text
        assert_log_safe(text, commands=True)
        assert_html_inert(text)
        assert "&lt;img src=x&gt;" in text
    if fmt == "sarif":
        jsonschema.Draft4Validator(SCHEMA).validate(json.loads(text))
    assert "##[" not in text


# ---- property: no consumer text changes the structure of a report ------------------------

PIECES = [
    "\x1b",
    "\x1b]8;;http://x\x07",
    "\x07",
    "\x9b",
    "\x00",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\x0c",
    "\x85",
    "\u2028",
    "`",
    "``",
    "```",
    "::",
    "::error::",
    "##[",
    "##[warning]",
    "%",
    "%0A",
    "%25",
    "]",
    "[",
    "[bold]",
    "[/bold]",
    ":smile:",
    "<",
    ">",
    "<img src=x>",
    '"',
    "'",
    '" onclick="x',
    "</script>",
    "<!--",
    "</details>",
    "&#x202e;",
    "&amp;",
    "\u202e",
    "\u2066",
    "\u200b",
    "\udcff",
    "|",
    "*",
    "_",
    "~",
    "$",
    "#",
    "# ",
    "\\",
    " ",
    "  ",
    "- ",
    "1. ",
    "> ",
    "===",
    "@",
    "!",
    "(",
    ")",
    "😀",
]
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=8).map("".join)
PATH = TEXT.map(lambda t: "p" + t)  # a path is never empty
CODES = [IMPORT_MOVED, KEYWORD_REMOVED, DEFAULT_CHANGED, SURFACE_ADDED]


@st.composite
def findings_of(draw) -> list[Finding]:
    out = []
    for _ in range(draw(st.integers(1, 6))):
        fixed = draw(st.booleans())
        out.append(
            Finding(
                draw(st.sampled_from(CODES)),
                draw(PATH),
                draw(st.integers(1, 10**6)),
                draw(st.integers(1, 500)),
                draw(TEXT),
                draw(TEXT),
                draw(st.one_of(st.none(), TEXT)) or None,
                draw(st.one_of(st.none(), TEXT)) or None,
                Fix(draw(TEXT), {"kind": "x"} if draw(st.booleans()) else None) if fixed else None,
            )
        )
    return out


def _benign(findings: list[Finding]) -> list[Finding]:
    """The same findings with every text replaced by a plain word, equal ones by the same
    word and empty ones left empty: what the structure must not differ from."""
    words: dict[str, str] = {}

    def word(text):
        return text and words.setdefault(text, f"w{len(words)}")

    out = []
    for f in findings:
        fix = Fix(word(f.fix.description), f.fix.edit) if f.fix else None
        out.append(
            Finding(
                f.code,
                word(f.path),
                f.line,
                f.column,
                word(f.symbol),
                word(f.message),
                word(f.old_location),
                word(f.new_location),
                fix,
            )
        )
    return out


TREES = st.builds(
    lambda spec, version: SourceTree(spec, "directory", Path("/x"), version or None), TEXT, TEXT
)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _console(findings, old, new, consumer) -> str:
    out = io.StringIO()
    render_console(
        Console(file=out, no_color=True, soft_wrap=True, width=60), findings, old, new, consumer
    )
    return out.getvalue()


@PROPERTY
@given(findings_of(), TREES, TREES, TEXT)
def test_console_structure_holds(findings, old, new, consumer):
    text = _console(findings, old, new, consumer)
    assert_log_safe(text)
    plain = SourceTree("a", "directory", Path("/x"), "1")
    assert text.count("\n") == _console(_benign(findings), plain, plain, "c").count("\n")


def _blocks(markdown: str) -> Counter:
    return Counter(assert_markdown_inert(markdown))


@PROPERTY
@given(findings_of(), TREES, TREES, TEXT, TEXT)
def test_markdown_structure_holds(findings, old, new, consumer, preamble):
    text = findings_markdown(findings, old, new, consumer, preamble=preamble)
    assert_log_safe(text)
    plain = SourceTree("a", "directory", Path("/x"), "1")
    benign = findings_markdown(_benign(findings), plain, plain, "c", preamble=preamble and "w")
    assert _blocks(text) == _blocks(benign)


@PROPERTY
@given(findings_of(), TREES, TREES, TEXT, TEXT)
def test_html_structure_holds(findings, old, new, consumer, preamble):
    page = findings_html(findings, old, new, consumer, preamble=preamble)
    assert_log_safe(page, commands=True)
    parsed = assert_html_inert(page)
    assert sorted(parsed.files) == sorted(visible(f.path) for f in findings)
    plain = SourceTree("a", "directory", Path("/x"), "1")
    benign = findings_html(_benign(findings), plain, plain, "c", preamble=preamble and "w")
    assert parsed.tags == assert_html_inert(benign).tags


@PROPERTY
@given(findings_of())
def test_github_structure_holds(findings):
    lines = findings_github(findings).split("\n")
    assert lines.pop() == "" and len(lines) == len(findings)
    assert_log_safe("\n".join(lines), commands=True)
    for line, finding in zip(lines, findings, strict=True):
        command, _, properties = line.split("::", 2)[1].partition(" ")
        assert (
            command == {"error": "error", "warning": "warning", "info": "notice"}[finding.severity]
        )
        keys = [pair.split("=", 1)[0] for pair in properties.split(",")]
        assert keys == ["file", "line", "col", "endLine", "endColumn", "title"]


@PROPERTY
@given(findings_of(), TREES, TREES)
def test_sarif_and_json_structure_holds(findings, old, new):
    text = findings_sarif(findings, old, new, "c", base=Path("/x"))
    assert "##[" not in text
    document = json.loads(text)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    results = document["runs"][0]["results"]
    facts = group_facts(findings)
    assert len(results) == len(facts)
    for result, group in zip(results, facts, strict=True):
        places = [*result["locations"], *result.get("relatedLocations", [])]
        assert len(places) == len(group)
        for place, finding in zip(places, group, strict=True):
            location = place["physicalLocation"]["artifactLocation"]
            assert unquote(location["uri"], errors="surrogateescape") == finding.path
        assert result["message"]["text"] == group[0].message
    report = findings_json(findings, old, new, "c")
    assert "##[" not in report
    assert [f["path"] for f in json.loads(report)["findings"]] == [f.path for f in findings]


# ---- Markdown stays under GitHub's limit -------------------------------------------------


def _many(facts: int, places: int, path: str = "pkg/module_{}.py", message: str = "m {}"):
    return [
        Finding(
            KEYWORD_REMOVED if i % 2 else DEFAULT_CHANGED,
            path.format(j),
            j + 1,
            5,
            f"sglang.srt.mod{i}.fn",
            message.format(i),
            "sglang/a.py:1",
            "sglang/b.py:2",
            Fix("drop it", {"kind": "x"}),
        )
        for i in range(facts)
        for j in range(places)
    ]


TREE = SourceTree("0.5.9", "index", Path("/x"), "0.5.9")
HUGE = {
    "many-facts": _many(4000, 3),
    "one-fact-many-places": _many(1, 20000),
    "long-fields": _many(300, 2, path="d/" + "\x1b" * 5000 + "{}", message="`" * 10**5 + "{}"),
    "astral": _many(2000, 2, path="😀" * 150 + "{}.py"),
}


@pytest.mark.parametrize("case", sorted(HUGE))
def test_markdown_stays_under_the_comment_limit(case):
    findings = HUGE[case]
    text = findings_markdown(findings, TREE, TREE, "c", preamble="Not reported: 3 known.")
    assert len(text.encode("utf-16-le")) // 2 < GITHUB_LIMIT
    html = _PARSER.render(text)
    assert html.count("<details>") == html.count("</details>") > 0
    assert f"at {len(findings)} places" in text  # the counts are of everything
    assert re.search(r"and \d+ more (finding|place)s?", text)
    assert_markdown_inert(text)


def test_markdown_of_a_small_report_is_not_cut():
    findings = _many(20, 3)
    text = findings_markdown(findings, TREE, TREE, "c")
    assert "more" not in text and _PARSER.render(text).count("<li>") == len(findings)


def test_diff_markdown_stays_under_the_comment_limit():
    changes = [
        RouteAdded(f"/route/{i}/" + "x" * 50, None, f"sglang/f{i % 500}.py:{i}")
        for i in range(50000)
    ]
    changes.append(ModuleRemoved("sglang.zz", "sglang/zz.py:1", None))  # last by name
    text = changes_markdown(changes, TREE, TREE)
    assert len(text.encode("utf-16-le")) // 2 < GITHUB_LIMIT
    assert re.search(r"and \d+ more changes in \d+ files", text)
    assert text.index("sglang/zz.py") < text.index("sglang/f0.py")  # a break first
    assert_markdown_inert(text)
