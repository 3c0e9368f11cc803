"""Draws docs/overview.svg, the README's picture: the isolation result (a 16-SM victim's p99
beside a compute hog, per arm, from `greenctx bench isolation`'s table) and a `greenctx map`
grid (the SMs each partition of a split ran on).

    python3 scripts/readme_figure.py bench/results/bench.txt MAP.json > docs/overview.svg

MAP.json: `greenctx --json map 24 40 rest` (on the simulated H200 it is the same grid as the
H200's own, docs/gpu-runs/2026-11-29-h200.md).
"""
import json
import math
import re
import sys

# (the table's arm, the figure's label): the victim alone in its SMs is the physical limit.
ARMS = [("victim alone, its partition", "alone in its 16 SMs"),
        ("green: victim | hog rest", "green contexts: victim | hog"),
        ("plain streams", "plain streams"), ("priorities (victim high)", "stream priorities"),
        ("green victim, hog primary", "victim green, hog in primary")]
COLOURS = ["#4a90d9", "#e8a33d", "#6bb36b", "#b57edc", "#d9534f"]
BAR = {"green contexts: victim | hog": "#2e8b57", "alone in its 16 SMs": "#999"}


def p99s(table):
    """{label: p99 µs} of the fma victim beside the fma hog (alone: the victim by itself)."""
    rows = {}
    for line in open(table):
        m = re.match(r"fma\s+(fma|-)\s+(.+?)\s{2,}[\d.]+\s+([\d.]+)", line)
        if m:
            rows[m.group(2)] = float(m.group(3))
    return rows


def text(x, y, s, size=12, anchor="start", weight="normal"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}">{s}</text>')


def isolation(rows, out):
    out.append(text(10, 22, "A 16-SM victim beside a compute hog on the other 116 SMs", 14,
                    weight="bold"))
    out.append(text(10, 40, "victim p99, µs (log); H200, R580 driver (CUDA 13.0), "
                    "2026-11-29", 11))
    x0, x1, lo, hi = 190, 460, 10, 2000
    scale = lambda v: x0 + (x1 - x0) * math.log10(v / lo) / math.log10(hi / lo)  # noqa: E731
    for tick in (10, 100, 1000):
        out.append(f'<line x1="{scale(tick):.1f}" y1="52" x2="{scale(tick):.1f}" y2="228" '
                   'stroke="#ddd"/>')
        out.append(text(scale(tick), 242, str(tick), 10, "middle"))
    y = 58
    for name, label in ARMS:
        v = rows[name]
        colour = BAR.get(label, "#c0504d")
        out.append(text(x0 - 6, y + 17, label, 11, "end"))
        out.append(f'<rect x="{x0}" y="{y + 6}" width="{scale(v) - x0:.1f}" height="16" '
                   f'fill="{colour}"/>')
        out.append(text(scale(v) + 4, y + 18, f"{v:g}", 10))
        y += 34


def grid(layout, out):
    x0, y0, cell = 520, 58, 19
    out.append(text(x0, 22, "greenctx map 24 40 rest", 14, weight="bold"))
    out.append(text(x0, 40, "SMs each partition ran on (a row = 16 SMs)", 11))
    owner = {}
    for i, part in enumerate(layout["partitions"]):
        for sm in part["sm_ids"]:
            owner[sm] = i
    for sm in range(layout["sm_count"]):
        x, y = x0 + (sm % 16) * cell, y0 + (sm // 16) * cell
        colour = COLOURS[owner[sm] % len(COLOURS)] if sm in owner else "#eee"
        out.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                   f'fill="{colour}"/>')
    y = y0 + 9 * cell + 18
    for i, part in enumerate(layout["partitions"]):
        x = x0 + i * 110
        out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" '
                   f'fill="{COLOURS[i % len(COLOURS)]}"/>')
        out.append(text(x + 16, y, f"{part['label']}: {part['sm_count']} SMs", 11))


def main(table, map_json):
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="840" height="260" '
           'font-family="sans-serif">', '<rect width="100%" height="100%" fill="#fff"/>']
    isolation(p99s(table), out)
    with open(map_json) as f:
        grid(json.load(f), out)
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
