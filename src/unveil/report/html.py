"""The HTML report: one self-contained file (styles and script inline, no network) that
explains a whole run: compiled frames by call stack, each frame's original source next to
its decompiled transformed code, graph breaks at the user's line, guards grouped with the
failed one of each recompile marked, the graphs the code calls (linked from their names),
compile times, divergence between ranks, and a search box. Syntax highlighting uses
Pygments when it is installed."""

from __future__ import annotations

import html
import linecache
import re
from pathlib import Path
from typing import Any

from ..dump_format import short_name
from .facts import (
    caches_text,
    distinct_breaks,
    divergences,
    failed_guards,
    function_of,
    guard_failed,
    guard_groups,
    hits_text,
    kernels_by_line,
    kernels_text,
    phase_totals,
    phases_text,
    recompile_causes,
    recompile_groups,
    short_path,
    totals,
    where,
)
from .load import RankDump, Run
from .timeline import timeline_svg

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
header{position:sticky;top:0;background:#f6f8fa;border-bottom:1px solid #d0d7de;
 padding:8px 16px;z-index:2}
header h1{font-size:18px;margin:0 0 4px}
#search{width:28em;padding:4px 6px;font-size:14px}
#hits{margin-left:8px;color:#57606a}
main{display:flex}
nav{width:300px;min-width:300px;border-right:1px solid #d0d7de;padding:8px 12px;
 font-size:13px;max-height:calc(100vh - 70px);overflow:auto;position:sticky;top:70px}
nav ul{list-style:none;padding-left:14px;margin:2px 0}
#content{padding:8px 20px;flex:1;min-width:0}
section{border:1px solid #d0d7de;border-radius:6px;margin:12px 0;padding:8px 12px}
section.hidden{display:none}
h2{font-size:16px;margin:4px 0}
h3{font-size:14px;margin:10px 0 4px}
.cols{display:flex;gap:12px}
.cols>div{flex:1;min-width:0}
.code{overflow:auto;background:#f6f8fa;border-radius:4px;padding:4px 0;font:12px/1.4
 ui-monospace,monospace;max-height:520px}
.code pre{margin:0;counter-reset:line;line-height:1.4}
.code pre>span[id]{display:block;padding:0 8px}
.code pre>span[id]::before{counter-increment:line;content:counter(line);display:inline-block;
 width:3em;color:#8c959f;text-align:right;margin-right:1em}
.code pre>span.mark{background:#fff8c5}
.break{background:#ffebe9;border-left:3px solid #cf222e;padding:4px 8px;margin:4px 0}
.recompile{background:#fff8c5;border-left:3px solid #9a6700;padding:4px 8px;margin:4px 0}
.fix{margin-top:2px}
.timeline-box{overflow-x:auto}
.diverge{background:#ffebe9;border:1px solid #cf222e}
.guard{font:12px ui-monospace,monospace;white-space:pre-wrap;margin:1px 0}
.guard.failed{background:#ffebe9;font-weight:bold}
.muted{color:#57606a}
.status-ours{color:#1a7f37}.status-dynamo{color:#9a6700}
table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #eaeef2;
 text-align:left}
mark{background:#fff100}
.src-link{margin-left:1.5em;color:#8c959f;font-size:11px;text-decoration:none}
.src-link:hover{color:#0969da}
.code pre>span[id]:target{background:#ddf4ff}
.kern-link{margin-left:1.5em;color:#8250df;font-size:11px;text-decoration:none}
tr:target{background:#ddf4ff}
"""

SCRIPT = """
const box = document.getElementById('search');
const hits = document.getElementById('hits');
box.addEventListener('input', () => {
  const q = box.value.trim().toLowerCase();
  let n = 0;
  for (const s of document.querySelectorAll('section.searchable')) {
    const on = !q || s.textContent.toLowerCase().includes(q);
    s.classList.toggle('hidden', !on);
    if (on && q) n++;
  }
  hits.textContent = q ? n + ' section(s) match' : '';
});
function reveal() {  // a link into a closed <details> opens it
  const t = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!t) return;
  for (let d = t.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
  t.scrollIntoView({block: 'center'});
}
window.addEventListener('hashchange', reveal);
reveal();
"""


def _md(text: Any) -> str:
    """``text`` escaped, its `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _esc(text))


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _anchor(*parts: Any) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", str(p)) for p in parts)


def highlight(source: str, prefix: str, marks: set[int] | None = None,
              first_line: int = 1) -> str:
    """``source`` as highlighted HTML, each line a ``<span id="prefix-N">`` (N from 1,
    shown numbered from ``first_line``); lines in ``marks`` (N) are marked."""
    try:
        from pygments import highlight as pyg_highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        out = pyg_highlight(source, PythonLexer(),
                            HtmlFormatter(linespans=prefix, cssclass="hl"))
    except ImportError:
        out = '<div class="hl"><pre>' + "".join(
            f'<span id="{prefix}-{i}">{_esc(line)}\n</span>'
            for i, line in enumerate(source.splitlines(), 1)) + "</pre></div>"
    for line in marks or ():
        out = out.replace(f'<span id="{prefix}-{line}">',
                          f'<span id="{prefix}-{line}" class="mark">', 1)
    if first_line != 1:
        out = out.replace("<pre>", f'<pre style="counter-reset:line {first_line - 1}">', 1)
    return f'<div class="code">{out}</div>'


def pygments_css() -> str:
    try:
        from pygments.formatters import HtmlFormatter
    except ImportError:
        return ""
    return str(HtmlFormatter().get_style_defs(".code .hl"))


def _source_block(path: str | None, first: int | None, marks: set[int]) -> tuple[str, int]:
    """The function that starts at ``first`` in ``path`` (its indented block), and the
    line number of its first line; ("", 0) when the file cannot be read."""
    if not path or not first:
        return "", 0
    lines = linecache.getlines(path)
    if not lines or first > len(lines):
        return "", 0
    start = first - 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines):
        text = lines[end]
        if text.strip() and len(text) - len(text.lstrip()) <= indent \
                and not text.lstrip().startswith((")", "]", "}")):
            break
        end += 1
    return "".join(lines[start:end]), first


def _link_names(code_html: str, graph_ids: dict[str, str]) -> str:
    """Make each ``__compiled_fn_<n>...`` name in highlighted code a link to its graph."""
    def repl(match: re.Match[str]) -> str:
        target = graph_ids.get(short_name(match.group(0)))
        if target is None:
            return match.group(0)
        return f'<a href="#{target}">{match.group(0)}</a>'

    return re.sub(r"__compiled_fn_\d+(?:_[0-9a-f]+)*", repl, code_html)


def _link_lines(code_html: str, prefix: str, src_prefix: str, line_map: list[list[int]],
                first: int, last: int) -> str:
    """Add to each transformed-code line whose origin is known a link to that line of the
    original source (shown from ``first`` to ``last``)."""
    for out_line, src_line in line_map:
        if not first <= src_line <= last:
            continue
        link = (f'<a class="src-link" href="#{src_prefix}-{src_line - first + 1}" '
                f'title="from line {src_line} of the source">&larr; {src_line}</a>')
        code_html = _append_to_line(code_html, prefix, out_line, link)
    return code_html


def _append_to_line(code_html: str, prefix: str, line: int, link: str) -> str:
    """``link`` added at the end of line ``line`` of highlighted code (``prefix``)."""
    start = code_html.find(f'<span id="{prefix}-{line}"')
    end = code_html.find("\n</span>", start)
    if start < 0 or end < 0:
        return code_html
    return code_html[:end] + link + code_html[end:]


def _gb_link(gb_id: str | None, url: str | None) -> str:
    """`` [GB0170]``, linked to PyTorch's page on it (opened only when clicked)."""
    if not gb_id:
        return ""
    if not url or not url.startswith("https://"):
        return f" [{_esc(gb_id)}]"
    return (f' [<a class="gb" href="{_esc(url)}" target="_blank" rel="noopener '
            f'noreferrer">{_esc(gb_id)}</a>]')


def _break_html(brk: dict[str, Any]) -> str:
    """A graph break: where, its gist, the user's line, the calls that led there, and
    Dynamo's whole explanation."""
    snippet = ""
    if brk.get("user_file") and brk.get("user_line"):
        text = linecache.getline(brk["user_file"], brk["user_line"]).strip()
        snippet = f"<br><code>{_esc(text)}</code>" if text else ""
    calls = "".join(
        f"<li>{_esc(short_path(f.get('file')))}:{_esc(f.get('line'))} in "
        f"{_esc(f.get('name'))}: <code>{_esc(f.get('code') or '')}</code></li>"
        for f in brk.get("user_stack") or [])
    chain = (f"<details><summary>how the code got there</summary><ul>{calls}</ul></details>"
             if calls else "")
    return (f'<div class="break">graph break at {_esc(short_path(brk.get("user_file")))}:'
            f'{_esc(brk.get("user_line"))}: <b>{_esc(brk.get("summary") or "")}</b>'
            f'{_gb_link(brk.get("gb_id"), brk.get("doc_url"))}{snippet}'
            f'{chain}<details><summary>Dynamo\'s explanation</summary>'
            f'<pre>at {_esc(brk.get("user_file"))}:{_esc(brk.get("user_line"))}\n'
            f'{_esc(brk.get("reason"))}</pre></details></div>')


class _Page:
    """One report page being written: the HTML parts in order and the navigation entries,
    with the pieces (per rank, function, compile, frame, graph, guard) that make them."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.parts: list[str] = []
        self.nav: list[str] = []
        # links to add to the lines of a dumped file: file id -> [(line, link html)]
        self.backlinks: dict[str, list[tuple[int, str]]] = {}

    # ------------------------------------------------------------ pieces

    def compile_anchor(self, dump: RankDump, compile_id: str | None) -> str:
        """The id of the section of the frame compiled as ``compile_id``."""
        return _anchor("frame", dump.rank, dump.pid, compile_id)

    def frame_id(self, dump: RankDump, frame: dict[str, Any]) -> str:
        return self.compile_anchor(dump, frame.get("compile_id") or
                       frame.get("transformed_code"))

    def file_id(self, dump: RankDump, name: str) -> str:
        return _anchor("file", dump.rank, name)  # (names are unique in a directory)

    def graph_ids(self, dump: RankDump, frame: dict[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for graph in frame.get("graphs") or []:
            out.setdefault(graph["compiled_fn"], self.file_id(dump, graph["file"]))
        return out

    def failed_by_entry(self, dump: RankDump) -> dict[str, list[Any]]:
        """For each compile id: the checks of its guard that failed later (recompiles)."""
        out: dict[str, list[Any]] = {}
        for frame in dump.frames:
            for reason in frame.get("recompile_reasons") or []:
                for failed in failed_guards(reason):
                    out.setdefault(failed.compile_id, []).append(failed)
        return out

    # ------------------------------------------------------------ sections

    def header(self) -> None:
        run = self.run
        version = next((r.torch_version for r in run.ranks if r.torch_version), "?")
        stats = []
        for dump in run.ranks:
            t = totals(dump)
            label = f"{dump.label}: " if dump.label else ""
            stats.append(f"{label}{t.frames} frames, {t.functions} functions, {t.graphs} "
                         f"graphs, {t.graph_breaks} graph breaks, {t.recompiles} recompiles, "
                         f"{t.skipped} run without compiling, "
                         + (f"{t.dynamo_code} run Dynamo's own code, " if t.dynamo_code else "")
                         + f"compile time {t.compile_time_s:.2f} s"
                         + (f", in compiled graphs {t.coverage}" if t.coverage else ""))
        self.parts.append(
            f'<header><h1>unveil report: {_esc(run.directory)}</h1>'
            f'<div class="muted">torch {_esc(version)} &middot; '
            f'{_esc(" | ".join(stats))}</div>'
            f'<input id="search" type="search" placeholder="Search frames, code, guards, '
            f'graph breaks..." aria-label="search"><span id="hits"></span></header>')

    def breaks(self, dump: RankDump) -> None:
        """Each distinct graph break once, with its count and PyTorch's registry id."""
        found = distinct_breaks(dump)
        if not found:
            return
        rows = "".join(
            f"<tr><td>{b.count}</td><td>{_gb_link(b.gb_id, b.doc_url) or '-'}</td>"
            f"<td>{_esc(b.summary)}</td><td>{_esc(b.where)}</td></tr>" for b in found)
        sid = _anchor("breaks", dump.rank, dump.pid)
        label = f" ({_esc(dump.label)})" if dump.label else ""
        self.parts.append(
            f'<section class="searchable" id="{sid}"><h2>Graph breaks{label}</h2>'
            f'<p>{len(found)} distinct, each once with how often it happened.</p><table>'
            f'<tr><th>count</th><th>id</th><th>graph break</th><th>where</th></tr>{rows}'
            f'</table></section>')
        self.nav.append(f'<li><a href="#{sid}">graph breaks{label}</a></li>')

    def recompiles(self, dump: RankDump) -> None:
        """Each distinct recompile cause once: what changed, the fix, the compiles."""
        groups = recompile_groups(dump)
        if not groups:
            return
        rows = "".join(
            f"<tr><td>{len(g.compile_ids)}</td><td>{_esc(g.function)}</td>"
            f"<td>{_md(g.words)}</td><td>{_md(g.fix)}</td><td>"
            + ", ".join(f'<a href="#{self.compile_anchor(dump, c)}">{_esc(c)}</a>'
                        for c in g.compile_ids) + "</td></tr>" for g in groups)
        sid = _anchor("recompiles", dump.rank, dump.pid)
        label = f" ({_esc(dump.label)})" if dump.label else ""
        self.parts.append(
            f'<section class="searchable" id="{sid}"><h2>Recompiles{label}</h2>'
            f'<p>{len(groups)} distinct cause(s): what changed since the compiled version '
            f'was made, and what to do about it.</p><table><tr><th>count</th>'
            f'<th>function</th><th>what changed</th><th>what to do</th><th>compiles</th>'
            f'</tr>{rows}</table></section>')
        self.nav.append(f'<li><a href="#{sid}">recompiles{label}</a></li>')

    def compile_time(self, dump: RankDump) -> None:
        """The run's compilation as a picture (static SVG), and the totals by phase."""
        picture = timeline_svg(dump.frames)
        if picture is None:
            return
        sid = _anchor("compile-time", dump.rank, dump.pid)
        label = f" ({_esc(dump.label)})" if dump.label else ""
        self.parts.append(
            f'<section class="searchable" id="{sid}"><h2>Compile time{label}</h2>'
            f'<p>{_esc(phases_text(phase_totals(dump)))}: each compiled frame on the time '
            f'axis, cut into where its compile time went.</p>'
            f'<div class="timeline-box">{picture}</div></section>')
        self.nav.append(f'<li><a href="#{sid}">compile time{label}</a></li>')

    def divergence(self) -> None:
        if len(self.run.rank_numbers) < 2:
            return
        diverging = divergences(self.run)
        if not diverging:
            self.parts.append('<section class="searchable" id="ranks"><h2>Ranks</h2>'
                              f'<p>All {len(self.run.ranks)} ranks compiled the same frames, '
                              'graphs, guards, graph breaks and recompiles.</p></section>')
            return
        rows = []
        for d in diverging:
            for rank, value in d.per_rank.items():
                rows.append(f"<tr><td>{_esc(d.what)}</td><td>rank {_esc(rank)}</td>"
                            f"<td>{_esc(value or '(none)')}</td></tr>")
        self.parts.append(
            '<section class="searchable diverge" id="ranks"><h2>Ranks diverge</h2>'
            '<p>The ranks did not compile the same thing: a classic cause of hangs in '
            'collectives (one rank waits in a graph the others never run).</p>'
            f'<table><tr><th>what</th><th>rank</th><th>value</th></tr>{"".join(rows)}'
            '</table></section>')
        self.nav.append('<li><a href="#ranks"><b>ranks diverge</b></a></li>')

    def tree(self, dump: RankDump) -> None:
        """Frames nested by the user call stack that led to each compile."""
        root: dict[str, Any] = {}
        for frame in dump.frames:
            path = [f"{s.get('name')} ({short_path(s.get('file'))}:{s.get('line')})"
                    for s in frame.get("stack") or []
                    if s.get("file") and "/torch/" not in str(s.get("file"))
                    and Path(str(s.get("file"))).parent != dump.directory.resolve()][:-1]
            node = root
            for step in path:
                node = node.setdefault(step, {})
            node.setdefault("\0frames", []).append(frame)

        def render(node: dict[str, Any]) -> str:
            items = []
            for frame in node.get("\0frames", []):
                items.append(f'<li><a href="#{self.frame_id(dump, frame)}">'
                             f'{_esc(frame.get("function"))}</a> '
                             f'<span class="muted">{_esc(frame.get("compile_id") or "")}'
                             f'</span></li>')
            for key, child in node.items():
                if key != "\0frames":
                    items.append(f"<li>{_esc(key)}<ul>{render(child)}</ul></li>")
            return "".join(items)

        title = dump.label or "frames"
        self.nav.append(f"<li><b>{_esc(title)}</b><ul>{render(root)}</ul></li>")

    def notes(self, dump: RankDump) -> None:
        if not (dump.notes or dump.errors):
            return
        items = "".join(f"<li>{_esc(n)}</li>" for n in dump.notes + dump.errors)
        sid = _anchor("notes", dump.rank, dump.pid)
        self.parts.append(f'<section class="searchable" id="{sid}">'
                          f'<h2>What is missing</h2><ul>{items}</ul></section>')

    def frame(self, dump: RankDump, frame: dict[str, Any],
              failed: dict[str, list[Any]]) -> None:
        fid = self.frame_id(dump, frame)
        cid = frame.get("compile_id") or "?"
        status = frame.get("status") or "?"
        css = "status-ours" if "unveil" in status else "status-dynamo"
        time = frame.get("compile_time_s")
        out = [f'<section class="searchable" id="{fid}">',
               f'<h2>{_esc(frame.get("function"))} <span class="muted">compile {_esc(cid)}'
               f'{" &middot; " + _esc(dump.label) if dump.label else ""}'
               f'</span></h2>',
               f'<div class="muted">{_esc(where(frame))} &middot; '
               f'<span class="{css}">{_esc(status)}</span> &middot; compile time '
               f'{_esc(f"{time:.3f} s" if time is not None else "?")}'
               + (f' ({_esc(phases_text(frame["compile_phases"]))})'
                  if isinstance(frame.get("compile_phases"), dict) and frame["compile_phases"]
                  else "")
               + (f' &middot; caches: {_esc(caches_text(frame["caches"]))}'
                  if frame.get("caches") else "")
               + (f' &middot; ran {_esc(hits_text(frame["hits"]))}' if frame.get("hits")
                  else "")
               + (" &middot; bytecode-identical to Dynamo's" if frame.get("identical")
                  else "")
               + (f" &middot; shown to do what Dynamo's code does "
                  f"({_esc(frame.get('equivalence'))})" if frame.get("equivalent") else "")
               + "</div>"]
        if frame.get("error"):
            out.append(f'<div class="break">{_esc(frame["error"])}</div>')
        restarts = frame.get("restart_reasons") or []
        if restarts:
            items = "".join(f"<li><pre>{_esc(r)}</pre></li>" for r in restarts)
            out.append(f"<details><summary>{len(restarts) + 1} compile attempts: Dynamo "
                       f"restarted {len(restarts)} time(s)</summary><ol>{items}</ol>"
                       f"</details>")
        breaks = frame.get("graph_breaks") or []
        marks = {b["user_line"] for b in breaks
                 if b.get("user_line") and b.get("user_file") == frame.get("source_file")}
        out.extend(_break_html(brk) for brk in breaks)
        reasons = [r for r in frame.get("recompile_reasons") or [] if isinstance(r, str)]
        for k, cause in enumerate(recompile_causes(frame)):
            cid_of = str(cause.get("guard_of"))
            lead = "recompiled: " if k == 0 else "an older version's check failed too: "
            out.append(
                f'<div class="recompile">{lead}{_md(cause.get("words"))} (the check of '
                f'<a href="#{self.compile_anchor(dump, cid_of)}">{_esc(cid_of)}</a>: '
                f'<code>{_esc(cause.get("check"))}</code>)'
                + (f'<div class="fix">what to do: {_md(cause.get("fix"))}</div>' if k == 0
                   else "")
                + (f'<details><summary>as Dynamo says it</summary><pre>'
                   f'{_esc(reasons[k])}</pre></details>' if k < len(reasons) else "")
                + "</div>")
        source, first = _source_block(frame.get("source_file"), frame.get("first_line"),
                                      marks)
        transformed_name = frame.get("transformed_code")
        transformed = dump.read(transformed_name) if transformed_name else None
        left = (highlight(source, _anchor(fid, "src"),
                          {m - first + 1 for m in marks}, first) if source
                else '<p class="muted">source not available</p>')
        right = (_link_names(highlight(transformed, _anchor(fid, "tc")),
                             self.graph_ids(dump, frame)) if transformed
                 else '<p class="muted">not dumped</p>')
        if transformed and source:
            right = _link_lines(right, _anchor(fid, "tc"), _anchor(fid, "src"),
                                frame.get("line_map") or [], first,
                                first + source.count("\n") - 1)
        kernels = [k for k in frame.get("kernels") or [] if isinstance(k, dict)]
        if kernels and source:
            left = self.kernel_links(dump, frame, kernels, left, first,
                                     first + source.count("\n") - 1)
        out.append(f'<div class="cols"><div><h3>original source</h3>{left}</div>'
                   f'<div><h3>transformed code <span class="muted">'
                   f'{_esc(transformed_name or "")}</span></h3>{right}</div></div>')
        guards = frame.get("guards") or []
        if guards:
            bad = failed.get(cid, [])
            groups = []
            for key, checks in guard_groups(guards):
                lines = "".join(
                    f'<div class="guard{" failed" if guard_failed(g, bad) else ""}">'
                    f'{_esc(g)}</div>' for g in checks)
                groups.append(f"<h3>{_esc(key)}</h3>{lines}")
            n_failed = sum(guard_failed(g, bad) for g in guards)
            note = f", {n_failed} failed later (marked)" if n_failed else ""
            out.append(f"<details{' open' if n_failed else ''}><summary>guards "
                       f"({len(guards)}{note})</summary>{''.join(groups)}</details>")
        if kernels:
            out.append(self.kernel_table(dump, frame, kernels, first if source else 0,
                                         first + source.count("\n") - 1 if source else -1))
        graphs = frame.get("graphs") or []
        if graphs:
            links = " &middot; ".join(
                f'<a href="#{self.file_id(dump, g["file"])}">{_esc(g["file"])}</a>'
                + (" (runs from this file)" if g.get("compiled_from_file") else "")
                for g in graphs)
            out.append(f"<h3>graphs</h3><p>{links}</p>")
        out.append("</section>")
        self.parts.append("".join(out))

    def kernel_id(self, dump: RankDump, frame: dict[str, Any], index: int) -> str:
        return _anchor(self.frame_id(dump, frame), "kernel", index)

    def kernel_links(self, dump: RankDump, frame: dict[str, Any],
                     kernels: list[dict[str, Any]], left: str, first: int, last: int) -> str:
        """The original source with, on each line Inductor's kernels compute, a link to
        the first of them (in the frame's kernel table)."""
        prefix = _anchor(self.frame_id(dump, frame), "src")
        for (path, line), found in kernels_by_line(kernels).items():
            if path != frame.get("source_file") or not first <= line <= last:
                continue
            names = ", ".join(dict.fromkeys(str(kernels[i].get("name")) for i in found))
            label = (f"&rarr; {_esc(kernels[found[0]].get('name'))}" if len(found) == 1
                     else f"&rarr; {len(found)} kernels")
            link = (f'<a class="kern-link" href="#{self.kernel_id(dump, frame, found[0])}" '
                    f'title="Inductor kernels computing this line: {_esc(names)}">{label}</a>')
            left = _append_to_line(left, prefix, line - first + 1, link)
        return left

    def kernel_table(self, dump: RankDump, frame: dict[str, Any],
                     kernels: list[dict[str, Any]], first: int, last: int) -> str:
        """Inductor's kernels of the frame's graphs: each linked to where its output code
        calls it, its graph nodes, and the user lines it computes (and those calls back
        to the lines)."""
        src = _anchor(self.frame_id(dump, frame), "src")
        rows = []
        for index, kernel in enumerate(kernels):
            file_id = self.file_id(dump, str(kernel.get("file")))
            at = kernel.get("called_at") or kernel.get("defined_at")
            name = _esc(kernel.get("name"))
            code = (f'<a href="#{_anchor(file_id, "l")}-{at}">{name}</a>' if at else name)
            user = []
            for line in kernel.get("lines") or []:
                if not isinstance(line, dict):
                    continue
                number: Any = line.get("line")
                text = f"{_esc(short_path(line.get('file')))}:{_esc(number)}"
                inside = (line.get("file") == frame.get("source_file")
                          and isinstance(number, int) and first <= number <= last)
                user.append((f'<a href="#{src}-{number - first + 1}">{text}</a>' if inside
                             else text) + f' <code>{_esc(line.get("code") or "")}</code>')
                if at and inside:
                    self.backlinks.setdefault(file_id, []).append(
                        (at, f'<a class="src-link" href="#{src}-{number - first + 1}" '
                             f'title="computes this line of the source">&larr; '
                             f'{text}</a>'))
            nodes = ", ".join(kernel.get("nodes") or kernel.get("source_nodes") or [])
            rows.append(f'<tr id="{self.kernel_id(dump, frame, index)}"><td>{code}</td>'
                        f'<td>{_esc(kernel.get("file"))}</td><td>{_esc(nodes)}</td>'
                        f'<td>{"<br>".join(user) or "?"}</td></tr>')
        cached = any(k.get("from_cache") for k in kernels)
        note = (" Code from a cache (Inductor did not write it in this run) names its "
                "nodes only in comments, which on CPU precede extern calls only: some "
                "kernels then have no line." if cached else "")
        return (f"<details open><summary>Inductor's kernels: {_esc(kernels_text(kernels))}"
                f"</summary><p class=\"muted\">Each kernel, where its output code calls it, "
                f"the graph nodes it computes and the user lines they come from.{note}</p>"
                f"<table><tr><th>kernel</th><th>output code</th><th>nodes</th><th>user lines"
                f"</th></tr>{''.join(rows)}</table></details>")

    def skipped(self, dump: RankDump) -> None:
        for skip in dump.skipped_frames:
            sid = _anchor("skipped", dump.rank, dump.pid, skip.get("compile_id"))
            breaks = "".join(_break_html(b) for b in skip.get("graph_breaks") or [])
            self.parts.append(
                f'<section class="searchable" id="{sid}"><h2>{_esc(skip.get("function"))} '
                f'<span class="muted">run without compiling</span></h2>'
                f'<div class="muted">{_esc(short_path(skip.get("source_file")))}:'
                f'{_esc(skip.get("first_line"))}</div>{breaks}'
                f'<pre>{_esc(skip.get("reason"))}</pre></section>')
            self.nav.append(f'<li><a href="#{sid}">{_esc(skip.get("function"))}</a> '
                            f'<span class="muted">not compiled</span></li>')

    def files(self, dump: RankDump) -> None:
        """Graph and full-code files, each its own section (links lead here)."""
        shown = set()
        for entry in dump.files:
            name = entry.get("file")
            if entry.get("kind") == "transformed_code" or not name or name in shown:
                continue
            shown.add(name)
            text = dump.read(name)
            if text is None:
                continue
            fid = self.file_id(dump, name)
            self.parts.append(
                f'<section class="searchable" id="{fid}"><h2>{_esc(name)} <span '
                f'class="muted">{_esc(entry.get("kind"))} {_esc(entry.get("compile_id"))}'
                f'</span></h2><details><summary>show</summary>'
                f'{self.with_backlinks(fid, highlight(text, _anchor(fid, "l")))}</details>'
                f'</section>')

    def with_backlinks(self, fid: str, code_html: str) -> str:
        """A dumped file's highlighted code with the links its lines lead back by."""
        for line, link in self.backlinks.get(fid, []):
            code_html = _append_to_line(code_html, _anchor(fid, "l"), line, link)
        return code_html

    def render(self) -> str:
        self.header()
        self.divergence()
        for dump in self.run.ranks:
            self.notes(dump)
            self.breaks(dump)
            self.recompiles(dump)
            self.compile_time(dump)
            self.tree(dump)
            failed = self.failed_by_entry(dump)
            for frame in dump.frames:
                self.frame(dump, frame, failed)
            self.skipped(dump)
            self.files(dump)
        head = self.parts[0]
        body = "".join(self.parts[1:])
        return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>unveil report: {_esc(self.run.directory.name)}</title>"
                f"<style>{CSS}{pygments_css()}</style></head><body>{head}<main>"
                f"<nav><ul>{''.join(self.nav)}</ul></nav><div id=\"content\">{body}</div>"
                f"</main><script>{SCRIPT}</script></body></html>\n")


def render(run: Run) -> str:
    """The report for ``run`` as one HTML document."""
    return _Page(run).render()


def write_report(run: Run, path: str | Path | None = None) -> Path:
    """Write the report (default: ``report.html`` in the dump directory)."""
    from .._io import write_atomic

    out = Path(path) if path else run.directory / "report.html"
    write_atomic(out, render(run))
    return out


__all__ = ["render", "write_report", "function_of"]
