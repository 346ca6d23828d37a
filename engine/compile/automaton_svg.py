"""A query's NFA_scep drawn as SVG, states left to right (the console's picture of the
automaton ``spaseq explain --dot`` describes): drawn here from ``automaton_edges``, so a
browser shows it with no DOT renderer and no network (docs/decisions.md 77)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.nfa import Edge, automaton_edges, compile_query, edge_theta

_R = 20            # a state's radius
_CHAR = 7.2        # the width of a character of the 12px monospace labels
_LOOP = 26         # the height added by each self-loop stacked above a state
_BEND = 34         # how far below the line each further parallel edge bends
#: the stroke of an edge by what it does (automaton_edges' labels)
_STYLE = {"take": ("#1f4e79", ""), "iterate": ("#2e7d32", ""), "skip": ("#888", "4 3"),
          "skip-if-absent": ("#888", "4 3"), "absent": ("#b00020", "6 3")}
_FONT = {"font-family": "ui-monospace, monospace", "font-size": "12"}


def automaton_svg(query: A.Query) -> str:
    """The automaton of ``query`` as a standalone SVG document: one ``g.state`` per state
    (``data-state="x0"``...; the final one doubly circled), one ``g.edge`` per edge with its
    predicate theta as its label and, as its title, the line ``spaseq explain`` prints."""
    auto = compile_query(query)
    edges = automaton_edges(auto, query)
    loops: dict[int, list[Edge]] = {}
    forward: dict[int, list[Edge]] = {}
    for e in edges:
        (loops if e.source == e.target else forward).setdefault(e.source, []).append(e)
    widest = max((len(edge_theta(e, query)) for e in edges), default=0)
    step = max(110.0, widest * _CHAR + 2 * _R + 24)
    above = max((len(v) for v in loops.values()), default=0)
    below = max((len(v) - 1 for v in forward.values()), default=0)
    cy = 34.0 + (above * _LOOP + 30 if above else 0)
    x0 = 60.0
    width = x0 + auto.final * step + _R + 40
    height = cy + _R + 30 + below * _BEND
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": _n(width), "height": _n(height),
                             "viewBox": f"0 0 {_n(width)} {_n(height)}", "role": "img", "class": "automaton"})
    ET.SubElement(svg, "title").text = f"NFA_scep: states x0..x{auto.final}"
    defs = ET.SubElement(svg, "defs")
    for kind, (colour, _) in _STYLE.items():
        marker = ET.SubElement(defs, "marker", {"id": f"arrow-{kind}", "viewBox": "0 0 10 10", "refX": "10",
                                                "refY": "5", "markerWidth": "7", "markerHeight": "7",
                                                "orient": "auto-start-reverse"})
        ET.SubElement(marker, "path", {"d": "M0,0 L10,5 L0,10 z", "fill": colour})
    # the way in
    ET.SubElement(svg, "path", {"d": f"M{_n(x0 - _R - 34)},{_n(cy)} L{_n(x0 - _R - 2)},{_n(cy)}",
                                "stroke": "#1f4e79", "fill": "none", "marker-end": "url(#arrow-take)"})
    for i in range(auto.final + 1):
        cx = x0 + i * step
        g = ET.SubElement(svg, "g", {"class": "state", "data-state": f"x{i}"})
        ET.SubElement(g, "circle", {"cx": _n(cx), "cy": _n(cy), "r": str(_R), "fill": "#fff",
                                    "stroke": "#1f4e79", "stroke-width": "1.5"})
        if i == auto.final:
            ET.SubElement(g, "circle", {"cx": _n(cx), "cy": _n(cy), "r": str(_R - 4), "fill": "none",
                                        "stroke": "#1f4e79"})
        ET.SubElement(g, "text", {"x": _n(cx), "y": _n(cy + 4), "text-anchor": "middle", **_FONT}).text = f"x{i}"
    for i, out in forward.items():
        for k, e in enumerate(out):
            a, b = x0 + i * step + _R, x0 + e.target * step - _R
            if k == 0:
                d, lx, ly = f"M{_n(a)},{_n(cy)} L{_n(b)},{_n(cy)}", (a + b) / 2, cy - 7
            else:
                bend = cy + k * _BEND
                d = f"M{_n(a - 4)},{_n(cy + 10)} Q{_n((a + b) / 2)},{_n(bend + 12)} {_n(b + 4)},{_n(cy + 10)}"
                lx, ly = (a + b) / 2, cy + k * _BEND / 2 + 22
            _edge(svg, e, query, d, lx, ly)
    for i, out in loops.items():
        cx = x0 + i * step
        for k, e in enumerate(out):
            top = cy - _R - 22 - k * _LOOP
            d = (f"M{_n(cx - 8)},{_n(cy - _R + 2)} C{_n(cx - 30)},{_n(top - 6)} "
                 f"{_n(cx + 30)},{_n(top - 6)} {_n(cx + 8)},{_n(cy - _R + 2)}")
            _edge(svg, e, query, d, cx, top - 4)
    ET.indent(svg)
    return ET.tostring(svg, encoding="unicode") + "\n"


def _edge(svg: ET.Element, e: Edge, query: A.Query, d: str, lx: float, ly: float) -> None:
    """One edge: its path (styled by what it does), its theta as label, explain's line as title."""
    colour, dash = _STYLE.get(e.label, _STYLE["take"])
    kind = e.label if e.label in _STYLE else "take"
    g = ET.SubElement(svg, "g", {"class": "edge", "data-source": f"x{e.source}",
                                 "data-target": f"x{e.target}", "data-kind": e.label})
    ET.SubElement(g, "title").text = f"x{e.source} -> x{e.target}  [{e.label}]  ({edge_theta(e, query)})"
    path = {"d": d, "stroke": colour, "fill": "none", "marker-end": f"url(#arrow-{kind})", "stroke-width": "1.4"}
    if dash:
        path["stroke-dasharray"] = dash
    ET.SubElement(g, "path", path)
    ET.SubElement(g, "text", {"x": _n(lx), "y": _n(ly), "fill": colour, "text-anchor": "middle",
                              **_FONT}).text = edge_theta(e, query)


def _n(v: float) -> str:
    """A coordinate, without a useless ``.0``."""
    return f"{v:.1f}".removesuffix(".0")
