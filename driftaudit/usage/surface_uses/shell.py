"""Shell text (a script, a Dockerfile `RUN`, a YAML block scalar, a command string
in a config value) -> flags, env vars, curl URLs.

Flags: on an sglang launcher's command line (continuation lines included), and the
variables expanded on that line (`$SGLANG_ARGS`, `${ARGS[@]}`). Env vars `SGLANG_*`/
`SGL_*`: `export`, `X=1 cmd`, `X=1` are sets, `$X`/`${X}` reads; array and flag-holder
variables such as `SGLANG_ARGS=(...)` are the script's own and skipped. URLs: `curl`
(method from `-X`, or POST with `-d`). Not handled: heredocs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from driftaudit.usage.surface_uses.argv import argv_flags, is_launcher
from driftaudit.usage.surface_uses.routes import route_of
from driftaudit.usage.surface_uses.sink import (
    ENV_ASSIGN,
    ENV_JSON_KEY,
    ENV_NAME,
    ENV_READ,
    SHELL_ASSIGN,
    VAR_REF,
    Sink,
)


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


def shell_segments(text: str, start: int = 0, end: int | None = None) -> list[list[_Word]]:
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
            if word_start >= 0 and SHELL_ASSIGN.fullmatch("".join(chars)):
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


_CURL_DATA = {"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json"}
_CURL_DATA |= {"-F", "--form"}
_CURL_VALUE_OPTS = {
    "-H", "--header", "-o", "--output", "-u", "--user", "-m", "--max-time", "-w",
    "--write-out", "--connect-timeout", "-A", "--user-agent", "-b", "--cookie", "-c",
    "--cookie-jar", "-e", "--referer", "--retry", "--retry-delay", "--retry-max-time",
    "-x", "--proxy", "--cacert", "--cert", "--key", "-T", "--upload-file", "--resolve",
    "--unix-socket",
}  # fmt: skip


class ShellScan:
    """Shell text (a script, a Dockerfile RUN, a YAML block) -> flags, env vars, curl URLs."""

    def __init__(self, sink: Sink, context: str):
        self.sink = sink
        self.context = context
        self.local_vars: set[str] = set()  # arrays and flag holders: the script's own
        self.launch_vars: set[str] = set()  # variables expanded on an sglang command line

    def scan(self, start: int = 0, end: int | None = None, launched: bool = False) -> None:
        segments = shell_segments(self.sink.text.text, start, end)
        for words in segments:
            tokens = [w.text for w in words]
            for i in range(len(tokens)):
                last = is_launcher(tokens, i)
                if last >= 0:
                    for w in words[last + 1 :]:
                        self.launch_vars.update(VAR_REF.findall(w.text))
                    break
            m = SHELL_ASSIGN.match(tokens[0])
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
        while head < len(tokens) and SHELL_ASSIGN.match(tokens[head]):
            head += 1
        command = tokens[head:]
        if head and tokens[head - 1].endswith("("):
            command = []  # X=( a b c ): the elements are not a command
        if head and SHELL_ASSIGN.match(tokens[0]).group(1) in self.launch_vars:
            launched = True
        for i, w in enumerate(words):
            m = ENV_ASSIGN.match(w.text)
            if m and not (i < head and not command and m.group(1) in self.local_vars):
                at = text.find(m.group(1), w.start, w.end)
                sink.env(at if at >= 0 else w.start, m.group(1), "set", self.context)
            raw = text[w.start : w.end]
            if "$" in raw:
                for r in ENV_READ.finditer(raw):
                    if r.group(1) not in self.local_vars:
                        sink.env(w.start + r.start(1), r.group(1), "read", self.context)
            if "{" in raw and "SGL" in raw:
                for r in ENV_JSON_KEY.finditer(raw):
                    sink.env(w.start + r.start(1), r.group(1), "set", self.context)
        if command and command[0] in ("export", "declare", "typeset", "unset", "readonly"):
            for w in words[head + 1 :]:
                if ENV_NAME.fullmatch(w.text):
                    sink.env(w.start, w.text, "set", self.context)
        for hit in argv_flags(tokens, sink.prefixes, launched):
            w = words[hit.index]
            at = text.find(hit.written, w.start, w.end)
            sink.flag(at if at >= 0 else w.start, hit, self.context)
        # quoted command lines inside words: "--tp 2", bash -c "python -m sglang..."
        active = launched
        for i, w in enumerate(words):
            if is_launcher(tokens, i) >= 0:
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
            route = route_of(template) if "/" in template else None
            if route:
                at = self.sink.text.text.find(route.split("{}")[0], w.start, w.end)
                self.sink.url(at if at >= 0 else w.start, route, method, keys)
