"""Consumer text made inert, one helper per output format.

Everything a report shows may come from the audited checkout: file names, string
literals, symbols, the committed baseline, messages quoting them. A writer passes every
such field through the helper of its format, and nowhere else escapes:

- `visible`: the base of the human formats. A character that is not printable (C0 and C1
  controls, DEL, format characters such as bidi overrides and zero-width joiners,
  separators other than the space, the lone surrogates an undecodable file name decodes
  to) is shown as its Python escape: ESC as `\\x1b`, LF as `\\n`, U+202E as `\\u202e`.
  Its output has no line break, so a field never starts a line of its own, and no `##[`
  (`##\\x5b`): the GitHub Actions runner reads `##[name]` anywhere in a line of a log as
  a workflow command, and any report may be printed into one.
- `terminal`: the console report and notes on stderr. `visible`, and no `::` at the start
  (the runner reads `::name::` at the start of a line, after spaces).
- `github_data`, `github_property`: workflow-command escaping, as the Actions runner
  unescapes it (`toolkit/packages/core/src/command.ts`), of `visible` text.
- `md_text`, `md_code`, `md_message`: Markdown (CommonMark and GitHub's extensions).
- `html_text`, `html_lines`: the HTML page (`--format html`) and Markdown's raw HTML:
  text and quoted attribute values, `visible` first, `&<>"'` as entities: a field is
  never markup, never ends the attribute it stands in (`html_lines`: code in `<pre>`).
- `json_text`: a JSON document (JSON escapes every control character; `##[` becomes
  `##\\u005b`, the same string).
- `uri_path`: a relative file path as an RFC 3986 relative reference (SARIF).
- `patch_path`: a path in a unified diff's header, quoted as git quotes it.

The helpers take strings and know nothing of findings.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from urllib.parse import quote


@lru_cache(maxsize=512)
def _escaped(char: str) -> str:
    return repr(char)[1:-1]  # '\x1b', '\n', '\u202e', '\udcff'


def visible(text: str) -> str:
    if not text.isprintable():  # told at C speed: most text is
        text = "".join(c if c.isprintable() else _escaped(c) for c in text)
    return text.replace("##[", "##\\x5b") if "##[" in text else text


_LINE_COMMAND = re.compile(r"^( *):(?=:)")  # the runner strips the spaces


def terminal(text: str) -> str:
    text = visible(text)
    return _LINE_COMMAND.sub(r"\1\\x3a", text) if "::" in text else text


def terminal_lines(text: str) -> str:
    """Several lines for a terminal (a diff): each line `terminal`, the line ends kept."""
    lines = text.split("\n")
    return "\n".join(terminal(line.removesuffix("\r")) for line in lines)


def github_data(text: str) -> str:
    """A workflow command's data: our own line breaks become `%0A` (GitHub shows them in
    the annotation); consumer text is `visible` first."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A property value (`file=`), `visible`: a name with a control character in it (no
    file a review shows) would otherwise write that character into the log."""
    return github_data(visible(text)).replace(":", "%3A").replace(",", "%2C")


# What makes Markdown (CommonMark + GFM) out of text within a line: backslash escapes,
# code spans, emphasis and strikethrough, links and images, raw HTML and autolinks,
# entities (`&#x202e;` would bring back a bidi override), table cells, GitHub's math,
# an ATX heading's closing `#`s. `visible` leaves no line break inside a field.
_MD_INLINE = re.compile(r"([\\`*_~\[\]<>&|$#])")
# ... and what acts at the start of a line, where a field may stand (a preamble): a list
# or setext marker, an ordered list's `1.`, indentation (a code block); and `::` (a CI
# log). Inline escaping already took `#`, `>`, `*`, `_`, a fence's backticks and tildes.
_MD_LINE_START = re.compile(r"^(?:([-+=]|:(?=:))|(\d{1,9})([.)])(?= |$)| )")


def _md_line_start(match: re.Match) -> str:
    marker, digits, dot = match.groups()
    if marker:
        return "\\" + marker
    if digits:
        return f"{digits}\\{dot}"
    return "&#32;"  # a space that indents nothing


def _md_inline(text: str) -> str:
    return _MD_INLINE.sub(r"\\\1", visible(text))


def md_text(text: str) -> str:
    """Text in a Markdown paragraph, heading, list item or table cell, shown as it is,
    wherever it stands in its line."""
    return _MD_LINE_START.sub(_md_line_start, _md_inline(text), count=1)


def md_code(text: str, cell: bool = False) -> str:
    """An inline code span of `text`, whatever backticks it holds: the fence is one
    backtick longer than the longest run inside, padded where CommonMark strips a
    space. `cell`: inside a table row, where GFM splits at every `|` not escaped."""
    text = visible(text)
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    edge = text[0] in "` " or text[-1] in "` "
    pad = " " if edge and text.strip(" ") else ""
    if cell:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def md_message(text: str) -> str:
    """A message that marks code with backticks (`keyword \\`x\\` removed`): each
    backtick-delimited part a code span, the rest text. Any input stays one line of text
    and code spans, however its backticks pair."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: the last one is text
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    rendered = []
    for i, part in enumerate(parts):
        if i % 2 and part:
            rendered.append(md_code(part))
        else:
            rendered.append(_md_inline("``" if i % 2 else part))
    return _MD_LINE_START.sub(_md_line_start, "".join(rendered), count=1)


def html_text(text: str) -> str:
    """Text or a quoted attribute value in HTML: no tag, no entity, no line break, no
    control or format character (shown as its escape, as on a terminal)."""
    return html.escape(visible(text), quote=True)


def html_lines(text: str) -> str:
    """Lines of code inside `<pre>`: each line `html_text`, the line breaks kept."""
    return "\n".join(html_text(line.removesuffix("\r")) for line in text.split("\n"))


def json_text(document) -> str:
    return json.dumps(document, indent=2).replace("##[", "##\\u005b") + "\n"


def uri_path(path: str) -> str:
    """A relative path as a URI reference: every octet other than unreserved ones and
    `/` percent-encoded, UTF-8 (an undecodable name: its own bytes). A `:` is encoded
    too: in a first segment it would read as a scheme."""
    return quote(path, safe="/", errors="surrogateescape")


_GIT_NAMED = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


def patch_path(path: str) -> str:
    """A path for `--- a/...`/`+++ b/...`, as git writes one (`quote_c_style`): as it is
    when plain, else in double quotes with C escapes and octal bytes, which `git apply`
    and GNU patch read back to the same name."""
    if visible(path) == path and '"' not in path and "\\" not in path:
        return path
    out = []
    for byte in path.encode("utf-8", errors="surrogateescape"):
        if byte in _GIT_NAMED:
            out.append("\\" + _GIT_NAMED[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'
