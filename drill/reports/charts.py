"""Charts as SVG text to inline in a page, drawn by matplotlib: the plumbing every
kvdrill chart shares (the progress report's in drill.reports.stats_charts, an engine run's in
drill.engine_charts).

matplotlib is imported only here and by those two modules, which only the commands
that write a page load, so the quiz and the text reports never load it.

The SVG is deterministic: figures are drawn with matplotlib's default settings
(not the user's matplotlibrc), ids are hashed with a fixed salt and prefixed with
the chart's name (so charts in one page never share one), and no date is written.
Text is kept as text (`svg.fonttype` none), escaped by matplotlib, and never read
as mathtext, so a topic named `$x$` or `<script>` is shown as typed.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

from drill.errors import KvdrillError
from drill.text import printable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH_IN = 8.0
# Okabe-Ito colours, told apart with any kind of colour vision
BLUE, ORANGE, GREEN, VERMILION, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#999999"
INK = "#333333"
LABEL_CHARS = 34  # longer topic names are cut short in a chart (tables show them whole)

_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "kvdrill-report",
    "text.parse_math": False,
    "font.size": 9,
    # DejaVu Sans (matplotlib's own) lays the text out; a browser without it uses these
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "axes.edgecolor": "#bbbbbb",
    "axes.labelcolor": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": INK,
    "ytick.color": INK,
    "legend.frameon": False,
}


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise KvdrillError(
            "kvdrill draws the charts of its web pages with matplotlib: pip install matplotlib"
        ) from None
    return matplotlib


def new_figure(height_in: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH_IN, height_in), layout="constrained")


def to_svg(draw, name: str, label: str, *args: Any) -> str:
    """`draw(*args)` -> Figure, as one inline `<svg>` whose ids all begin with `name`."""
    mpl = _matplotlib()
    with mpl.rc_context():
        mpl.rcdefaults()  # the same chart whatever the user's matplotlibrc says
        mpl.rcParams.update(_RC)
        fig = draw(*args)
        buffer = io.StringIO()
        fig.savefig(
            buffer,
            format="svg",
            metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
        )
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # no XML prolog or doctype inside HTML
    # every "<" matplotlib writes opens a tag (text and attributes escape theirs)
    svg = re.sub(r"<[^>]*>", lambda tag: _prefix_ids(tag[0], name), svg)
    aria = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return svg.replace("<svg ", f'<svg class="chart" role="img" aria-label="{aria}" ', 1)


def _prefix_ids(tag: str, name: str) -> str:
    tag = tag.replace(' id="', f' id="{name}-')
    tag = tag.replace("url(#", f"url(#{name}-")
    return tag.replace('href="#', f'href="#{name}-')


def chart_label(text: str | None) -> str:
    """Text from the database or bank as a chart shows it: one printable line, cut short."""
    line = " ".join(printable(text or "-").split()) or "-"
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "\u2026"


def empty_note(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color=GREY)
