"""Where a consumer touches sglang's non-Python surfaces: CLI flags, env vars, HTTP routes.

One walk over the consumer reads every candidate file once: shell scripts (`*.sh`,
`*.bash`, an sh/bash shebang), Dockerfiles (`RUN`/`CMD`/`ENTRYPOINT`, `ENV`, `ARG`), YAML
(line by line, no YAML library), JSON, TOML (line by line), and the Python files that
pass a cheap text filter, read with `ast`.

Flags. A flag is sglang's when it follows an sglang launcher on its command line
(`python -m sglang.launch_server`, `sglang serve`, `sglang_router.launch_server`;
continuation lines included; in Python an argv list or command string holding the
launcher, what is later appended to such a variable, `other_args=` of
`popen_launch_server`; in shell also the variables expanded on that line), when it
carries a wrapping prefix (`--sglang-tp-size` -> `--tp-size`, anywhere), or, in
YAML/JSON/TOML, when it is a key under a section named like `sglang`, `sglang_args`,
`server_args`, `sglang_config` (or a prefixed key: `sglang_tp_size:`). A section that
holds an `overrides`/`server_args`/`args`/`kwargs`/`engine_args` mapping contributes only
the keys inside it: its other keys describe the consumer's own deployment. In Python,
`args.sglang_<field>`, `getattr(args, "sglang_<field>")` and class fields named so give
`--<field>` (context "python-attr"). Flags come back in sglang's spelling; the caller maps
them to ServerArgs fields, so nothing is filtered by a flag list here.

Prefixes. Those passed in are used as given; `detect_prefixes` adds `--sglang-` as soon
as one `--sglang-<letter>` flag appears, and another `--<words>-sglang-` or
`--[<words>-]sgl-` prefix only when a Python keyword or assignment named `*prefix*` spells
it (`flag_prefix="eval-sglang"`), or when two distinct flags carry it and one of them is
also written with `--sglang-` or is a hallmark sglang flag (`--tp-size`, ...).

Env vars `SGLANG_*`/`SGL_*`, kind "set" or "read": Python (`os.environ[...]`, `.get`,
`.setdefault`, `getenv`, `in os.environ`, `monkeypatch.setenv`, env dict literals and
subscripts, keyword arguments, `envs.SGLANG_X.get()`/`.set()`; any other string naming
one exactly counts as a read), shell (`export`, `X=1 cmd`, `X=1`, `$X`/`${X}`; array and
flag-holder variables such as `SGLANG_ARGS=(...)` are the script's own and skipped),
YAML/JSON/TOML (keys, `- name: X` under an env section, `- X=1` items), Dockerfile
(`ENV`, `ARG`, `$X` reads).

URLs. The path of string literals, f-strings and `+` concatenations that look like HTTP
routes (scheme, host, port and query stripped, a leading field taken as the base URL, an
inner one written `{}`), with the method of the call using them (`requests.post`,
`httpx`, `session.get`, `client.post`, a consumer `post(...)` helper), the keys of the
`json=`/`data=` payload (a dict literal, or a dict variable assigned earlier in the same
function plus its `payload["k"] = ...` additions), and the routes given to a consumer's
own request helper (`def _make_request(self, endpoint, payload): requests.post(
f"{base}/{endpoint}", json=payload)` called as `self._make_request("flush_cache", {})`,
in any file). Shell: `curl` (method from `-X`, or POST with `-d`). Not routes: route
definitions (`@app.get("/x")`), file names, file-system paths (`/tmp/..`, strings bound
to `*_dir`, `*checkpoint*`, ... or passed to `Path`/`open`), other schemes (`s3://`), a
bare version prefix (`/v1`), paths whose first part is a field (`/{}/runs`). A plain
string that reaches no call is still reported when it starts with "/" (method None): the
caller keeps the routes sglang knows.

Python files are not parsed whole: see "Python files" below.

Not handled: heredocs, multi-line TOML arrays and YAML flow collections, flags held in
variables built in another function or file, request helpers whose route parameter is
not the last part of the path.
"""

from __future__ import annotations

import ast
import bisect
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.usage.exports import dotted
from driftaudit.usage.files import SKIP_DIRS


@dataclass
class FlagUsage:
    path: str
    line: int
    column: int
    flag: str  # the sglang flag as sglang spells it: "--tp-size"
    written: str  # as written: "--sglang-tp-size", "--tp-size", "sglang_tp_size"
    prefix: str | None  # the wrapping prefix ("--sglang-"), None when direct
    context: str  # shell | yaml | json | toml | dockerfile | python-argv | python-attr
    value: str | None  # the value that follows when evident, else None


@dataclass
class EnvUsage:
    path: str
    line: int
    column: int
    name: str  # SGLANG_* / SGL_*
    kind: str  # "set" | "read"
    context: str  # python | shell | yaml | json | toml | dockerfile


@dataclass
class UrlUsage:
    path: str
    line: int
    column: int
    route: str  # "/generate", "/v1/models/{}"
    method: str | None  # "GET", "POST", ... when the call shows it
    payload_keys: list[str] = field(default_factory=list)


@dataclass
class SurfaceUsages:
    flags: list[FlagUsage] = field(default_factory=list)
    envs: list[EnvUsage] = field(default_factory=list)
    urls: list[UrlUsage] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)  # wrapping prefixes in effect


# ---- shared patterns ---------------------------------------------------------------

ENV_NAME = re.compile(r"(?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*")
_ENV_ASSIGN = re.compile(r"((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)\+?=")
_ENV_ASSIGN_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_])((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)=")
_ENV_READ = re.compile(r"\$\{?((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)")
_ENV_JSON_KEY = re.compile(r"""["']((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)["']\s*:""")
_FLAG = re.compile(r"--[A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9])?")
_SHELL_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_LAUNCH_MODULES = {"sglang.launch_server", "sglang_router.launch_server"}
_LAUNCHER_TEXT = re.compile(r"sglang(?:_router)?\.launch_server\b|\bsglang[ \t]+serve\b")
_SECTION = re.compile(
    r"(?:sglang|sgl)(?:[_-](?:server[_-])?(?:args|arguments|kwargs|config|configs|options"
    r"|params|settings|overrides|server|engine[_-]args))?|(?:sglang[_-])?server[_-]args",
    re.I,
)
_OVERRIDES = re.compile(
    r"overrides|server[_-]args|args|kwargs|engine[_-]args|(?:sglang|sgl)[_-]args", re.I
)
_ENV_SECTION = re.compile(r"env|envs|environment|env[_-]?vars|extra[_-]?envs?", re.I)
_ARGV_KEYS = {"args", "arguments", "argv", "command", "cmd", "entrypoint"}
_PLACEHOLDER = "\x00"  # a token that is not a literal (an f-string field, a variable)
_SHEBANG = re.compile(rb"#![^\n]*\b(?:ba|da|k|z)?sh\b")
_MAX_DATA_FILE = 4_000_000  # bytes; larger YAML/JSON/TOML files are data, not config


class _Text:
    """A file's text with offset -> (line, column) lookup, both 1-based."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def offset(self, line: int, column0: int) -> int:
        return self.starts[line - 1] + column0


# ---- prefixes ----------------------------------------------------------------------

_SGLANG_PREFIX = re.compile(r"--sglang-([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)")
_OTHER_PREFIX = re.compile(
    r"--((?:[a-z][a-z0-9]*-)*?(?:sglang|sgl))-([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)"
)
_HALLMARK_FLAGS = {
    "model-path", "tp-size", "dp-size", "ep-size", "mem-fraction-static", "attention-backend",
    "context-length", "chunked-prefill-size", "max-running-requests", "cuda-graph-max-bs",
    "enable-dp-attention", "tokenizer-path", "trust-remote-code", "port", "host",
}  # fmt: skip
_PREFIX_KEYWORD = re.compile(r"""\b\w*prefix\w*\s*[=:]\s*["'](-{0,2}[a-z][\w-]*)["']""", re.I)
_PREFIX_CORE = re.compile(r"(?:[a-z][a-z0-9]*-)*(?:sglang|sgl)")


def _norm_prefix(prefix: str) -> str:
    core = prefix.strip().strip("-_").replace("_", "-")
    return f"--{core}-" if core else ""


def detect_prefixes(root: Path, texts: dict[str, str]) -> list[str]:
    """Wrapping prefixes evident in the consumer's texts (relpath -> text).

    `--sglang-` when one `--sglang-<letter>` flag appears anywhere. Another
    `--<words>-sglang-` or `--[<words>-]sgl-` prefix only when a Python keyword or
    assignment named `*prefix*` spells it (`flag_prefix="eval-sglang"`,
    `dest_prefix="eval_sglang_"`), or when two distinct flags carry it and one of them
    is also written `--sglang-<flag>` or is a hallmark sglang flag (`--tp-size`, ...):
    `--dashboard-sglang-scrape-mode` is the consumer's own flag, not a wrapper.
    `root` names the tree the texts come from (unused).
    """
    del root
    found: set[str] = set()
    seen: dict[str, set[str]] = {}
    wrapped: set[str] = set()
    for rel, text in texts.items():
        if "sgl" not in text:
            continue
        at = text.find("--sglang-")
        while at >= 0:
            m = _SGLANG_PREFIX.match(text, at)
            before = text[at - 1] if at else ""
            if m and not (before.isalnum() or before in ("-", "_")):
                found.add("--sglang-")
                wrapped.add(m.group(1))
            at = text.find("--sglang-", at + 9)
        at = text.find("-sgl")
        while at >= 0:
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "-"):
                start -= 1
            m = _OTHER_PREFIX.match(text, start)
            if m and (start == 0 or text[start - 1] != "_"):
                prefix = f"--{m.group(1)}-"
                if prefix != "--sglang-":
                    seen.setdefault(prefix, set()).add(m.group(2))
            at = text.find("-sgl", at + 4)
        if rel.endswith(".py") and "prefix" in text:
            at = text.find("prefix")
            while at >= 0:
                line_start = text.rfind("\n", 0, at) + 1
                line_end = text.find("\n", at)
                line = text[line_start : line_end if line_end >= 0 else len(text)]
                if "sgl" in line:
                    for m in _PREFIX_KEYWORD.finditer(line):
                        core = m.group(1).strip("-_").replace("_", "-")
                        if _PREFIX_CORE.fullmatch(core):
                            found.add(f"--{core}-")
                at = text.find("prefix", line_start + len(line) + 1) if line_end >= 0 else -1
    for prefix, flags in seen.items():
        if len(flags) >= 2 and (flags & wrapped or flags & _HALLMARK_FLAGS):
            found.add(prefix)
    return sorted(found)


class _Prefixes:
    def __init__(self, prefixes: list[str]):
        self.dash = sorted({p for p in prefixes if p}, key=len, reverse=True)
        self.py = [(p.strip("-").replace("-", "_") + "_", p) for p in self.dash]
        self.kebab = [(p.strip("-") + "-", p) for p in self.dash]

    def split_flag(self, name: str) -> tuple[str, str] | None:
        """`--sglang-tp-size` -> ("--tp-size", "--sglang-")."""
        for prefix in self.dash:
            if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isalpha():
                return "--" + name[len(prefix) :], prefix
        return None

    def split_name(self, name: str) -> tuple[str, str] | None:
        """`sglang_tp_size` / `sglang-tp-size` -> ("--tp-size", "--sglang-")."""
        for forms in (self.py, self.kebab):
            for form, prefix in forms:
                if name.startswith(form) and name[len(form) : len(form) + 1].isalpha():
                    return "--" + name[len(form) :].replace("_", "-"), prefix
        return None


# ---- argv analysis (shell words, Python lists, YAML/JSON sequences) ---------------


@dataclass
class _FlagHit:
    index: int  # token index
    flag: str
    written: str
    prefix: str | None
    value: str | None


def _is_launcher(tokens: list[str], i: int) -> int:
    """Index of the last token of an sglang launcher starting at token i, else -1."""
    token = tokens[i]
    if token in _LAUNCH_MODULES or token.endswith("/sglang.launch_server"):
        return i
    if token.rsplit("/", 1)[-1] == "sglang" and i + 1 < len(tokens) and tokens[i + 1] == "serve":
        return i + 1
    return -1


def _has_launcher(tokens: list[str]) -> bool:
    return any(_is_launcher(tokens, i) >= 0 for i in range(len(tokens)))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _clean_value(value: str) -> str | None:
    if not value or _PLACEHOLDER in value or "$" in value or "`" in value:
        return None
    return value


def _argv_flags(tokens: list[str], prefixes: _Prefixes, launched: bool = False) -> list[_FlagHit]:
    """Flags among tokens: wrapped ones anywhere, the others after an sglang launcher
    (or all of them when `launched`: the tokens are known to reach sglang's parser)."""
    hits: list[_FlagHit] = []
    active = launched
    skip_to = -1
    for i, token in enumerate(tokens):
        if i <= skip_to:
            continue
        last = _is_launcher(tokens, i)
        if last >= 0:
            active = True
            skip_to = last
            continue
        if not token.startswith("--"):
            continue
        name, eq, inline = token.partition("=")
        if not eq:
            name = name.rstrip(".,;:!?)]}'\"")  # prose: "set --sglang-tokenizer-path."
        if not _FLAG.fullmatch(name):
            continue
        wrapped = prefixes.split_flag(name)
        if wrapped:
            flag, prefix = wrapped
        elif active:
            flag, prefix = name, None
        else:
            continue
        value = None
        if eq:
            value = _clean_value(inline)
        elif i + 1 < len(tokens):
            nxt = tokens[i + 1]
            if not (nxt.startswith("-") and not _is_number(nxt)):
                value = _clean_value(nxt)
        hits.append(_FlagHit(i, flag, name, prefix, value))
    return hits


# ---- shell -------------------------------------------------------------------------


@dataclass
class _Word:
    text: str  # unquoted
    start: int  # raw offsets in the file text
    end: int
    spans: list[tuple[int, int]] = field(default_factory=list)  # quoted parts with blanks


def _closing_brace(text: str, i: int, end: int) -> int:
    """Index of the `}` closing the `{` at i (nested braces and quotes skipped)."""
    depth = 0
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            close = text.find(c, i + 1, end)
            while c == '"' and close > 0 and text[close - 1] == "\\":
                close = text.find(c, close + 1, end)
            if close < 0:
                return end - 1
            i = close + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return end - 1


def _shell_segments(text: str, start: int = 0, end: int | None = None) -> list[list[_Word]]:
    """Shell text -> commands (lists of words). A newline ends a command except after a
    backslash or inside `X=( ... )`; `;`, `&&`, `||`, `|`, `&`, `$(`, backquotes and
    parentheses also do; `#` at the start of a word opens a comment."""
    end = len(text) if end is None else end
    segments: list[list[_Word]] = [[]]
    chars: list[str] = []
    word_start = -1
    spans: list[tuple[int, int]] = []
    array = 0

    def flush(at: int) -> None:
        nonlocal chars, word_start, spans
        if word_start >= 0:
            segments[-1].append(_Word("".join(chars), word_start, at, spans))
        chars, word_start, spans = [], -1, []

    def cut() -> None:
        if segments[-1]:
            segments.append([])

    i = start
    while i < end:
        c = text[i]
        if c == "\\":
            if text[i + 1 : i + 2] == "\n" or text[i + 1 : i + 3] == "\r\n":
                flush(i)
                i += 2 if text[i + 1] == "\n" else 3
                continue
            if word_start < 0:
                word_start = i
            chars.append(text[i + 1 : i + 2])
            i += 2
            continue
        if c in " \t\r":
            flush(i)
            i += 1
            continue
        if c == "\n":
            flush(i)
            if not array:
                cut()
            i += 1
            continue
        if c == "#" and word_start < 0:
            newline = text.find("\n", i, end)
            i = end if newline < 0 else newline
            continue
        if c in "'\"":
            j = i + 1
            content: list[str] = []
            while j < end and text[j] != c:
                if c == '"' and text[j] == "\\" and j + 1 < end:
                    nxt = text[j + 1]
                    if nxt != "\n":
                        content.append(nxt if nxt in '"\\$`' else "\\" + nxt)
                    j += 2
                    continue
                content.append(text[j])
                j += 1
            if word_start < 0:
                word_start = i
            inner = "".join(content)
            chars.append(inner)
            if any(ch in inner for ch in " \t\n"):
                spans.append((i + 1, min(j, end)))
            i = j + 1
            continue
        if c == "$" and text[i + 1 : i + 2] == "{":
            close = _closing_brace(text, i + 1, end)
            if word_start < 0:
                word_start = i
            chars.append(text[i : close + 1])
            i = close + 1
            continue
        if (c == "$" and text[i + 1 : i + 2] == "(") or c == "`":
            flush(i)
            cut()
            i += 1 if c == "`" else 2
            continue
        if c == "(":
            if word_start >= 0 and _SHELL_ASSIGN.fullmatch("".join(chars)):
                chars.append("(")
                flush(i + 1)
                array += 1
            else:
                flush(i)
                cut()
            i += 1
            continue
        if c == ")":
            flush(i)
            array = max(0, array - 1)
            cut()
            i += 1
            continue
        if c in ";|&":
            if c == "&" and (text[i - 1 : i] in ("<", ">") or text[i + 1 : i + 2] == ">"):
                if word_start < 0:
                    word_start = i
                chars.append(c)  # a redirection: 2>&1, &>
                i += 1
                continue
            flush(i)
            cut()
            while i < end and text[i] in ";|&":
                i += 1
            continue
        if word_start < 0:
            word_start = i
        run = _PLAIN_RUN.match(text, i, end)
        chars.append(run.group() if run else c)
        i = run.end() if run else i + 1
    flush(end)
    return [segment for segment in segments if segment]


_PLAIN_RUN = re.compile(r"[^\s\\'\"$`();|&#]+")


class _Sink:
    """Collects the usages of one file, with its path and position lookup."""

    def __init__(self, rel: str, text: _Text, out: SurfaceUsages, prefixes: _Prefixes):
        self.rel = rel
        self.text = text
        self.out = out
        self.prefixes = prefixes

    def flag(self, offset: int, hit: _FlagHit, context: str) -> None:
        line, column = self.text.pos(offset)
        self.out.flags.append(
            FlagUsage(self.rel, line, column, hit.flag, hit.written, hit.prefix, context, hit.value)
        )

    def env(self, offset: int, name: str, kind: str, context: str) -> None:
        line, column = self.text.pos(offset)
        self.out.envs.append(EnvUsage(self.rel, line, column, name, kind, context))

    def url(self, offset: int, route: str, method: str | None, keys: list[str]) -> None:
        line, column = self.text.pos(offset)
        self.out.urls.append(UrlUsage(self.rel, line, column, route, method, list(keys)))


_CURL_DATA = {"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json"}
_CURL_DATA |= {"-F", "--form"}
_CURL_VALUE_OPTS = {
    "-H", "--header", "-o", "--output", "-u", "--user", "-m", "--max-time", "-w",
    "--write-out", "--connect-timeout", "-A", "--user-agent", "-b", "--cookie", "-c",
    "--cookie-jar", "-e", "--referer", "--retry", "--retry-delay", "--retry-max-time",
    "-x", "--proxy", "--cacert", "--cert", "--key", "-T", "--upload-file", "--resolve",
    "--unix-socket",
}  # fmt: skip


class _ShellScan:
    """Shell text (a script, a Dockerfile RUN, a YAML block) -> flags, env vars, curl URLs."""

    def __init__(self, sink: _Sink, context: str):
        self.sink = sink
        self.context = context
        self.local_vars: set[str] = set()  # arrays and flag holders: the script's own
        self.launch_vars: set[str] = set()  # variables expanded on an sglang command line

    def scan(self, start: int = 0, end: int | None = None, launched: bool = False) -> None:
        segments = _shell_segments(self.sink.text.text, start, end)
        for words in segments:
            tokens = [w.text for w in words]
            for i in range(len(tokens)):
                last = _is_launcher(tokens, i)
                if last >= 0:
                    for w in words[last + 1 :]:
                        self.launch_vars.update(_VAR_REF.findall(w.text))
                    break
            m = _SHELL_ASSIGN.match(tokens[0])
            if m:
                value = tokens[0][m.end() :]
                if value.startswith("(") or "--" in value:
                    self.local_vars.add(m.group(1))
        for words in segments:
            self._segment(words, launched)

    def _segment(self, words: list[_Word], launched: bool) -> None:
        sink, text = self.sink, self.sink.text.text
        tokens = [w.text for w in words]
        head = 0
        while head < len(tokens) and _SHELL_ASSIGN.match(tokens[head]):
            head += 1
        command = tokens[head:]
        if head and tokens[head - 1].endswith("("):
            command = []  # X=( a b c ): the elements are not a command
        if head and _SHELL_ASSIGN.match(tokens[0]).group(1) in self.launch_vars:
            launched = True
        for i, w in enumerate(words):
            m = _ENV_ASSIGN.match(w.text)
            if m and not (i < head and not command and m.group(1) in self.local_vars):
                at = text.find(m.group(1), w.start, w.end)
                sink.env(at if at >= 0 else w.start, m.group(1), "set", self.context)
            raw = text[w.start : w.end]
            if "$" in raw:
                for r in _ENV_READ.finditer(raw):
                    if r.group(1) not in self.local_vars:
                        sink.env(w.start + r.start(1), r.group(1), "read", self.context)
            if "{" in raw and "SGL" in raw:
                for r in _ENV_JSON_KEY.finditer(raw):
                    sink.env(w.start + r.start(1), r.group(1), "set", self.context)
        if command and command[0] in ("export", "declare", "typeset", "unset", "readonly"):
            for w in words[head + 1 :]:
                if ENV_NAME.fullmatch(w.text):
                    sink.env(w.start, w.text, "set", self.context)
        for hit in _argv_flags(tokens, sink.prefixes, launched):
            w = words[hit.index]
            at = text.find(hit.written, w.start, w.end)
            sink.flag(at if at >= 0 else w.start, hit, self.context)
        # quoted command lines inside words: "--tp 2", bash -c "python -m sglang..."
        active = launched
        for i, w in enumerate(words):
            if _is_launcher(tokens, i) >= 0:
                active = True
            for s, e in w.spans:
                inner = text[s:e]
                if "--" in inner or "SGL" in inner or "curl" in inner:
                    self.scan(s, e, active)
        for i, token in enumerate(tokens):
            if token == "curl" or token.endswith("/curl"):
                self._curl(words[i + 1 :])
                break

    def _curl(self, words: list[_Word]) -> None:
        method = None
        data: str | None = None
        urls: list[_Word] = []
        i = 0
        while i < len(words):
            t = words[i].text
            if t in ("-X", "--request") and i + 1 < len(words):
                method = words[i + 1].text.upper()
                i += 1
            elif t.startswith("-X") and len(t) > 2:
                method = t[2:].upper()
            elif t in _CURL_DATA and i + 1 < len(words):
                data = words[i + 1].text
                i += 1
            elif t in _CURL_VALUE_OPTS:
                i += 1
            elif not t.startswith("-"):
                urls.append(words[i])
            i += 1
        keys: list[str] = []
        if data is not None:
            try:
                payload = json.loads(data)
            except ValueError:
                payload = None
            if isinstance(payload, dict):
                keys = [str(k) for k in payload]
        method = method or ("POST" if data is not None else "GET")
        for w in urls:
            template = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", "{}", w.text)
            route = _route(template) if "/" in template else None
            if route:
                at = self.sink.text.text.find(route.split("{}")[0], w.start, w.end)
                self.sink.url(at if at >= 0 else w.start, route, method, keys)


# ---- routes ------------------------------------------------------------------------

_FS_ROOTS = {
    "tmp", "home", "root", "usr", "dev", "proc", "sys", "etc", "var", "opt", "mnt", "bin",
    "lib", "lib64", "sbin", "srv", "run", "boot", "media", "data", "workspace", "workspaces",
    "nfs", "scratch", "shared", "cache", "checkpoints", "models", "datasets", "code",
    "content", "private", "Users", "Volumes", "cpfs", "gpfs", "lustre", "fsx", "efs",
}  # fmt: skip
_SEGMENT = re.compile(r"[A-Za-z0-9_.~-]*(?:\{\}[A-Za-z0-9_.~-]*)*")
_FILE_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_SCHEME_HOST = re.compile(r"^(?:https?|wss?)://[^/?#]*")
_OTHER_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_PORT = re.compile(r"^:(?:\d+|\{\})(?=/)")
_HOST_PORT = re.compile(r"^(?:[A-Za-z0-9_.-]+|\[[0-9a-fA-F:]+\]):(?:\d+|\{\})(?=/)")


def _route(template: str) -> str | None:
    """A URL or path template (fields written `{}`) -> its route, or None."""
    t = template.strip()
    m = _SCHEME_HOST.match(t)
    if m:
        t = t[m.end() :]
    elif _OTHER_SCHEME.match(t):
        return None  # file://, s3://, mem://: not the HTTP server
    else:
        while t.startswith("{}"):  # the base URL
            t = t[2:]
        m = _PORT.match(t) or _HOST_PORT.match(t)
        if m:
            t = t[m.end() :]
    t = t.split("?", 1)[0].split("#", 1)[0]
    if not t.startswith("/") or t.startswith("//"):
        return None
    parts = t[1:].split("/")
    if parts[-1] == "":
        parts.pop()
    if not parts or parts[0] in _FS_ROOTS:
        return None
    for part in parts:
        if not part or part.startswith(".") or not _SEGMENT.fullmatch(part):
            return None
        if _FILE_EXT.search(part):
            return None
    if "{}" in parts[0] or (len(parts) == 1 and re.fullmatch(r"v\d+", parts[0])):
        return None  # sglang's routes start with a name; `/v1` alone is a base URL
    return "/" + "/".join(parts)


# ---- Python ------------------------------------------------------------------------

_HTTP_VERBS = {"get", "post", "put", "delete", "patch", "head", "options"}
_HTTP_RECEIVERS = ("requests", "httpx", "session", "client", "http", "aiohttp", "sess")
_ROUTE_DEFINERS = {
    "add_api_route", "add_route", "route", "api_route", "mount", "websocket", "add_url_rule",
    "add_websocket_route",
}  # fmt: skip
_APP_NAMES = {"app", "router", "api", "bp", "blueprint", "api_router", "server"}
_ENV_SETTERS = {"setdefault", "putenv", "setenv", "delenv", "unsetenv"}
_ENV_RECEIVER = re.compile(r"(?:^|_)(?:envs?|environ|environment)$", re.I)
_DOC_KEYWORDS = {"help", "description", "epilog", "usage", "msg", "message", "doc"}
_BASE_WORDS = {
    "url", "urls", "base", "host", "hostname", "addr", "address", "endpoint", "server", "api",
    "uri", "router", "ip", "port", "origin",
}  # fmt: skip
_URL_KEYWORDS = {"url", "endpoint", "uri"}
_PAYLOAD_KEYWORDS = {"json", "data", "payload", "body", "json_data", "content"}
_HELPER_ARG = re.compile(r"/?[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z0-9_]+)*")
_VERB_IN_NAME = re.compile(r"(?:^|_)(post|put|patch|delete)(?:_|$)|(?:^|_)(?:a?sync|http)_get$")


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _callee(call: ast.Call) -> tuple[str | None, str]:
    """(the called name, the last name of its receiver, lowercased)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id, ""
    if isinstance(func, ast.Attribute):
        receiver = func.value
        while isinstance(receiver, ast.Call):
            receiver = receiver.func
        if isinstance(receiver, ast.Attribute):
            return func.attr, receiver.attr.lower()
        if isinstance(receiver, ast.Name):
            return func.attr, receiver.id.lower()
        return func.attr, ""
    return None, ""


def _is_str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _template(node: ast.expr) -> tuple[str, list[ast.expr]] | None:
    """A string expression -> (its text with `{}` for each field, the field expressions).

    A plain string keeps `{name}` placeholders as `{}` (`"/v1/models/{model}"`)."""
    if _is_str(node):
        return re.sub(r"\{[^{}]*\}", "{}", node.value), []
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        fields: list[ast.expr] = []
        for value in node.values:
            if _is_str(value):
                parts.append(value.value)
            else:
                parts.append("{}")
                fields.append(value.value if isinstance(value, ast.FormattedValue) else value)
        return "".join(parts), fields
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _template(node.left) or ("{}", [node.left])
        right = _template(node.right) or ("{}", [node.right])
        return left[0] + right[0], left[1] + right[1]
    return None


_PATHISH = re.compile(
    r"(?:^|_)(?:dir|dirs|directory|root|file|filename|files|ckpt|checkpoint"
    r"|checkpoints|load|save|cache|home|folder|hf|megatron|src|dst|output|input|mount"
    r"|location|repo|model|models|tokenizer|workdir|cwd)(?:_|$)",
    re.I,
)
_PATH_FUNCS = {
    "Path", "PurePath", "PosixPath", "open", "join", "exists", "isdir", "isfile", "makedirs",
    "mkdir", "listdir", "glob", "copy", "copytree", "rmtree", "chdir", "abspath", "realpath",
    "expanduser", "relpath", "dirname", "basename", "startswith", "endswith", "removeprefix",
}  # fmt: skip


def _is_pathish(node: ast.AST) -> bool:
    """A name, attribute, subscript key or string that names a file-system path:
    `hf_checkpoint`, `args.save_dir`, `kwargs["checkpoint_path"]` (a bare `path` may be
    a URL path: `ProxyRequest(path="/v1/chat/completions")`)."""
    if isinstance(node, ast.Name):
        return bool(_PATHISH.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_PATHISH.search(node.attr))
    if isinstance(node, ast.Subscript):
        return _is_pathish(node.slice)
    if _is_str(node):
        return bool(_PATHISH.search(node.value)) and " " not in node.value
    return False


def _looks_like_base(expr: ast.expr) -> bool:
    """Does the expression in front of a path name a base URL (`base_url`, `self.host`)?"""
    while isinstance(expr, (ast.Call, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    parts = dotted(expr)
    if not parts:
        return False
    words = set(parts[-1].lower().strip("_").split("_"))
    return bool(words & _BASE_WORDS) or parts[-1].lower().endswith("url")


class _Scope:
    """What one function (or the module body) holds, for lookups within it."""

    def __init__(self, node: ast.AST):
        self.node = node
        self.assigns: dict[str, list[tuple[int, ast.expr]]] = {}
        self.sub_keys: dict[str, list[tuple[int, str]]] = {}
        self.loops: dict[str, list[ast.Constant]] = {}
        self.calls: list[ast.Call] = []
        self.strings: list[ast.expr] = []
        self.binops: list[ast.BinOp] = []
        self.seqs: list[ast.List | ast.Tuple] = []
        self.attrs: list[ast.Attribute] = []
        self.dicts: list[ast.Dict] = []
        self.subscripts: list[ast.Subscript] = []
        self.compares: list[ast.Compare] = []
        self.aug: list[ast.AugAssign] = []
        self.class_fields: list[ast.Name] = []

    def latest(self, name: str, line: int) -> ast.expr | None:
        best = None
        for lineno, value in self.assigns.get(name, ()):
            if lineno <= line:
                best = value
        return best


@dataclass
class _Helper:
    """A consumer function requesting `<base>/<param>`: `_make_request(self, endpoint, ...)`."""

    route_index: int  # parameter index, self counted
    method: str | None
    payload_index: int | None
    method_like: bool  # its first parameter is self/cls


@dataclass
class _PendingCall:
    """A call passing a route-like string; it names a route if its callee is a helper."""

    rel: str
    name: str
    attr_call: bool
    args: list[tuple[str, int, int] | None]  # constant string arguments: value, line, column
    payloads: list[list[str] | None]  # payload keys of each argument, when evident


class _PythonScan:
    """One parsed tree (a whole file or one unit of it, see `_PyFile`) -> usages."""

    def __init__(self, sink: _Sink, lines: list[str], imported: Callable[[], set[str]],
                 helpers: dict[str, _Helper], pending: list[_PendingCall]):  # fmt: skip
        self.sink = sink
        self.lines = lines
        self.imported = imported  # () -> root names the file imports (`miles.x.sglang_y`)
        self.full = True
        self.helpers = helpers
        self.pending = pending
        self.skip: set[int] = set()  # string nodes that are prose
        self.env_done: set[int] = set()
        self.url_done: set[int] = set()  # string nodes read already, or route definitions
        self.pathish: set[int] = set()  # strings bound to a path-like name: not routes

    # -- positions --

    def _col0(self, line: int, col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return col
        return len(text.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def _start(self, node: ast.AST) -> int:
        return self.sink.text.offset(node.lineno, self._col0(node.lineno, node.col_offset))

    def _end(self, node: ast.AST) -> int:
        line = node.end_lineno
        return self.sink.text.offset(line, self._col0(line, node.end_col_offset))

    def _find(self, node: ast.AST, needle: str, after: int = -1) -> int:
        """Offset of needle in the node's source (the node's start when absent)."""
        start = self._start(node)
        at = self.sink.text.text.find(needle, max(start, after), self._end(node))
        return at if at >= 0 else start

    def _attr_offset(self, attr: ast.Attribute) -> int:
        line = attr.end_lineno
        return self.sink.text.offset(line, self._col0(line, attr.end_col_offset) - len(attr.attr))

    # -- walk --

    def run(self, tree: ast.Module, hot: list[int] | None = None) -> None:
        """Read a tree. Expressions are visited only in statements that touch a `hot`
        line (sorted, 1-based; None: all); elsewhere only assignments are recorded."""
        self.skip, self.env_done, self.url_done, self.pathish = set(), set(), set(), set()
        self.full = hot is None
        scopes: list[ast.AST] = [tree]
        while scopes:
            scope, nested = self._collect(scopes.pop(), hot)
            scopes.extend(nested)
            self._envs(scope)
            self._flags(scope)
            self._urls(scope)

    @staticmethod
    def _touches(hot: list[int] | None, node: ast.AST) -> bool:
        if hot is None:
            return True
        i = bisect.bisect_left(hot, node.lineno)
        return i < len(hot) and hot[i] <= node.end_lineno

    def _collect(self, root: ast.AST, hot: list[int] | None) -> tuple[_Scope, list[ast.AST]]:
        scope = _Scope(root)
        nested: list[ast.AST] = []
        statements: list[ast.stmt] = list(root.body)
        expressions: list[ast.AST] = []
        while statements:
            stmt = statements.pop()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for decorator in stmt.decorator_list:
                    self.url_done.update(id(sub) for sub in ast.walk(decorator))
                if isinstance(stmt, ast.ClassDef):
                    statements.extend(stmt.body)
                    for item in stmt.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            scope.class_fields.append(item.target)
                    continue
                nested.append(stmt)
                args = stmt.args
                for default in [*args.defaults, *args.kw_defaults, *stmt.decorator_list]:
                    if default is not None and self._touches(hot, default):
                        expressions.append(default)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Constant, ast.JoinedStr)):
                self.skip.add(id(stmt.value))  # docstrings and other bare strings
                continue
            if hasattr(stmt, "body") or isinstance(stmt, ast.Match):
                if isinstance(stmt, (ast.For, ast.AsyncFor)):
                    self._loop(scope, stmt)
                for name, value in ast.iter_fields(stmt):
                    if name in ("body", "orelse", "finalbody"):
                        statements.extend(value)
                    elif name in ("handlers", "cases"):
                        for part in value:
                            statements.extend(part.body)
                    elif isinstance(value, ast.AST) and self._touches(hot, value):
                        expressions.append(value)
                    elif isinstance(value, list):
                        expressions.extend(
                            v
                            for v in value
                            if isinstance(v, ast.AST) and self._touches_item(hot, v)
                        )
                continue
            self._record_assignment(scope, stmt)
            if self._touches(hot, stmt):
                expressions.append(stmt)
        while expressions:
            node = expressions.pop()
            self._classify(scope, node)
            expressions.extend(ast.iter_child_nodes(node))
        return scope, nested

    def _touches_item(self, hot: list[int] | None, node: ast.AST) -> bool:
        if hasattr(node, "lineno"):
            return self._touches(hot, node)
        return any(self._touches_item(hot, child) for child in ast.iter_child_nodes(node))

    def _record_assignment(self, scope: _Scope, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.AugAssign):
            scope.aug.append(stmt)
            return
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if _is_pathish(target):
                self.pathish.add(id(stmt.value))
            if isinstance(target, ast.Name):
                scope.assigns.setdefault(target.id, []).append((stmt.lineno, stmt.value))
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and _is_str(target.slice)
            ):
                key = (stmt.lineno, target.slice.value)
                scope.sub_keys.setdefault(target.value.id, []).append(key)

    @staticmethod
    def _loop(scope: _Scope, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        if isinstance(node.target, ast.Name) and isinstance(node.iter, (ast.Tuple, ast.List)):
            constants = [e for e in node.iter.elts if _is_str(e)]
            if constants:
                scope.loops[node.target.id] = constants

    def _classify(self, scope: _Scope, node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                scope.strings.append(node)
        elif isinstance(node, ast.JoinedStr):
            scope.strings.append(node)
            for value in node.values:
                self.skip.add(id(value))
                if isinstance(value, ast.FormattedValue) and value.format_spec is not None:
                    self.skip.add(id(value.format_spec))
        elif isinstance(node, ast.Call):
            scope.calls.append(node)
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _PATH_FUNCS:
                self.pathish.update(id(arg) for arg in node.args)
        elif isinstance(node, ast.Attribute):
            scope.attrs.append(node)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                scope.binops.append(node)
        elif isinstance(node, (ast.List, ast.Tuple)):
            scope.seqs.append(node)
        elif isinstance(node, ast.Dict):
            scope.dicts.append(node)
            for key, value in zip(node.keys, node.values, strict=True):
                if key is not None and _is_pathish(key):
                    self.pathish.add(id(value))
        elif isinstance(node, ast.Subscript):
            scope.subscripts.append(node)
        elif isinstance(node, ast.Compare):
            scope.compares.append(node)
            operands = [node.left, *node.comparators]
            if any(_is_pathish(operand) for operand in operands):
                self.pathish.update(id(operand) for operand in operands)
        elif isinstance(node, ast.keyword):
            if node.arg in _DOC_KEYWORDS:
                self.skip.add(id(node.value))
            elif node.arg and _PATHISH.search(node.arg):
                self.pathish.add(id(node.value))
        elif isinstance(node, ast.comprehension):
            self._loop(scope, node)

    # -- env vars --

    def _env(self, node: ast.AST, name: str, kind: str) -> None:
        self.env_done.add(id(node))
        self.sink.env(self._find(node, name), name, kind, "python")

    def _envs(self, scope: _Scope) -> None:
        def env_of(node: ast.AST | None) -> str | None:
            if _is_str(node) and ENV_NAME.fullmatch(node.value):
                return node.value
            return None

        for call in scope.calls:
            name, receiver = _callee(call)
            env = env_of(call.args[0]) if call.args else None
            if env and name:
                lowered = name.lower()
                setter = lowered in _ENV_SETTERS or ("env" in lowered and "set" in lowered)
                if lowered == "pop" and "environ" in receiver:
                    setter = True
                self._env(call.args[0], env, "set" if setter else "read")
            for keyword in call.keywords:
                if keyword.arg and ENV_NAME.fullmatch(keyword.arg):
                    self.sink.env(self._start(keyword), keyword.arg, "set", "python")
        for sub in scope.subscripts:
            env = env_of(sub.slice)
            if env:
                store = isinstance(sub.ctx, (ast.Store, ast.Del))
                self._env(sub.slice, env, "set" if store else "read")
        for compare in scope.compares:
            env = env_of(compare.left)
            if env and any(isinstance(op, (ast.In, ast.NotIn)) for op in compare.ops):
                self._env(compare.left, env, "read")
        for node in scope.dicts:
            for key in node.keys:
                env = env_of(key)
                if env:
                    self._env(key, env, "set")
        setters = {
            id(call.func.value)
            for call in scope.calls
            if isinstance(call.func, ast.Attribute)
            and call.func.attr in ("set", "override", "clear", "unset", "reset", "setdefault")
        }
        for attr in scope.attrs:
            if ENV_NAME.fullmatch(attr.attr):
                parts = dotted(attr.value)
                if parts and _ENV_RECEIVER.search(parts[-1]):
                    store = isinstance(attr.ctx, (ast.Store, ast.Del)) or id(attr) in setters
                    kind = "set" if store else "read"
                    self.sink.env(self._attr_offset(attr), attr.attr, kind, "python")
        for node in scope.strings:
            if id(node) in self.env_done or id(node) in self.skip:
                continue
            if isinstance(node, ast.Constant):
                if ENV_NAME.fullmatch(node.value):
                    self._env(node, node.value, "read")
                    continue
                text = node.value
            else:
                text = _template(node)[0]
            if "SGL" in text and "=" in text:
                cursor = -1
                for m in _ENV_ASSIGN_IN_TEXT.finditer(text):
                    at = self._find(node, m.group(1), cursor)
                    cursor = at + 1
                    self.sink.env(at, m.group(1), "set", "python")

    # -- flags --

    def _launching(self, node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if _is_str(sub) and (sub.value in _LAUNCH_MODULES or _LAUNCHER_TEXT.search(sub.value)):
                return True
        return False

    def _flags(self, scope: _Scope) -> None:
        launch_vars = {  # only a tree read in full names a launcher
            name
            for name, values in scope.assigns.items()
            if self.full and any(self._launching(value) for _, value in values)
        }
        launched: set[int] = set()
        for call in scope.calls:
            name, _ = _callee(call)
            if name and "launch_server" in name:
                for keyword in call.keywords:
                    if keyword.arg in ("other_args", "args", "extra_args", "server_args"):
                        if isinstance(keyword.value, ast.Name):
                            launch_vars.add(keyword.value.id)
                        launched.add(id(keyword.value))
        for name in launch_vars:
            launched.update(id(value) for _, value in scope.assigns.get(name, ()))
        for call in scope.calls:
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("append", "extend", "insert")
                and isinstance(func.value, ast.Name)
                and func.value.id in launch_vars
            ):
                launched.update(id(arg) for arg in call.args)
        for aug in scope.aug:
            if isinstance(aug.target, ast.Name) and aug.target.id in launch_vars:
                launched.add(id(aug.value))
        for binop in scope.binops:  # cmd = base + ["--x", "1"]
            if id(binop) in launched:
                launched.update((id(binop.left), id(binop.right)))
        for seq in scope.seqs:
            self._seq_flags(seq, id(seq) in launched)
        for node in scope.strings:
            if id(node) not in self.skip:
                self._string_flags(node, id(node) in launched)
        if self.sink.prefixes.py:
            self._attr_flags(scope)

    def _seq_flags(self, seq: ast.List | ast.Tuple, launched: bool) -> None:
        tokens: list[str] = []
        for element in seq.elts:
            if isinstance(element, ast.Constant) and element.value is not None:
                tokens.append(str(element.value))
            else:
                tokens.append(_PLACEHOLDER)
        if not any(t.startswith("--") for t in tokens):
            return
        launched = launched and not _has_launcher(tokens)
        for hit in _argv_flags(tokens, self.sink.prefixes, launched):
            node = seq.elts[hit.index]
            self.sink.flag(self._find(node, hit.written), hit, "python-argv")

    def _string_flags(self, node: ast.expr, launched: bool) -> None:
        if isinstance(node, ast.Constant):
            text = node.value
        else:
            text = _template(node)[0].replace("{}", _PLACEHOLDER)
        if "--" not in text:
            return
        has_launcher = _LAUNCHER_TEXT.search(text) is not None
        if not (launched or has_launcher or any(p in text for p in self.sink.prefixes.dash)):
            return
        launched = launched and not has_launcher
        cursor = -1
        for words in _shell_segments(text):
            for hit in _argv_flags([w.text for w in words], self.sink.prefixes, launched):
                at = self._find(node, hit.written, cursor)
                cursor = at + 1
                self.sink.flag(at, hit, "python-argv")

    def _attr_flags(self, scope: _Scope) -> None:
        prefixes = self.sink.prefixes
        for attr in scope.attrs:
            split = prefixes.split_name(attr.attr) if "_" in attr.attr else None
            if split and _root_name(attr.value) not in self.imported():
                hit = _FlagHit(0, split[0], attr.attr, split[1], None)
                self.sink.flag(self._attr_offset(attr), hit, "python-attr")
        for call in scope.calls:
            if (
                isinstance(call.func, ast.Name)
                and call.func.id in ("getattr", "setattr", "hasattr", "delattr")
                and len(call.args) >= 2
                and _is_str(call.args[1])
            ):
                split = prefixes.split_name(call.args[1].value)
                if split:
                    hit = _FlagHit(0, split[0], call.args[1].value, split[1], None)
                    self.sink.flag(self._find(call.args[1], hit.written), hit, "python-attr")
        for target in scope.class_fields:
            split = prefixes.split_name(target.id)
            if split:
                hit = _FlagHit(0, split[0], target.id, split[1], None)
                self.sink.flag(self._start(target), hit, "python-attr")

    # -- URLs --

    def _urls(self, scope: _Scope) -> None:
        self._route_definitions(scope)
        uses: dict[int, list[tuple[str | None, list[str]]]] = {}
        for call in scope.calls:
            request = self._http_call(call)
            if request is None:
                continue
            url, method, payload = request
            keys = self._payload_keys(scope, payload, call.lineno)
            target = self._resolve(scope, url, call.lineno)
            if target is None:
                continue
            uses.setdefault(id(target), []).append((method, keys))
            self._helper(scope, target, method, payload)
            self._loop_routes(scope, target, method, keys)
        # concatenations first, outermost first: their parts are not read again
        for binop in sorted(
            scope.binops, key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset)
        ):
            if id(binop) in self.url_done:
                continue
            for sub in ast.walk(binop):
                self.url_done.add(id(sub))
            self._url_node(binop, uses.get(id(binop)))
        for node in scope.strings:
            if id(node) not in self.url_done and id(node) not in self.skip:
                self.url_done.add(id(node))
                self._url_node(node, uses.get(id(node)))
        self._pending_calls(scope)

    def _http_call(self, call: ast.Call) -> tuple[ast.expr, str | None, ast.expr | None] | None:
        name, receiver = _callee(call)
        if name is None:
            return None
        lowered = name.lower()
        httpish = any(word in receiver for word in _HTTP_RECEIVERS)
        url_index = 0
        if lowered in _HTTP_VERBS:
            if receiver in _APP_NAMES and self._bare_route(call):
                return None  # a route definition: app.get("/health")(handler)
            if not httpish and (lowered == "get" or lowered in ("head", "options")):
                return None  # dict.get, getattr-like helpers
            method: str | None = lowered.upper()
        elif lowered == "request" and httpish:
            method = call.args[0].value.upper() if call.args and _is_str(call.args[0]) else None
            url_index = 1
        elif lowered == "urlopen":
            method = None
        else:
            m = _VERB_IN_NAME.search(lowered)
            if not m:
                return None
            method = (m.group(1) or "get").upper()
        url = next((k.value for k in call.keywords if k.arg in _URL_KEYWORDS), None)
        if url is None and len(call.args) > url_index:
            url = call.args[url_index]
        if url is None:
            return None
        payload = next((k.value for k in call.keywords if k.arg in _PAYLOAD_KEYWORDS), None)
        if (
            payload is None
            and method in ("POST", "PUT", "PATCH")
            and len(call.args) > url_index + 1
        ):
            payload = call.args[url_index + 1]
        return url, method, payload

    @staticmethod
    def _bare_route(call: ast.Call) -> bool:
        return bool(call.args) and _is_str(call.args[0]) and call.args[0].value.startswith("/")

    def _route_definitions(self, scope: _Scope) -> None:
        for call in scope.calls:
            func = call.func
            if isinstance(func, ast.Call) and isinstance(func.func, ast.Attribute):
                self.url_done.update(id(arg) for arg in func.args[:1])  # app.get("/x")(fn)
            if isinstance(func, ast.Attribute):
                if func.attr in _ROUTE_DEFINERS:
                    self.url_done.update(id(arg) for arg in call.args[:1])
                elif func.attr in _HTTP_VERBS and self._bare_route(call):
                    parts = dotted(func.value)
                    if parts and parts[-1].lower() in _APP_NAMES:
                        self.url_done.add(id(call.args[0]))

    def _resolve(self, scope: _Scope, node: ast.expr, line: int, depth: int = 0):
        """The string expression a URL argument holds (through local names), or None."""
        if isinstance(node, ast.BoolOp):
            node = node.values[0]
        if isinstance(node, ast.Name) and depth < 3:
            if node.id in scope.loops:
                return node
            value = scope.latest(node.id, line)
            return None if value is None else self._resolve(scope, value, line, depth + 1)
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            return node
        return None

    def _payload_keys(self, scope: _Scope, payload: ast.expr | None, line: int) -> list[str]:
        if isinstance(payload, ast.BoolOp):
            payload = payload.values[0]
        name = payload.id if isinstance(payload, ast.Name) else None
        if name:
            payload = scope.latest(name, line)
        keys: list[str] = []
        if isinstance(payload, ast.Dict):
            keys = [k.value for k in payload.keys if _is_str(k)]
        elif isinstance(payload, ast.Call) and isinstance(payload.func, ast.Name):
            if payload.func.id == "dict":
                keys = [k.arg for k in payload.keywords if k.arg]
        if name:
            since = max((n for n, _ in scope.assigns.get(name, ()) if n <= line), default=0)
            for lineno, key in scope.sub_keys.get(name, ()):
                if since <= lineno <= line and key not in keys:
                    keys.append(key)
        return keys

    def _url_node(self, node: ast.expr, uses: list[tuple[str | None, list[str]]] | None) -> None:
        template = _template(node)
        if template is None:
            return
        text, fields = template
        if "/" not in text:
            return
        if not uses:
            if id(node) in self.pathish:
                return
            if text.startswith("{}"):
                if not fields or not _looks_like_base(fields[0]):
                    return
            elif not (text.startswith("/") or "://" in text):
                return
        route = _route(text)
        if route is None:
            return
        offset = self._route_offset(node, route)
        for method, keys in uses or [(None, [])]:
            self.sink.url(offset, route, method, keys)

    def _route_offset(self, node: ast.expr, route: str) -> int:
        head = route.split("{}")[0]
        return self._find(node, head) if head else self._start(node)

    def _loop_routes(self, scope: _Scope, target: ast.expr, method: str | None,
                     keys: list[str]) -> None:  # fmt: skip
        """`for endpoint in ("/a", "/b"): get(f"{base}{endpoint}")`."""
        template = ("{}", [target]) if isinstance(target, ast.Name) else _template(target)
        if template is None or not template[1] or not template[0].endswith("{}"):
            return
        last = template[1][-1]
        if not isinstance(last, ast.Name) or last.id not in scope.loops:
            return
        before = template[0][:-2]
        if before.replace("{}", "") not in ("", "/") and not _SCHEME_HOST.fullmatch(before):
            return
        for constant in scope.loops[last.id]:
            route = _route("/" + constant.value.lstrip("/"))
            if route:
                self.url_done.add(id(constant))
                self.sink.url(self._route_offset(constant, route), route, method, keys)

    def _helper(self, scope: _Scope, target: ast.expr, method: str | None,
                payload: ast.expr | None) -> None:  # fmt: skip
        func = scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        template = _template(target)
        if template is None or not template[1] or not template[0].endswith("/{}"):
            return
        last = template[1][-1]
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        if not isinstance(last, ast.Name) or last.id not in params:
            return
        if isinstance(payload, ast.BoolOp):
            payload = payload.values[0]
        payload_index = None
        if isinstance(payload, ast.Name) and payload.id in params:
            payload_index = params.index(payload.id)
        method_like = bool(params) and params[0] in ("self", "cls")
        self.helpers[func.name] = _Helper(params.index(last.id), method, payload_index, method_like)

    def _pending_calls(self, scope: _Scope) -> None:
        for call in scope.calls:
            name, _ = _callee(call)
            if name is None or not call.args:
                continue
            args: list[tuple[str, int, int] | None] = []
            for arg in call.args[:3]:
                if _is_str(arg) and _HELPER_ARG.fullmatch(arg.value):
                    line, column = self.sink.text.pos(self._find(arg, arg.value))
                    args.append((arg.value, line, column))
                else:
                    args.append(None)
            if not any(args):
                continue
            payloads = [
                self._payload_keys(scope, arg, call.lineno)
                if isinstance(arg, (ast.Dict, ast.Name, ast.Call, ast.BoolOp))
                else None
                for arg in call.args[:4]
            ]
            attr_call = isinstance(call.func, ast.Attribute)
            self.pending.append(_PendingCall(self.sink.rel, name, attr_call, args, payloads))


def _resolve_helpers(pending: list[_PendingCall], helpers: dict[str, _Helper],
                     out: SurfaceUsages) -> None:  # fmt: skip
    for call in pending:
        helper = helpers.get(call.name)
        if helper is None:
            continue
        shift = 1 if helper.method_like and call.attr_call else 0
        index = helper.route_index - shift
        if not 0 <= index < len(call.args) or call.args[index] is None:
            continue
        value, line, column = call.args[index]
        route = _route("/" + value.lstrip("/"))
        if route is None:
            continue
        keys: list[str] = []
        if helper.payload_index is not None:
            p = helper.payload_index - shift
            if 0 <= p < len(call.payloads) and call.payloads[p]:
                keys = list(call.payloads[p])
        out.urls.append(UrlUsage(call.rel, line, column, route, helper.method, keys))


# ---- YAML, JSON, TOML --------------------------------------------------------------


@dataclass
class _Entry:
    """One key of a YAML/JSON/TOML document, with its parent chain."""

    key: str
    offset: int  # of the key in the file
    parent: _Entry | None
    indent: int = 0
    value: str | None = None  # inline scalar; None for a parent
    value_offset: int = -1
    children: str = ""  # "map" | "seq"
    items: list[tuple[str, int]] = field(default_factory=list)  # sequence scalars

    def ancestors(self) -> Iterator[_Entry]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def under_section(self) -> bool:
        return bool(_SECTION.fullmatch(self.key)) or any(
            _SECTION.fullmatch(a.key) for a in self.ancestors()
        )


class _Structured:
    """What YAML, JSON and TOML share: sections, prefixed keys, env keys, argv lists."""

    def __init__(self, sink: _Sink, context: str):
        self.sink = sink
        self.context = context
        self.candidates: list[_Entry] = []  # keys that are flags if under a section

    def key(self, entry: _Entry, value: str | None, leaf: bool) -> None:
        key = entry.key
        if ENV_NAME.fullmatch(key):
            self.sink.env(entry.offset, key, "set", self.context)
            return
        if key == "name" and value and ENV_NAME.fullmatch(value):
            if any(_ENV_SECTION.fullmatch(a.key) for a in entry.ancestors()):
                self.sink.env(entry.value_offset, value, "set", self.context)
                return
        if not leaf:
            return
        if _SECTION.fullmatch(key):
            if value and "--" in value:  # sglang_args: "--tp 2 --dp 1"
                self.argv_text(entry.value_offset, value, launched=True)
            return
        split = self.sink.prefixes.split_name(key)
        if split:
            self.sink.flag(entry.offset, _FlagHit(0, split[0], key, split[1], value), self.context)
            return
        entry.value = value
        self.candidates.append(entry)

    def finish(self) -> None:
        """Keys under an sglang section; a section with an overrides mapping keeps only those."""
        with_overrides: set[int] = set()
        kept: list[tuple[_Entry, _Entry, bool]] = []
        for entry in self.candidates:
            section = None
            under_override = False
            for ancestor in entry.ancestors():
                if _SECTION.fullmatch(ancestor.key):
                    section = ancestor
                    break
                if _OVERRIDES.fullmatch(ancestor.key):
                    under_override = True
            if section is None:
                continue
            if under_override:
                with_overrides.add(id(section))
            kept.append((entry, section, under_override))
        for entry, section, under_override in kept:
            if id(section) in with_overrides and not under_override:
                continue
            key = entry.key
            flag = key if key.startswith("--") else "--" + key.replace("_", "-")
            if re.fullmatch(r"--[A-Za-z][A-Za-z0-9-]*", flag):
                hit = _FlagHit(0, flag, key, None, entry.value)
                self.sink.flag(entry.offset, hit, self.context)

    def argv(self, items: list[tuple[str, int]], launched: bool) -> None:
        tokens = [text for text, _ in items]
        launched = launched and not _has_launcher(tokens)
        for hit in _argv_flags(tokens, self.sink.prefixes, launched):
            text, offset = items[hit.index]
            self.sink.flag(offset + max(0, text.find(hit.written)), hit, self.context)
        for text, offset in items:
            m = _ENV_ASSIGN.match(text)
            if m:
                self.sink.env(offset, m.group(1), "set", self.context)
            elif " " in text and ("--" in text or "SGL" in text or "curl" in text):
                self.argv_text(offset, text)

    def argv_text(self, offset: int, value: str, launched: bool = False) -> None:
        """A scalar that is a command line, scanned as shell over its span in the file."""
        at = self.sink.text.text.find(value, max(offset, 0))
        if offset >= 0 and at >= 0:
            _ShellScan(self.sink, self.context).scan(at, at + len(value), launched)


_YAML_LINE = re.compile(r"^( *)((?:- +)*)(.*)$")
_YAML_KEY = re.compile(
    r"""^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"\[\]{},&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?)"""
    r"""\s*:(?:\s+(.*))?$"""
)
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*")
_FLOW_ITEM = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^,\[\]{}]+?)\s*(?:,|$)""")
_FLOW_PAIR = re.compile(r"""([\w.-]+|"[^"]*"|'[^']*')\s*[:=]\s*("[^"]*"|'[^']*'|[^,}]*)""")


def _strip_comment(line: str) -> str:
    if "#" not in line:
        return line.rstrip()
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"" and (i == 0 or line[i - 1] in " \t:-[{,="):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _flow_items(value: str, offset: int) -> list[tuple[str, int]]:
    items = []
    for m in _FLOW_ITEM.finditer(value[1:-1]):
        raw = m.group(1)
        if raw.strip():
            text = _unquote(raw)
            start = offset + 1 + m.start(1) + (1 if text != raw.strip() else 0)
            items.append((text, start))
    return items


def _flow_pairs(value: str, offset: int) -> list[tuple[str, str, int]]:
    return [
        (_unquote(m.group(1)), _unquote(m.group(2)), offset + 1 + m.start(1))
        for m in _FLOW_PAIR.finditer(value[1:-1])
    ]


def _scan_yaml(sink: _Sink) -> None:
    text = sink.text.text
    structured = _Structured(sink, "yaml")
    stack: list[_Entry] = []
    seqs: list[_Entry] = []
    block: tuple[int, int] | None = None  # (indent, start offset) of a block scalar
    offset = 0

    def end_block(at: int) -> None:
        chunk = text[block[1] : at]
        if "--" in chunk or "SGL" in chunk or "curl" in chunk:
            _ShellScan(sink, "yaml").scan(block[1], at)

    for raw in text.split("\n"):
        line_offset = offset
        offset += len(raw) + 1
        if block is not None:
            if not raw.strip() or len(raw) - len(raw.lstrip(" ")) > block[0]:
                continue
            end_block(line_offset)
            block = None
        if raw.startswith(("---", "...")):
            stack.clear()
            continue
        line = _strip_comment(raw)
        if not line.strip():
            continue
        m = _YAML_LINE.match(line)
        indent, dashes, rest = len(m.group(1)), m.group(2), m.group(3)
        key_indent = indent + len(dashes)
        if dashes:  # a list item belongs to the deepest entry indented less (or a list owner)
            while stack and (
                stack[-1].indent > indent
                or (stack[-1].indent == indent and not (
                    stack[-1].value is None and stack[-1].children in ("", "seq")))
            ):  # fmt: skip
                stack.pop()
            if stack:
                stack[-1].children = stack[-1].children or "seq"
        km = _YAML_KEY.match(rest)
        if km:
            if not dashes:
                while stack and stack[-1].indent >= key_indent:
                    stack.pop()
                if stack:
                    stack[-1].children = stack[-1].children or "map"
            else:  # `- key: value` opens a mapping: one entry per list item
                owner = stack[-1] if stack else None
                stack.append(_Entry("-", line_offset + indent, owner, indent, children="map"))
            parent = stack[-1] if stack else None
            entry = _Entry(_unquote(km.group(1)), line_offset + key_indent, parent, key_indent)
            stack.append(entry)
            value = (km.group(2) or "").strip()
            if not value:
                continue
            entry.value = value
            entry.value_offset = line_offset + line.find(value, key_indent + len(km.group(1)))
            if _BLOCK_SCALAR.fullmatch(value):
                block = (key_indent, offset)
            elif value.startswith("[") and value.endswith("]"):
                entry.items = _flow_items(value, entry.value_offset)
                seqs.append(entry)
                structured.key(entry, value, leaf=True)
            elif value.startswith("{") and value.endswith("}"):
                for k, v, k_offset in _flow_pairs(value, entry.value_offset):
                    child = _Entry(k, k_offset, entry, key_indent + 1, v or None)
                    structured.key(child, v or None, leaf=bool(v))
            else:
                scalar = _unquote(value)
                structured.key(entry, scalar, leaf=True)
                if "--" in scalar or "SGL" in scalar or "curl" in scalar:
                    structured.argv_text(entry.value_offset, scalar)
        elif dashes and stack:
            item = rest.strip()
            if _BLOCK_SCALAR.fullmatch(item):
                block = (indent, offset)
                continue
            if item[:1] in "[{":
                continue
            value = _unquote(item)
            owner = stack[-1]
            if not owner.items:
                seqs.append(owner)
            owner.items.append((value, line_offset + key_indent + (value != item)))
    if block is not None:
        end_block(len(text))

    owners_with_launcher = {
        id(e.parent) for e in seqs if _has_launcher([t for t, _ in e.items])
    } | {id(e.parent) for e in seqs if any(_LAUNCHER_TEXT.search(t) for t, _ in e.items)}
    for entry in seqs:
        tokens = [t for t, _ in entry.items]
        if any(t.startswith("--") for t in tokens):
            is_section = _SECTION.fullmatch(entry.key) is not None
            launched = (
                (id(entry.parent) in owners_with_launcher and entry.key.lower() in _ARGV_KEYS)
                or is_section
                or (_OVERRIDES.fullmatch(entry.key) is not None and entry.under_section())
            )
            structured.argv(entry.items, launched)
        else:
            structured.argv(entry.items, launched=False)
            if entry.value is None and not _SECTION.fullmatch(entry.key):
                structured.key(entry, tokens[0] if tokens else None, leaf=True)
    structured.finish()


def _scan_json(sink: _Sink) -> None:
    text = sink.text.text
    try:
        data = json.loads(text)
    except ValueError:
        return
    structured = _Structured(sink, "json")
    cursor = 0

    def find_key(key: str) -> int:
        nonlocal cursor
        encoded = json.dumps(key)
        at = text.find(encoded, cursor)
        while at >= 0:
            after = at + len(encoded)
            while after < len(text) and text[after] in " \t\r\n":
                after += 1
            if text[after : after + 1] == ":":
                cursor = after + 1
                return at + 1
            at = text.find(encoded, at + 1)
        return cursor

    def find_string(value: str) -> int:
        nonlocal cursor
        for encoded in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
            at = text.find(encoded, cursor)
            if at >= 0:
                cursor = at + len(encoded)
                return at + 1
        return cursor

    def scalar(value) -> str | None:
        if value is None:
            return None
        return json.dumps(value) if isinstance(value, bool) else str(value)

    def walk(value, parent: _Entry | None) -> None:
        if isinstance(value, list):
            for child in value:
                if isinstance(child, (dict, list)):
                    walk(child, parent)
                elif isinstance(child, str):
                    at = find_string(child)
                    if " " in child and ("--" in child or "curl" in child):
                        structured.argv_text(at, child)
            return
        if not isinstance(value, dict):
            return
        launcher = any(
            isinstance(v, str) and (v in _LAUNCH_MODULES or _LAUNCHER_TEXT.search(v))
            for v in value.values()
        )
        for key, child in value.items():
            entry = _Entry(str(key), find_key(str(key)), parent)
            if isinstance(child, dict):
                structured.key(entry, None, leaf=False)
                walk(child, entry)
            elif isinstance(child, list) and all(not isinstance(c, (dict, list)) for c in child):
                items = [(scalar(c) or "", find_string(c) if isinstance(c, str) else cursor)
                         for c in child]  # fmt: skip
                if any(t.startswith("--") for t, _ in items):
                    launched = entry.under_section() or (launcher and key.lower() in _ARGV_KEYS)
                    structured.argv(items, launched)
                else:
                    structured.argv(items, launched=False)
                    structured.key(entry, items[0][0] if items else None, leaf=True)
            elif isinstance(child, list):
                structured.key(entry, None, leaf=False)
                walk(child, entry)
            else:
                if isinstance(child, str):
                    entry.value_offset = find_string(child)
                structured.key(entry, scalar(child), leaf=True)
                if isinstance(child, str) and ("--" in child or "curl" in child):
                    structured.argv_text(entry.value_offset, child)

    walk(data, None)
    structured.finish()


_TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$")
_TOML_KEY = re.compile(r"""^\s*([A-Za-z0-9_\-."' ]+?)\s*=\s*(.*)$""")


def _toml_parts(dotted: str) -> list[str]:
    return [_unquote(part) for part in re.findall(r'"[^"]*"|\'[^\']*\'|[^.\s]+', dotted)]


def _scan_toml(sink: _Sink) -> None:
    structured = _Structured(sink, "toml")
    header: list[str] = []
    offset = 0
    for raw in sink.text.text.split("\n"):
        line_offset = offset
        offset += len(raw) + 1
        line = _strip_comment(raw)
        m = _TOML_HEADER.match(line)
        if m:
            header = _toml_parts(m.group(1))
            continue
        m = _TOML_KEY.match(line)
        if not m:
            continue
        parts = header + _toml_parts(m.group(1))
        if not parts:
            continue
        parent = None
        for part in parts[:-1]:
            parent = _Entry(part, line_offset, parent)
        key_offset = line_offset + max(0, line.rfind(parts[-1], 0, m.end(1)))
        entry = _Entry(parts[-1], key_offset, parent, value_offset=line_offset + m.start(2))
        value = m.group(2).strip()
        if value.startswith("{") and value.endswith("}"):
            for k, v, k_offset in _flow_pairs(value, entry.value_offset):
                structured.key(_Entry(k, k_offset, entry, value=v), v or None, leaf=bool(v))
        elif value.startswith("["):
            items = _flow_items(value, entry.value_offset) if value.endswith("]") else []
            if any(t.startswith("--") for t, _ in items):
                structured.argv(items, launched=entry.under_section())
            else:
                structured.key(entry, value, leaf=True)
        else:
            scalar = _unquote(value)
            structured.key(entry, scalar, leaf=True)
            if "--" in scalar or "curl" in scalar:
                structured.argv_text(entry.value_offset, scalar)
    structured.finish()


# ---- Dockerfile --------------------------------------------------------------------

_DOCKER_INSTRUCTION = re.compile(r"[ \t]*([A-Za-z]+)(?:[ \t]+|$)")
_DOCKER_ENV_PAIR = re.compile(
    r"""(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)(?:=(?:"(?:[^"\\]|\\.)*"|'[^']*'|\S*))?(?=\s|$)"""
)


def _scan_dockerfile(sink: _Sink) -> None:
    text = sink.text.text
    lines = text.split("\n")
    starts = sink.text.starts
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        first = i  # the logical instruction: continuation lines end with a backslash
        while i < len(lines) - 1 and (
            lines[i].rstrip().endswith("\\") or lines[i].lstrip().startswith("#") and i > first
        ):
            i += 1
        end = starts[i] + len(lines[i])
        m = _DOCKER_INSTRUCTION.match(text, starts[first], end)
        if m:
            _docker_instruction(sink, m.group(1).upper(), m.end(), end)
        i += 1


def _docker_instruction(sink: _Sink, keyword: str, start: int, end: int) -> None:
    text = sink.text.text
    body = text[start:end]
    if keyword in ("ENV", "ARG"):
        if keyword == "ENV" and not re.match(r"\s*[A-Za-z_][A-Za-z0-9_]*=", body):
            m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", body)  # legacy ENV NAME value
            names = [(m.group(1), start + m.start(1))] if m else []
        else:
            names = [(m.group(1), start + m.start(1)) for m in _DOCKER_ENV_PAIR.finditer(body)]
        for name, at in names:
            if ENV_NAME.fullmatch(name):
                sink.env(at, name, "set", "dockerfile")
        for r in _ENV_READ.finditer(body):
            sink.env(start + r.start(1), r.group(1), "read", "dockerfile")
        return
    if keyword in ("RUN", "CMD", "ENTRYPOINT"):
        stripped = body.strip()
        argv = None
        if stripped.startswith("["):
            try:
                argv = json.loads(stripped.replace("\\\n", " "))
            except ValueError:
                argv = None
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            items = []
            cursor = start
            for a in argv:
                at = text.find(json.dumps(a), cursor, end)
                at = cursor if at < 0 else at + 1
                cursor = at
                items.append((a, at))
            _Structured(sink, "dockerfile").argv(items, launched=False)
        else:
            _ShellScan(sink, "dockerfile").scan(start, end)
        return
    for r in _ENV_READ.finditer(body):
        sink.env(start + r.start(1), r.group(1), "read", "dockerfile")


# ---- the walk ----------------------------------------------------------------------


def _kind(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(".py"):
        return "python"
    if lower.endswith((".sh", ".bash")):
        return "shell"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".toml"):
        return "toml"
    if lower.startswith(("dockerfile", "containerfile")) or lower.endswith(
        (".dockerfile", ".containerfile")
    ):
        return "dockerfile"
    if "." not in name:
        return "maybe-shell"  # a script without extension: read its shebang
    return None


def _files(root: Path, exclude: list[str]) -> list[tuple[str, str, Path]]:
    found: list[tuple[str, str, Path]] = []
    top = len(str(root).rstrip(os.sep)) + 1
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            kind = _kind(name)
            if kind is None:
                continue
            path = os.path.join(dirpath, name)
            rel = path[top:].replace(os.sep, "/")
            if not exclude or not any(Path(rel).match(pattern) for pattern in exclude):
                found.append((rel, kind, Path(path)))
    return found


def _read(path: Path, kind: str) -> str | None:
    try:
        if kind == "maybe-shell":
            with path.open("rb") as handle:
                if not _SHEBANG.match(handle.read(128)):
                    return None
        elif kind in ("json", "yaml", "toml") and path.stat().st_size > _MAX_DATA_FILE:
            return None
        return path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


_CONFIG_FILTER = re.compile(r"sgl|server[_-]args|launch_server|curl", re.I)


# ---- Python files: candidate lines -> units -> ast -----------------------------------
#
# Parsing every file would cost seconds on a large consumer (miles: ~1,200 files). A literal
# search finds the lines that can matter (`SGLANG_`, a prefix, `.sglang_`, `launch_server`,
# a quoted "/route", `://`, `{base}/route`), skipping comments. Each line is widened to a
# unit and only the units are parsed, padded with blank lines (and an `if 1:` when
# indented) so that lines and columns stay those of the file:
#   - a flag, env var or attribute: its statement;
#   - a route, a launcher or a class field: its outermost function (or class), because
#     the URL may sit in a variable, the payload in a dict built above, the argv in a list
#     appended to later.
# Expressions are visited only in the statements touching a hot line (a candidate, or a
# line that may make an HTTP call); assignments are recorded everywhere, for lookups.
# A unit that does not parse on its own (a guess gone wrong around a multi-line string,
# a backslash continuation) is widened to its function, then to the whole file; units
# covering most of a file make it parse whole. Once every file is read, the calls of the
# request helpers found (`_make_request("flush_cache", ...)`) are read in their units.

_URL_LITERALS = re.compile(r"://|\"/|'/|\}/")
_URL_SCHEME_AT = re.compile(r"""(?:https?|wss?)://[^"'\s/]*/[A-Za-z0-9_{]""")
_URL_PATH_AT = re.compile(r"""/(?!(?:tmp|home|root|usr|dev|proc|sys|etc|var|opt|mnt)/)"""
                          r"""[A-Za-z_{][\w{}.~/-]*["'?]""")  # fmt: skip
_URL_FIELD_AT = re.compile(r"""\}/(?:[A-Za-z_][\w/.~-]*(?:["'?]|\{)|\{[\w.]+\}["'])""")
_CLASS_FIELD_AT = re.compile(r"\w+[ \t]*:[ \t]*[\w\"'\[]")
_BASE_HINTS = ("url", "base", "host", "addr", "endpoint", "server", "api", "router", "uri")
_DEF_HEADER = re.compile(r"(?:async[ \t]+)?def[ \t]")
_STATEMENT_HEADER = re.compile(r"(?:async[ \t]+)?def[ \t]|class[ \t]|@")
_CONTINUATIONS = ("else", "elif", "except", "finally", ")", "]", "}")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)


def _every(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _py_candidates(text: str, wrap: _Prefixes) -> tuple[list[int], list[int], bool]:
    """Offsets in a Python file where a flag or env var (first list) or a route or a
    launcher (second list: they need their function) may be written, and whether an
    sglang launcher is named (its argv may then be built anywhere in its function)."""
    found: list[int] = []

    def every(needle: str) -> Iterator[int]:
        return _every(text, needle)

    launch = [*every("launch_server")]
    launch += [at for at in every("sglang serve") if not text[at + 12 : at + 13].isalnum()]
    scoped: list[int] = list(launch)
    for needle in ("SGLANG_", "SGL_", *wrap.dash):
        found.extend(every(needle))
    for form, _ in wrap.py:  # args.sglang_x, getattr(args, "sglang_x"), class fields
        for at in every(form):
            before = text[at - 1 : at]
            if before in (".", '"', "'"):
                found.append(at)
            elif before in (" ", "\t") and _CLASS_FIELD_AT.match(text, at):
                scoped.append(at)  # `    sglang_tp_size: int = 1`: its unit is the class
    for m in _URL_LITERALS.finditer(text):
        at, hit = m.start(), m.group()
        if hit == "://":
            scheme = 5 if text[at - 5 : at] == "https" else 4
            quoted = text[at - scheme - 1 : at - scheme] in ("'", '"')
            if quoted and _URL_SCHEME_AT.match(text, at - scheme):
                scoped.append(at)
        elif hit == "}/":
            if _URL_FIELD_AT.match(text, at) and _base_field_at(text, at):
                scoped.append(at)
        elif _URL_PATH_AT.match(text, at + 1):
            scoped.append(at)
    return found, scoped, bool(launch)


def _base_field_at(text: str, at: int) -> bool:
    """`{base_url}/generate`: does the field closing at `at` name a base URL, or does
    its line make an HTTP call? (`f"{args.save_dir}/checkpoints"` does neither.)"""
    field = text[text.rfind("{", max(0, at - 80), at) + 1 : at].lower()
    if any(word in field for word in _BASE_HINTS):
        return True
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    return (
        _HTTP_CALL_LINE.search(text, line_start, line_end if line_end >= 0 else len(text))
        is not None
    )


def _imported_names(text: str) -> set[str]:
    names: set[str] = set()
    for m in _IMPORT.finditer(text):
        for part in m.group(1).split(","):
            words = part.split()
            if words:
                names.add(words[-1] if len(words) == 3 else words[0].split(".")[0])
    for m in _FROM_IMPORT.finditer(text):
        for part in m.group(1).strip("()\\ \n").split(","):
            words = part.split()
            if words:
                names.add(words[-1])
    return names


_HTTP_CALL_LINE = re.compile(r"(?:post|get|put|delete|patch|request|urlopen)\w*\(")
_TRIPLE = re.compile("\"\"\"|'''")


class _PyFile:
    def __init__(self, rel: str, text: str, out: SurfaceUsages, wrap: _Prefixes):
        self.text = text
        self.sink = _Sink(rel, _Text(text), out, wrap)
        self.lines = text.split("\n")
        self._indents: dict[int, int | None] = {}
        self.in_string = self._string_lines()
        self.units: set[int] = set()  # first lines of the units read already
        self.whole = False
        self._imported: set[str] | None = None

    def _string_lines(self) -> set[int]:
        """0-based lines that start inside a triple-quoted string (a close guess)."""
        inside: set[int] = set()
        if '"""' not in self.text and "'''" not in self.text:
            return inside
        opened: tuple[str, int] | None = None
        for m in _TRIPLE.finditer(self.text):
            line, column = self.sink.text.pos(m.start())
            if opened is None:
                if "#" not in self.lines[line - 1][: column - 1]:
                    opened = (m.group(), line - 1)
            elif m.group() == opened[0]:
                inside.update(range(opened[1] + 1, line))
                opened = None
        return inside

    def indent(self, i: int) -> int | None:
        """Indentation of a 0-based line; None for blank, comment and string lines."""
        if i not in self._indents:
            line = self.lines[i]
            stripped = line.lstrip()
            blank = not stripped or stripped.startswith("#") or i in self.in_string
            self._indents[i] = None if blank else len(line) - len(stripped)
        return self._indents[i]

    def imported_names(self) -> set[str]:
        if self._imported is None:
            self._imported = _imported_names(self.text)
        return self._imported

    def _hot(self, offsets: list[int], start: int, end: int) -> list[int]:
        """1-based lines of a unit where a candidate sits or an HTTP call may be made."""
        lines = {self.sink.text.pos(at)[0] for at in offsets}
        for i in range(start, end):
            line = self.lines[i]
            if "(" in line and _HTTP_CALL_LINE.search(line):
                lines.add(i + 1)
        return sorted(lines)

    def scan(self, plain: list[int], scoped: list[int], launch: bool,
             helpers: dict[str, _Helper], pending: list[_PendingCall],
             rescan: bool = False) -> None:  # fmt: skip
        """Parse and read the units holding the candidate offsets: the enclosing function
        for `scoped` ones (routes, launchers: they need the function's names), the
        enclosing statement for the others. `rescan` reads units read before again (for
        the calls of request helpers found since: only their lines are visited)."""
        if self.whole and not rescan:
            return
        kept: list[int] = []
        units: list[tuple[int, int]] = []
        for offsets, widen in ((scoped, self._unit), (plain, self._statement)):
            for line, at in sorted((self.sink.text.pos(at)[0] - 1, at) for at in offsets):
                if line not in self.in_string and self.lines[line].lstrip().startswith("#"):
                    continue  # a comment
                kept.append(at)
                if any(start <= line < end for start, end in units):
                    continue
                unit = widen(line)
                if unit is None:
                    return self._scan_whole(offsets, launch, helpers, pending)
                units.append(unit)
        units.sort(key=lambda u: (u[0], -u[1]))
        todo: list[tuple[int, int]] = []
        for start, end in units:  # drop the units inside another
            if todo and start < todo[-1][1]:
                continue
            if rescan or start not in self.units:
                todo.append((start, end))
        if not rescan and sum(end - start for start, end in todo) * 2 > len(self.lines):
            return self._scan_whole(kept, launch, helpers, pending)
        trees = []
        for start, end in todo:
            tree = self._parse(start, end)
            if tree is None:
                unit = self._unit(start)
                tree = self._parse(*unit) if unit else None
                if tree is None:
                    return self._scan_whole(kept, launch, helpers, pending)
                start, end = unit
            trees.append((start, end, tree))
        scan = _PythonScan(self.sink, self.lines, self.imported_names, helpers, pending)
        for start, end, tree in trees:
            self.units.add(start)
            if rescan:
                scan.run(tree, sorted({self.sink.text.pos(at)[0] for at in kept}))
            else:
                scan.run(tree, None if launch else self._hot(kept, start, end))

    def _parse(self, start: int, end: int) -> ast.Module | None:
        """Parse lines [start, end) where they stand: padded with blank lines, and an
        `if 1:` when indented, so that lines and columns are those of the file."""
        body = "\n".join(self.lines[start:end])
        if self.indent(start):
            padded = "\n" * (start - 1) + "if 1:\n" + body
        else:
            padded = "\n" * start + body
        try:
            return ast.parse(padded)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _statement(self, index: int) -> tuple[int, int] | None:
        """(first, end) 0-based lines of the statement holding a line (a close guess: a
        unit that does not parse is widened to its function)."""
        lines = self.lines
        level = self.indent(index)
        start = index
        if lines[index].lstrip().startswith(_CONTINUATIONS[:4]):  # else/elif/except/finally
            return self._unit(index)
        if level is None or lines[index].lstrip().startswith(_CONTINUATIONS):
            level, start = 1 << 30, None
        for i in range(index - 1, -1, -1):
            indent = self.indent(i)
            if indent is None or indent >= level:
                continue
            stripped = lines[i].lstrip()
            if stripped.startswith(_CONTINUATIONS):
                continue
            if _strip_comment(stripped).endswith(":"):
                break  # a block header: the statement starts below it
            start, level = i, indent
            if indent == 0:
                break
        if start is None:
            return self._unit(index)
        return start, self._end(start)

    def _end(self, start: int) -> int:
        lines, indent = self.lines, self.indent(start)
        decorating = lines[start].lstrip().startswith("@")
        end = start + 1
        while end < len(lines):
            current = self.indent(end)
            if current is not None and current <= indent:
                stripped = lines[end].lstrip()
                if decorating and stripped.startswith("@"):
                    pass
                elif decorating and _STATEMENT_HEADER.match(stripped):
                    decorating = False
                elif not (stripped.startswith(_CONTINUATIONS) and current == indent):
                    break
            end += 1
        return end

    def _scan_whole(self, offsets: list[int], launch: bool, helpers: dict[str, _Helper],
                    pending: list[_PendingCall]) -> None:  # fmt: skip
        self.whole = True
        try:
            tree = ast.parse(self.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        hot = None if launch else self._hot(offsets, 0, len(self.lines))
        scan = _PythonScan(self.sink, self.lines, self.imported_names, helpers, pending)
        scan.run(tree, hot)

    def _unit(self, index: int) -> tuple[int, int] | None:
        """(first, end) 0-based lines of the unit holding a line: its outermost enclosing
        function, else its top-level statement. None when the structure is unclear."""
        lines = self.lines
        level = self.indent(index)
        if level is None or lines[index].lstrip().startswith(_CONTINUATIONS):
            level = 1 << 30
        outer_def = top = None
        for i in range(index, -1, -1):
            indent = self.indent(i)
            if indent is None or (indent >= level and i != index):
                continue
            if lines[i].lstrip().startswith(_CONTINUATIONS):
                continue
            level = indent
            if _DEF_HEADER.match(lines[i], indent):
                outer_def = i
            if indent == 0:
                top = i
                break
        start = outer_def if outer_def is not None else top
        if start is None:
            return None
        indent = self.indent(start)
        while (
            start > 0 and self.indent(start - 1) == indent and lines[start - 1].lstrip()[:1] == "@"
        ):
            start -= 1
        if indent and start == 0:
            return None
        return start, self._end(start)


def scan_surfaces(
    root: Path, prefixes: list[str] | None = None, exclude: list[str] | None = None
) -> SurfaceUsages:
    """Every place under root that touches sglang's CLI flags, env vars or HTTP routes."""
    root = Path(root)
    texts: dict[str, tuple[str, str]] = {}
    for rel, kind, path in _files(root, exclude or []):
        text = _read(path, kind)
        if text is not None:
            texts[rel] = ("shell" if kind == "maybe-shell" else kind, text)
    configured = {_norm_prefix(p) for p in prefixes or []} - {""}
    detected = detect_prefixes(root, {rel: text for rel, (_, text) in texts.items()})
    result = SurfaceUsages(prefixes=sorted(configured | set(detected)))
    wrap = _Prefixes(result.prefixes)
    helpers: dict[str, _Helper] = {}
    pending: list[_PendingCall] = []
    python: dict[str, _PyFile] = {}
    for rel, (kind, text) in texts.items():
        if kind == "python":
            plain, scoped, launch = _py_candidates(text, wrap)
            if plain or scoped:
                python[rel] = _PyFile(rel, text, result, wrap)
                python[rel].scan(plain, scoped, launch, helpers, pending)
            continue
        if kind in ("yaml", "json", "toml") and not (
            _CONFIG_FILTER.search(text) or any(p in text for p in wrap.dash)
        ):
            continue
        sink = _Sink(rel, _Text(text), result, wrap)
        if kind == "shell":
            _ShellScan(sink, "shell").scan()
        elif kind == "dockerfile":
            _scan_dockerfile(sink)
        elif kind == "yaml":
            _scan_yaml(sink)
        elif kind == "json":
            _scan_json(sink)
        else:
            _scan_toml(sink)
    # the calls of the consumer's request helpers, wherever they are
    calls = [name + "(" for name in sorted(helpers)]
    for rel, (kind, text) in texts.items() if calls else ():
        offsets = [
            at
            for call in calls
            for at in _every(text, call)
            if not (text[at - 1 : at].isalnum() or text[at - 1 : at] == "_")
        ]
        if kind == "python" and offsets:
            file = python.get(rel) or python.setdefault(rel, _PyFile(rel, text, result, wrap))
            file.scan([], offsets, False, {}, pending, rescan=True)
    _resolve_helpers(pending, helpers, result)
    result.flags = _dedupe(result.flags, lambda u: (u.line, u.column, u.flag, u.context))
    result.envs = _dedupe(result.envs, lambda u: (u.line, u.column, u.name))
    result.urls = _dedupe(
        result.urls, lambda u: (u.line, u.column, u.route, u.method, tuple(u.payload_keys))
    )
    return result


def _dedupe(items: list, key: Callable) -> list:
    seen: set = set()
    out = []
    for item in sorted(items, key=lambda u: (u.path, u.line, u.column)):
        k = (item.path, *key(item))
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
