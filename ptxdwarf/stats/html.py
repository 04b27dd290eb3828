"""``stats --html``: one self-contained page (inline CSS, SVG and one inline script; no font,
style sheet, image or request from elsewhere) with a bar per variable over its function's code."""

from __future__ import annotations

import html
import os

from ..cuda.regmap import FunctionRegisters
from ..files import save_text
from .report import BUCKETS, FunctionStats, ModuleStats, StatsReport, VariableStats, share

__all__ = ["BAR_WIDTH", "page", "write_html"]

#: The width in pixels of a function's code range on the page.
BAR_WIDTH = 600

_STYLE = """
body { font: 14px sans-serif; margin: 1em 2em; color: #222; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; }
details { margin: 4px 0; } summary { cursor: pointer; }
.none { fill: #d33; } .located { fill: #f0b400; } .readable { fill: #2a2; }
svg text { font: 11px sans-serif; } .tick { stroke: #888; }
#filter { margin: 4px 0 8px; width: 30em; }
"""

#: Shows only the functions whose name holds the filter's text.
_FILTER = """
document.getElementById('filter').addEventListener('input', function (e) {
  var text = e.target.value.toLowerCase();
  document.querySelectorAll('details.function').forEach(function (d) {
    d.style.display = d.dataset.name.toLowerCase().indexOf(text) >= 0 ? '' : 'none';
  });
});
"""


def write_html(report: StatsReport, path: str | os.PathLike[str]) -> None:
    """Write :func:`page` of ``report`` to ``path``."""
    save_text(page(report), path)


def page(report: StatsReport) -> str:
    """The page of ``report``: per module the bucket histograms, the least-covered
    variables, and per function (collapsed) one bar per variable: green where it is
    readable, amber where it only has a DWARF location, red where it has none."""
    title = html.escape(report.filename)
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>ptxdwarf stats: {title}</title><style>{_STYLE}</style></head><body>",
        f"<h1>ptxdwarf stats: {title}</h1>",
    ]
    for module in report.modules:
        parts.extend(_module(module))
    parts.append(f"<script>{_FILTER}</script></body></html>\n")
    return "".join(parts)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _module(module: ModuleStats) -> list[str]:
    out = [f"<h2>{html.escape(module.label)}</h2>"]
    variables = module.variables
    scope = sum(v.scope_bytes for v in variables)
    out.append(
        f"<p>{len(module.functions)} functions, {len(variables)} variables and parameters; located "
        f"{_pct(share(sum(v.covered_bytes for v in variables), scope))}, readable "
        f"{_pct(share(sum(v.readable_bytes for v in variables), scope))}; without location "
        f"{module.without_location}, never readable {module.never_readable}; SASS instructions with a line "
        f"{_pct(share(module.instructions_with_line, module.instructions))}</p>"
    )
    out.append(_histogram(module.buckets(False), module.buckets(True)))
    worst = sorted(
        (v for v in variables if v.scope_bytes), key=lambda v: (v.readable_bytes / v.scope_bytes, v.path)
    )
    out.append("<h3>Least readable</h3><table><tr><th>variable</th><th>located</th><th>readable</th></tr>")
    for v in worst[:20]:
        out.append(
            f"<tr><td>{html.escape(v.path)}</td><td>{_pct(v.covered_share)}</td><td>{_pct(v.readable_share)}</td></tr>"
        )
    out.append("</table><h3>Functions</h3>")
    out.append("<input id='filter' type='search' placeholder='filter functions by name'>")
    for f in module.functions:
        out.extend(_function(f, module.register_maps.get(f.name)))
    return out


def _histogram(covered: list[int], readable: list[int]) -> str:
    """The buckets as two bars each (located, readable)."""
    top = max([*covered, *readable, 1])
    width, height, step = 12 * 70, 140, 70
    bars = []
    for i, name in enumerate(BUCKETS):
        x = i * step + 4
        for j, (counts, kind) in enumerate(((covered, "located"), (readable, "readable"))):
            h = round(100 * counts[i] / top)
            bars.append(
                f"<rect class='{kind}' x='{x + 26 * j}' y='{110 - h}' width='24' height='{h}'>"
                f"<title>{kind} {name}: {counts[i]}</title></rect>"
            )
        bars.append(f"<text x='{x}' y='125'>{html.escape(name)}</text>")
    return (
        f"<svg class='histogram' width='{width}' height='{height}' xmlns='http://www.w3.org/2000/svg'>"
        + "".join(bars)
        + "</svg>"
    )


def _function(f: FunctionStats, registers: FunctionRegisters | None) -> list[str]:
    name = html.escape(f.name)
    out = [
        f"<details class='function' data-name='{name}'><summary>{name}: {f.size} bytes, "
        f"{len(f.variables)} variables, located {_pct(f.covered_share)}, readable {_pct(f.readable_share)}"
        "</summary>"
    ]
    rows = [v for v in f.variables if v.scope_bytes]
    lines_at = 18 * len(rows) + 20
    height = lines_at + (30 if f.source_lines else 0)
    svg = [f"<svg width='{BAR_WIDTH + 220}' height='{height}' xmlns='http://www.w3.org/2000/svg'>"]
    for i, v in enumerate(rows):
        sass = sorted({e.sass for ptx in v.registers for e in registers.of(ptx)}) if registers else []
        svg.append(_bar(v, f.size, 18 * i, sass))
    for i in range(5):
        x = 220 + BAR_WIDTH * i / 4
        svg.append(
            f"<line class='tick' x1='{x:.2f}' x2='{x:.2f}' y1='{lines_at - 18}' y2='{lines_at - 14}'/>"
        )
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        svg.append(
            f"<text x='{x:.2f}' y='{lines_at - 4}' text-anchor='{anchor}'>0x{f.size * i // 4:x}</text>"
        )
    svg.extend(_source_lines(f, lines_at))
    svg.append("</svg>")
    out.extend(svg)
    out.append("</details>")
    return out


def _source_lines(f: FunctionStats, y: int) -> list[str]:
    """A mark where each source line's code starts along the axis (its line and offset on
    hover); a label under the marks no closer than 40 pixels to the one before."""
    if not f.source_lines or not f.size:
        return []
    scale = BAR_WIDTH / f.size
    out = [f"<text x='0' y='{y + 12}'>source line</text>"]
    last = -1e9
    for address, line in f.source_lines:
        x = 220 + min(address, f.size) * scale
        out.append(
            f"<line class='tick source-line' data-line='{line}' data-offset='{address}' x1='{x:.2f}' "
            f"x2='{x:.2f}' y1='{y + 2}' y2='{y + 10}'><title>line {line} at 0x{address:x}</title></line>"
        )
        if x - last >= 40:
            out.append(f"<text x='{x:.2f}' y='{y + 24}' text-anchor='middle'>{line}</text>")
            last = x
    return out


def _bar(v: VariableStats, size: int, y: int, sass: list[str]) -> str:
    """One variable's row: red over all of the function, amber where located, green where
    readable; each rect's ``data-bytes`` is the bytes it stands for; its PTX registers and
    the SASS registers ptxas's map puts them in (``sass``) on hover."""
    scale = BAR_WIDTH / size if size else 0.0
    regs = ", ".join(v.registers) or "memory or constant"
    if v.registers:
        regs += "; SASS " + (", ".join(sass) if sass else "none")
    label = html.escape(v.name)
    parts = [
        f"<g class='variable' data-path='{html.escape(v.path)}' data-scope='{v.scope_bytes}' "
        f"data-covered='{v.covered_bytes}' data-readable='{v.readable_bytes}'>"
        f"<title>{html.escape(v.path)}: located {_pct(v.covered_share)}, readable {_pct(v.readable_share)} ({html.escape(regs)})</title>"
        f"<text x='0' y='{y + 12}'>{label}</text>"
        f"<rect class='none' x='220' y='{y}' width='{BAR_WIDTH}' height='14'/>"
    ]
    for kind, spans in (("located", v.covered), ("readable", v.readable)):
        for lo, hi in spans:
            parts.append(
                f"<rect class='{kind}' data-bytes='{hi - lo}' x='{220 + lo * scale:.2f}' y='{y}' "
                f"width='{(hi - lo) * scale:.2f}' height='14'/>"
            )
    parts.append("</g>")
    return "".join(parts)
