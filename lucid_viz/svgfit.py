"""Make every text of a Graphviz SVG fit inside the picture, whatever font the browser uses.

:func:`raise_cluster_labels` keeps the module clusters' labels readable where an edge has to
cross one (Graphviz draws edges over cluster labels): the labels are redrawn last, on a white
backing, so an edge passes under the text instead of through it.

Graphviz lays text out with its own estimate of each string's width.  A browser draws it in
whatever font it finds for "Helvetica" -- on Linux usually DejaVu Sans, which is wider -- so a
centred title wider than the graph used to be cut off on both sides.  :func:`fit_text` measures
every ``<text>`` with DejaVu Sans's character widths (the widest common fallback, plus a
margin) and widens the picture's canvas (``width`` and ``viewBox``) until each one fits.
"""

from __future__ import annotations

import html
import re

__all__ = ["fit_text", "raise_cluster_labels", "text_extents"]

# DejaVu Sans advance widths, in em (units per em 2048, rounded): the widest common fallback
_WIDTHS: dict[str, float] = {" ": 0.318, ".": 0.318, ",": 0.318, ":": 0.337, ";": 0.337,
                             "(": 0.390, ")": 0.390, "[": 0.390, "]": 0.390, "-": 0.361,
                             "+": 0.838, "=": 0.838, "×": 0.838, "→": 0.838, "/": 0.337,
                             "_": 0.500, "'": 0.275, '"': 0.460, "·": 0.318, "…": 1.0,
                             "%": 0.950, "#": 0.838, "*": 0.500, "|": 0.337, "@": 1.0}
_WIDTHS.update(dict.fromkeys("0123456789", 0.636))
_WIDTHS.update(zip("abcdefghijklmnopqrstuvwxyz",
                   (0.613, 0.635, 0.550, 0.635, 0.615, 0.352, 0.635, 0.634, 0.278, 0.278, 0.579,
                    0.278, 0.974, 0.634, 0.612, 0.635, 0.635, 0.411, 0.521, 0.392, 0.634, 0.592,
                    0.818, 0.592, 0.592, 0.525)))
_WIDTHS.update(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                   (0.684, 0.686, 0.698, 0.770, 0.632, 0.575, 0.775, 0.752, 0.295, 0.295, 0.656,
                    0.557, 0.863, 0.748, 0.787, 0.603, 0.787, 0.695, 0.635, 0.611, 0.732, 0.684,
                    0.989, 0.685, 0.611, 0.685)))
_DEFAULT = 0.70  # any other character
_MARGIN = 1.05  # and 5% more, for kerning and hinting differences

_SVG = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([-\d. ]+)"')
_TRANSLATE = re.compile(r'<g id="graph0" class="graph" transform="[^"]*translate\(([-\d.]+) '
                        r'([-\d.]+)\)"')
_TEXT = re.compile(r"<text([^>]*)>([^<]*)</text>")
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def _width(text: str, size: float) -> float:
    return sum(_WIDTHS.get(c, _DEFAULT) for c in text) * size * _MARGIN


def text_extents(svg: str) -> list[tuple[float, float, str]]:
    """(left, right, text) of every ``<text>``, in the canvas's coordinates, as DejaVu Sans
    would draw it."""
    move = _TRANSLATE.search(svg)
    dx = float(move.group(1)) if move else 0.0
    found = []
    for attrs, body in _TEXT.findall(svg):
        a = dict(_ATTR.findall(attrs))
        if "x" not in a:
            continue
        text = html.unescape(body)
        w = _width(text, float(a.get("font-size", 14)))
        x = float(a["x"]) + dx
        anchor = a.get("text-anchor", "start")
        left = x - w / 2 if anchor == "middle" else (x - w if anchor == "end" else x)
        found.append((left, left + w, text))
    return found


def fit_text(svg: str) -> str:
    """``svg`` with its canvas widened (evenly on the side that needs it) so that every text
    fits; unchanged when all already do."""
    head = _SVG.search(svg)
    if head is None:
        return svg
    width, height = float(head.group(1)), float(head.group(2))
    x0, y0, vw, vh = (float(v) for v in head.group(3).split())
    extents = text_extents(svg)
    if not extents:
        return svg
    left = min(e[0] for e in extents) - 2
    right = max(e[1] for e in extents) + 2
    new_x0 = min(x0, left)
    new_right = max(x0 + vw, right)
    if new_x0 == x0 and new_right == x0 + vw:
        return svg
    new_vw = new_right - new_x0
    scale = width / vw if vw else 1.0
    replaced = (f'<svg width="{new_vw * scale:.2f}pt" height="{height:.2f}pt"\n'
                f' viewBox="{new_x0:.2f} {y0:.2f} {new_vw:.2f} {vh:.2f}"')
    background = (f'<rect x="{new_x0:.2f}" y="{y0:.2f}" width="{new_vw:.2f}" '
                  f'height="{vh:.2f}" fill="white"/>')
    out = svg[:head.start()] + replaced + svg[head.end():]
    first_g = out.find("<g id=\"graph0\"")
    return out[:first_g] + background + "\n" + out[first_g:] if first_g >= 0 else out


_CLUSTER = re.compile(r'<g id="clust\d+" class="cluster">.*?</g>', re.S)


def raise_cluster_labels(svg: str) -> str:
    """``svg`` with every cluster label drawn again on top of everything, on a white backing
    the size of its text; unchanged when it has no clusters."""
    labels = []
    for cluster in _CLUSTER.findall(svg):
        if "<title>cluster_legend</title>" in cluster:
            continue  # the legend's title crosses no edge
        for attrs, body in _TEXT.findall(cluster):
            a = dict(_ATTR.findall(attrs))
            if "x" not in a or "y" not in a:
                continue
            size = float(a.get("font-size", 14))
            w = _width(html.unescape(body), size)
            x, y = float(a["x"]), float(a["y"])
            anchor = a.get("text-anchor", "start")
            left = x - w / 2 if anchor == "middle" else (x - w if anchor == "end" else x)
            labels.append(f'<rect x="{left - 2:.2f}" y="{y - size:.2f}" width="{w + 4:.2f}" '
                          f'height="{size * 1.3:.2f}" fill="white" fill-opacity="0.9"/>'
                          f"<text{attrs}>{body}</text>")
    if not labels:
        return svg
    end = svg.rfind("</g>")
    return svg[:end] + "\n".join(labels) + "\n" + svg[end:]
