"""Figures the docs show, drawn to be read at the width of the page.

The docs display a benchmark's PNG at the width of their content column, about
700–900 px. A figure drawn 15 inches wide and shrunk to that loses its labels, so
every figure here is drawn at that width in the first place:

* at most three panels per row (two when the panels hold many points);
* fonts that stay 9 pt or larger once the PNG is scaled to 700 px;
* one legend for the whole figure, below the panels, never over the data;
* one message per panel: its title names what it shows.

Usage (inside a benchmark's plot function)::

    import _plot

    with _plot.figure(path, n_panels=6, ncols=3) as (fig, axes):
        for ax, name in zip(axes, names):
            ax.plot(...)
            _plot.epsilon_axis(ax, EPSILONS)
        _plot.legend_below(fig, axes)

Benchmarks that take minutes redraw from their committed CSV with ``--plot-only``
(see ``_report.redraw``), so a new style never changes a number.
"""

import math
from contextlib import contextmanager

import numpy as np

__all__ = [
    "DPI",
    "STYLE",
    "WIDTH",
    "epsilon_axis",
    "figure",
    "layout_problems",
    "legend_below",
    "legend_in",
    "mean_of",
    "plain_log_ticks",
]

WIDTH = 7.5  # inches: the content column, about 900 px at DPI
DPI = 120
# Font sizes in points at WIDTH; shown at 700 px the smallest (8.5 pt) is ~11 px.
STYLE = {
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.labelsize": 9.5,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
}


def layout_problems(fig):
    """Overlaps a reader would see in ``fig``, as sentences (empty: none).

    Checked after drawing: two tick labels of one axis that overlap (e.g. "2×10⁰"
    next to "3×10⁰" on a log axis), and a legend drawn inside a panel over any of
    that panel's data points (line vertices or scatter points).
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        name = ax.get_title() or f"panel {fig.axes.index(ax) + 1}"
        for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            boxes = [label.get_window_extent(renderer)
                     for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]
                     for label in (tick.label1, tick.label2)
                     if label.get_visible() and label.get_text().strip()
                     and tick.get_visible()]
            boxes.sort(key=lambda box: (box.x0, box.y0))
            for k, first in enumerate(boxes):
                if any(first.overlaps(other) for other in boxes[k + 1:]):
                    problems.append(f"{name}: overlapping {which} tick labels")
                    break
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        points = [ax.transData.transform(line.get_xydata()) for line in ax.get_lines()
                  if line.get_visible() and len(line.get_xydata())]
        points += [ax.transData.transform(c.get_offsets()) for c in ax.collections
                   if c.get_visible() and len(c.get_offsets())]
        if any(((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0)
                & (pts[:, 1] < box.y1)).any() for pts in points if pts.ndim == 2):
            problems.append(f"{name}: the legend covers data")
    return problems


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def figure(path, n_panels=1, *, ncols=None, panel_height=2.2, sharex=False, sharey=False,
           title=None):
    """Open a figure of ``n_panels`` panels at page width; save it to ``path`` on exit.

    Yields ``(fig, axes)`` with ``axes`` a flat list of exactly ``n_panels`` axes
    (unused grid cells are removed). Everything drawn inside the ``with`` block uses
    :data:`STYLE`.
    """
    plt = _pyplot()
    if ncols is None:
        ncols = n_panels if n_panels <= 3 else (2 if n_panels == 4 else 3)
    nrows = math.ceil(n_panels / ncols)
    with plt.rc_context(STYLE):
        fig, grid = plt.subplots(
            nrows, ncols, figsize=(WIDTH, panel_height * nrows + 0.9), sharex=sharex,
            sharey=sharey, squeeze=False, layout="constrained",
        )
        axes = list(grid.ravel())
        for ax in axes[n_panels:]:
            ax.remove()
        axes = axes[:n_panels]
        if title:
            fig.suptitle(title, fontsize=10.5)
        try:
            yield fig, axes
            problems = layout_problems(fig)
            if problems:
                raise ValueError(f"{path}: " + "; ".join(problems))
            fig.savefig(path, dpi=DPI)
        finally:
            plt.close(fig)


def _entries(axes, order):
    entries = {}
    for ax in np.atleast_1d(axes):
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if not label.startswith("_"):
                entries.setdefault(label, handle)
    labels = [label for label in (order or entries) if label in entries]
    return [entries[label] for label in labels], labels


def legend_in(ax, axes, *, order=None):
    """The figure's legend drawn in a spare panel ``ax`` (e.g. the 4th cell of a 2 × 2
    grid holding 3 plots), entries from ``axes``."""
    handles, labels = _entries(axes, order)
    ax.axis("off")
    return ax.legend(handles, labels, loc="center")


def legend_below(fig, axes, *, ncol=None, order=None):
    """One legend for the figure, under the panels (entries deduplicated by label).

    ``order`` (labels) fixes the order; by default the order of first appearance.
    """
    handles, labels = _entries(axes, order)
    if not labels:
        return None
    if ncol is None:
        longest = max(len(label) for label in labels)
        ncol = max(1, min(len(labels), 3 if longest <= 24 else 2 if longest <= 40 else 1))
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol)


def epsilon_axis(ax, epsilons, *, label="ε"):
    """A log-scale ε axis with a tick at each measured ε, written plainly ("0.5", "4")."""
    ax.set_xscale("log")
    ax.set_xticks(list(epsilons), [f"{e:g}" for e in epsilons])
    ax.minorticks_off()
    ax.set_xlabel(label)


def plain_log_ticks(ax, axis="x"):
    """Label a log axis with plain numbers ("0.5", "2", "3") instead of "2×10⁰"."""
    from matplotlib.ticker import FuncFormatter, LogFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    # minor ticks labelled only when the axis spans about a decade (else they collide)
    target.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def mean_of(cell):
    """The mean of a table cell such as ``"0.907 ± 0.030"`` or ``"0.61 (Ra)"``
    (NaN when empty)."""
    text = str(cell).strip()
    if not text:
        return float("nan")
    return float(text.split()[0])
