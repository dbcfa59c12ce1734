"""The HTML page (`--format html`): one self-contained file, inline CSS and plain JS, no
request at view time. `findings_html` for compare and check, `changes_html` for diff (the
same page: each change a section, its sglang file the place).

At a glance: the findings by severity, a chart by the release that introduced each change
(where findings carry one, else by code), tables by code and by file. Then one section per
fact (as Markdown groups them: errors first), with the sglang evidence of both trees once
and each place's consumer snippet and fix hunk. Filters (severity, file) are plain JS over
data attributes, read from and written to the URL's fragment (`#severity=error&file=x`),
so a filtered view is a link. The page sets `data-ready` on <html> after its script ran
and counts script errors in `data-errors` (the browser test reads both).

All text from the consumer or the trees goes through `escape.html_text`/`html_lines`;
the page is built server-side, so the script never turns data into markup.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from driftaudit.codes import SEVERITIES
from driftaudit.drift import Change
from driftaudit.findings import Finding, group_facts, summarize
from driftaudit.report.escape import html_lines, html_text
from driftaudit.sources import SourceTree
from driftaudit.versions import parse_version

if TYPE_CHECKING:
    from driftaudit.usage.files import ConsumerFiles

_CONTEXT = 2  # consumer lines shown either side of a finding's line
_EVIDENCE = (1, 6)  # tree lines shown before and after an evidence line (a signature)
_MAX_TREE_FILE = 8 << 20

_STYLE = """
:root{--err:#c0392b;--warn:#b9770e;--info:#2471a3;--bg:#fafafa;--line:#ddd}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em;
background:var(--bg);color:#222}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.2em 0 .4em}
code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#fff;border:1px solid var(--line);padding:.4em;overflow-x:auto;margin:.3em 0}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid var(--line);
padding:.2em .6em;text-align:left}td.n{text-align:right}
.cards{display:flex;gap:1em}.card{background:#fff;border:1px solid var(--line);
padding:.5em 1em;min-width:7em}.card b{font-size:1.6em;display:block}
.error{color:var(--err)}.warning{color:var(--warn)}.info{color:var(--info)}
.chart{display:grid;grid-template-columns:max-content 1fr max-content;gap:.2em .6em;
align-items:center;max-width:800px}.bar{height:1em;display:flex}
.bar span{display:block;height:100%}.bar .error{background:var(--err)}
.bar .warning{background:var(--warn)}.bar .info{background:var(--info)}
.glance{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}
.glance>div{max-height:26em;overflow:auto}
#filters{position:sticky;top:0;background:var(--bg);padding:.5em 0;
border-bottom:1px solid var(--line);z-index:1}
.fact{background:#fff;border:1px solid var(--line);border-left:4px solid var(--info);
margin:.8em 0;padding:.5em .8em}.fact.sev-error{border-left-color:var(--err)}
.fact.sev-warning{border-left-color:var(--warn)}
.place{border-top:1px dashed var(--line);margin-top:.5em;padding-top:.3em}
.hit{background:#fff3b0;display:block}.ln{color:#999;user-select:none}
.add{background:#e6ffed;display:block}.del{background:#ffeef0;display:block}
.hunk{color:#6f42c1;display:block}[hidden]{display:none!important}
"""

# plain JS, no data in it: filters toggle `hidden` by the data attributes the page carries
_SCRIPT = """
(function(){
var doc=document.documentElement;
function state(){var s={severity:[],file:""};
location.hash.replace(/^#/,"").split("&").forEach(function(kv){
var i=kv.indexOf("=");if(i<0)return;var k=kv.slice(0,i),v=decodeURIComponent(kv.slice(i+1));
if(k==="severity")s.severity=v?v.split(","):[];if(k==="file")s.file=v;});
return s;}
var boxes=[].slice.call(document.querySelectorAll("#filters input[name=severity]"));
var select=document.getElementById("file");
function apply(){var sev=boxes.filter(function(b){return b.checked}).map(function(b){
return b.value});var file=select.value;var shown=0;
[].slice.call(document.querySelectorAll(".fact")).forEach(function(f){
var on=sev.indexOf(f.dataset.severity)>=0;var any=0;
[].slice.call(f.querySelectorAll(".place")).forEach(function(p){
var v=on&&(!file||p.dataset.file===file);p.hidden=!v;if(v)any++;});
f.hidden=!any;shown+=any;});
document.getElementById("shown").textContent=String(shown);
doc.dataset.shown=String(shown);}
function fromHash(){var s=state();boxes.forEach(function(b){
b.checked=!s.severity.length||s.severity.indexOf(b.value)>=0;});
var ok=[].some.call(select.options,function(o){return o.value===s.file});
select.value=ok?s.file:"";apply();}
function toHash(){var sev=boxes.filter(function(b){return b.checked}).map(function(b){
return b.value});var parts=[];if(sev.length!==boxes.length)parts.push("severity="+sev.join(","));
if(select.value)parts.push("file="+encodeURIComponent(select.value));
history.replaceState(null,"","#"+parts.join("&"));apply();}
boxes.forEach(function(b){b.addEventListener("change",toHash)});
select.addEventListener("change",toHash);
window.addEventListener("hashchange",fromHash);
fromHash();doc.dataset.ready="1";
})();
"""

_ON_ERROR = (
    "window.addEventListener('error',function(){var d=document.documentElement;"
    "d.dataset.errors=String((+d.dataset.errors||0)+1)});"
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _versions(old: SourceTree, new: SourceTree) -> str:
    def one(tree: SourceTree) -> str:
        given = tree.provenance.label() if tree.provenance else ""
        given = f", {html_text(given)}" if given else ""
        return f"<b>{html_text(tree.version or '?')}</b> ({html_text(tree.spec)}{given})"

    return f"sglang {one(old)} &rarr; {one(new)}"


def _bars(rows: list[tuple[str, Counter]], label_class: str = "") -> str:
    """A horizontal bar per row, stacked by severity (CSS widths: no canvas, no SVG)."""
    top = max((sum(c.values()) for _, c in rows), default=0) or 1
    cells = []
    for label, counts in rows:
        parts = "".join(
            f'<span class="{s}" style="width:{100 * counts[s] / top:.2f}%" title="{counts[s]} {s}">'
            "</span>"
            for s in SEVERITIES
            if counts[s]
        )
        cells.append(
            f'<div class="{label_class}">{label}</div><div class="bar">{parts}</div>'
            f'<div class="n">{sum(counts.values())}</div>'
        )
    return '<div class="chart">' + "".join(cells) + "</div>"


def _release_key(release: str):
    try:
        return (0, parse_version(release))
    except Exception:  # a release that is not a version sorts last, by name
        return (1, release)


def _chart(findings: list[Finding]) -> str:
    if any(f.introduced for f in findings):
        by: dict[str, Counter] = defaultdict(Counter)
        for f in findings:
            by[f.introduced or ""][f.severity] += 1
        known = sorted((r for r in by if r), key=_release_key)
        rows = [(f"<code>{html_text(r)}</code>", by[r]) for r in known]
        if "" in by:
            rows.append(("release not known", by[""]))
        title = "Findings by the release that introduced the change"
    else:
        by = defaultdict(Counter)
        for f in findings:
            by[f.code.code][f.severity] += 1
        rows = [(f"<code>{code}</code>", by[code]) for code in sorted(by)]
        title = "Findings by code"
    return f'<div id="chart"><h2>{title}</h2>{_bars(rows)}</div>'


def _tables(findings: list[Finding]) -> str:
    by_code = Counter((f.code.code, f.code.kind, f.severity) for f in findings)
    rows = "".join(
        f'<tr><td><code>{c}</code></td><td>{k}</td><td class="{s}">{s}</td>'
        f'<td class="n">{n}</td></tr>'
        for (c, k, s), n in sorted(by_code.items())
    )
    code_table = (
        '<div><h2>By code</h2><table id="by-code"><tr><th>code</th><th>kind</th>'
        f"<th>severity</th><th>findings</th></tr>{rows}</table></div>"
    )
    by_file: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        by_file[f.path][f.severity] += 1
    rank = {s: i for i, s in enumerate(SEVERITIES)}

    def worst(path: str) -> tuple:
        counts = by_file[path]
        return (min(rank[s] for s in counts), -sum(counts.values()), path)

    rows = "".join(
        f"<tr><td><code>{html_text(p)}</code></td>"
        + "".join(f'<td class="n {s}">{by_file[p][s] or ""}</td>' for s in SEVERITIES)
        + "</tr>"
        for p in sorted(by_file, key=worst)
    )
    heads = "".join(f"<th>{s}</th>" for s in SEVERITIES)
    file_table = (
        f'<div><h2>By file</h2><table id="by-file"><tr><th>file</th>{heads}</tr>{rows}</table>'
        "</div>"
    )
    return f'<div class="glance">{code_table}{file_table}</div>'


def _numbered(lines: list[tuple[int, str]], hit: int | None) -> str:
    width = len(str(lines[-1][0])) if lines else 1
    out = []
    for number, text in lines:
        row = f'<span class="ln">{number:>{width}} </span>{html_lines(text)}'
        out.append(f'<span class="hit">{row}</span>' if number == hit else row + "\n")
    return "<pre>" + "".join(out) + "</pre>"


def _consumer_snippet(files: ConsumerFiles | None, finding: Finding) -> str:
    if files is None:
        return ""
    lines = [
        (n, files.line(finding.path, n))
        for n in range(max(1, finding.line - _CONTEXT), finding.line + _CONTEXT + 1)
    ]
    while lines and lines[-1][0] > finding.line and not lines[-1][1]:
        lines.pop()
    if not any(text for _, text in lines):
        return ""
    return _numbered(lines, finding.line)


class _TreeLines:
    """Lines of a tree's files for the evidence, read once per file: only a regular file
    inside the tree's root, of bounded size."""

    def __init__(self, tree: SourceTree):
        self.root = os.path.realpath(tree.root)
        self.files: dict[str, list[str]] = {}

    def lines(self, relpath: str) -> list[str]:
        if relpath not in self.files:
            self.files[relpath] = self._read(relpath)
        return self.files[relpath]

    def _read(self, relpath: str) -> list[str]:
        path = os.path.realpath(os.path.join(self.root, relpath))
        if os.path.isabs(relpath) or not path.startswith(self.root + os.sep):
            return []
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > _MAX_TREE_FILE:
                return []
            with open(path, "rb") as handle:
                return handle.read().decode("utf-8", errors="replace").split("\n")
        except OSError:
            return []


def _evidence(side: str, location: str | None, tree: _TreeLines) -> str:
    if not location:
        return ""
    path, _, number = location.rpartition(":")
    block = ""
    if path and number.isdigit():
        lines = tree.lines(path)
        at = int(number)
        if 0 < at <= len(lines):
            start, end = max(1, at - _EVIDENCE[0]), min(len(lines), at + _EVIDENCE[1])
            block = _numbered([(n, lines[n - 1]) for n in range(start, end + 1)], at)
    where = f"<b>{side}</b> <code>{html_text(location)}</code>"
    return f'<div class="evidence {side}">{where}{block}</div>'


def _hunks(before: str, after: str) -> list[tuple[int, int, str]]:
    """(first old line, last old line, rendered hunk) of a file's fix diff."""
    old, new = before.split("\n"), after.split("\n")
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    out = []
    for group in matcher.get_grouped_opcodes(2):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        rows = [f'<span class="hunk">@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@</span>']
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                rows += [f" {html_lines(line)}\n" for line in old[a1:a2]]
                continue
            rows += [f'<span class="del">-{html_lines(line)}</span>' for line in old[a1:a2]]
            rows += [f'<span class="add">+{html_lines(line)}</span>' for line in new[b1:b2]]
        out.append((i1 + 1, max(i2, i1 + 1), "<pre>" + "".join(rows) + "</pre>"))
    return out


def _fix_of(finding: Finding, hunks: list[tuple[int, int, str]]) -> str:
    fix = finding.fix
    if fix is None:
        return ""
    if fix.covered_by:
        return f'<div class="fix">fixed with <code>{html_text(fix.covered_by)}</code></div>'
    if not fix.autofixable:
        return ""
    line = finding.fix_at[0]
    mine = [h for start, end, h in hunks if start <= line <= end or start <= finding.line <= end]
    if finding.confidence != "certain":
        return '<div class="fix">not fixed automatically: the finding is only likely</div>'
    return '<div class="fix diff">' + ("".join(mine) or "no change at this place") + "</div>"


def findings_html(
    findings: list[Finding],
    old: SourceTree,
    new: SourceTree,
    consumer: str,
    files: ConsumerFiles | None = None,
    fixes: dict[str, tuple[str, str]] | None = None,
    preamble: str = "",
) -> str:
    """`files`: the consumer's index (snippets; none without it); `fixes`: {path:
    (before, after)} of the fixer's suggestion (`fix.suggest.previews`)."""
    title = "driftaudit: " + consumer
    out = _head(title, old, new, summarize(findings), len(findings), "finding")
    if preamble:
        out.append(f'<p class="preamble">{html_text(preamble)}</p>')
    if findings:
        out += [_chart(findings), _tables(findings)]
    out.append(_filters(sorted({f.path for f in findings}), len(findings)))
    out.append(_facts(findings, old, new, files, fixes or {}))
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "\n".join(out)


def _head(title: str, old, new, counts: dict[str, int], total: int, noun: str) -> list[str]:
    cards = "".join(
        f'<div class="card {s}" id="count-{s}"><b>{counts[s]}</b>{s}</div>' for s in SEVERITIES
    )
    return [
        "<!DOCTYPE html>",
        '<html lang="en" data-ready="0" data-errors="0">',
        '<head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        f"<title>{html_text(title)}</title><style>{_STYLE}</style>",
        f"<script>{_ON_ERROR}</script></head><body>",
        f"<h1>{html_text(title)}</h1>",
        f'<p>{_versions(old, new)}: <b id="total">{_plural(total, noun)}</b>.</p>',
        f'<div class="cards">{cards}</div>',
    ]


def _filters(paths: list[str], total: int) -> str:
    boxes = "".join(
        f'<label><input type="checkbox" name="severity" value="{s}" checked> {s}</label> '
        for s in SEVERITIES
    )
    files = "".join(f'<option value="{html_text(p)}">{html_text(p)}</option>' for p in paths)
    return (
        f'<div id="filters">{boxes}<label>file <select id="file"><option value="">all files'
        f'</option>{files}</select></label> <span id="shown">{total}</span> shown</div>'
    )


def _facts(findings, old, new, files, fixes) -> str:
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    ordered = sorted(
        group_facts(findings),  # the facts every other report shows
        key=lambda group: (rank[group[0].severity], group[0].code.code, group[0].symbol),
    )
    trees = _TreeLines(old), _TreeLines(new)
    hunks = {path: _hunks(*texts) for path, texts in fixes.items()}
    out = ['<div id="findings">']
    for group in ordered:
        first = group[0]
        head = f"<code>{first.code.code}</code> {first.code.kind}"
        if first.symbol:
            head += f" <code>{html_text(first.symbol)}</code>"
        if first.introduced:
            head += f" (since <code>{html_text(first.introduced)}</code>)"
        if first.deprecated:
            head += f" (deprecated since <code>{html_text(first.deprecated)}</code>)"
        if first.fails_on:
            failing = ", ".join(f"<code>{html_text(v)}</code>" for v in first.fails_on)
            head += f" (fails on {failing})"
        block = [
            f'<section class="fact sev-{first.severity}" data-severity="{first.severity}"'
            f' data-code="{first.code.code}">',
            f'<h3><span class="{first.severity}">{first.severity}</span> {head}</h3>',
            f'<p class="message">{html_text(first.message)}'
            f" <small>({first.confidence})</small></p>",
            _evidence("old", first.old_location, trees[0]),
            _evidence("new", first.new_location, trees[1]),
        ]
        if first.fix:
            how = ""
            if first.fix.autofixable:
                how = f" ({first.fix_applicability} autofix)"
            block.append(f'<p class="fix-text">Fix: {html_text(first.fix.description)}{how}</p>')
        for f in sorted(group, key=Finding.sort_key):
            block += [
                f'<div class="place" data-file="{html_text(f.path)}">',
                f"<code>{html_text(f.path)}:{f.line}:{f.column}</code>",
                # a place of the fact that says more than its lead: its own words, evidence
                f'<p class="message">{html_text(f.message)}</p>'
                if f.message != first.message
                else "",
                _evidence("old", f.old_location, trees[0])
                if f.old_location != first.old_location
                else "",
                _evidence("new", f.new_location, trees[1])
                if f.new_location != first.new_location
                else "",
                _consumer_snippet(files, f),
                _fix_of(f, hunks.get(f.path, [])),
                "</div>",
            ]
        block.append("</section>")
        out.append("\n".join(b for b in block if b))
    out.append("</div>")
    return "\n".join(out)


def _sglang_file(change: Change) -> str:
    location = change.old_location or change.new_location or change.symbol
    return location.rpartition(":")[0] if location.rpartition(":")[2].isdigit() else location


def changes_html(changes: list[Change], old: SourceTree, new: SourceTree) -> str:
    """The sglang-side changelog: counts by severity, a chart by code, then each change
    with its evidence in both trees, filterable by severity and sglang file."""
    counts = dict.fromkeys(SEVERITIES, 0)
    by_code: dict[str, Counter] = defaultdict(Counter)
    for change in changes:
        counts[change.code.severity] += 1
        by_code[change.code.code][change.code.severity] += 1
    title = "driftaudit diff"
    out = _head(title, old, new, counts, len(changes), "change")
    if changes:
        rows = [(f"<code>{code}</code>", by_code[code]) for code in sorted(by_code)]
        out.append(f'<div id="chart"><h2>Changes by code</h2>{_bars(rows)}</div>')
    files = sorted({_sglang_file(c) for c in changes})
    out.append(_filters(files, len(changes)))
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    ordered = sorted(changes, key=lambda c: (rank[c.code.severity], _sglang_file(c), c.symbol))
    trees = _TreeLines(old), _TreeLines(new)
    out.append('<div id="findings">')
    for change in ordered:
        severity = change.code.severity
        out.append(
            "\n".join(
                b
                for b in (
                    f'<section class="fact sev-{severity}" data-severity="{severity}"'
                    f' data-code="{change.code.code}">',
                    f'<h3><span class="{severity}">{severity}</span> <code>{change.code.code}'
                    f"</code> {change.code.kind} <code>{html_text(change.symbol)}</code></h3>",
                    f'<div class="place" data-file="{html_text(_sglang_file(change))}">',
                    f'<p class="message">{html_text(change.explain())}</p>',
                    _evidence("old", change.old_location, trees[0]),
                    _evidence("new", change.new_location, trees[1]),
                    "</div></section>",
                )
                if b
            )
        )
    out.append("</div>")
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "\n".join(out)
