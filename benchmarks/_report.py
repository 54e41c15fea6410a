"""Shared plumbing for the scripts in ``benchmarks/``.

Every benchmark script follows one convention:

* ``python benchmarks/<name>.py`` runs the full benchmark and writes
  ``benchmarks/results/<name>.csv``, ``<name>.md`` and ``<name>.png``;
  the markdown table is also printed to stdout.
* ``--quick`` is a smoke run (seconds, not minutes). It writes into a
  temporary directory unless ``--out`` is given, so committed results always
  come from full runs.
* ``--seed`` (default 0) seeds everything; each benchmark case gets its own
  independent stream via :func:`rng_for`.
* ``--plot-only`` measures nothing: it redraws ``<name>.png`` from the committed
  ``<name>.csv`` (:func:`redraw`), for the benchmarks whose figure the docs show.
  Figures are drawn with ``_plot`` (page width, legends outside the data).
* Throughput is measured with :func:`compare`: the skdp call and its plain
  numpy reference are timed *interleaved*, several repeats each, and the
  medians are reported. On shared, noisy machines the ratio skdp/reference is
  more meaningful than either absolute number.

Nothing here imports skdp, so the helper can be reused by any benchmark.
"""

import argparse
import csv
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

__all__ = [
    "RESULTS_DIR",
    "bar_chart",
    "compare",
    "comparison_row",
    "environment",
    "format_rate",
    "make_parser",
    "markdown_table",
    "measure",
    "median",
    "output_dir",
    "read_csv",
    "redraw",
    "rng_for",
    "write_report",
]

RESULTS_DIR = Path(__file__).resolve().parent / "results"


# ----------------------------------------------------------------- comparison rows
def comparison_row(estimator, parameter, epsilon, paper, tight, better):
    """One row of a before/after table: ``factor`` > 1 means ``tight`` is better.

    ``better`` is ``"higher"`` (budgets, rates) or ``"lower"`` (counts such as rows or
    teachers); the factor is None when either side is 0 (e.g. a δ one side charges).
    """
    paper, tight = float(paper), float(tight)
    factor = None
    if paper and tight:
        factor = tight / paper if better == "higher" else paper / tight
    return {"estimator": estimator, "parameter": parameter, "epsilon": float(epsilon),
            "paper": paper, "tight": tight, "factor": factor, "better": better}


# ----------------------------------------------------------------- command line
def make_parser(description, *, plot_only=False):
    """An ArgumentParser with the standard flags: ``--quick``, ``--seed``, ``--out``,
    and ``--plot-only`` when ``plot_only`` (the script then handles ``args.plot_only``).

    Scripts may add their own flags before calling ``parse_args``.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: fewer repeats and shorter timings (< 15 s); "
        "writes to a temporary directory unless --out is given",
    )
    parser.add_argument("--seed", type=int, default=0, help="master seed (default: 0)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default: benchmarks/results/, or a temp dir with --quick)",
    )
    if plot_only:
        parser.add_argument(
            "--plot-only",
            action="store_true",
            help="measure nothing: redraw the figure from the CSV in benchmarks/results/ "
            "(into --out, default benchmarks/results/)",
        )
    return parser


def output_dir(args):
    """Where results go: ``--out`` if given, a temp dir for ``--quick``, else ``results/``."""
    if args.out is not None:
        out = Path(args.out)
    elif getattr(args, "quick", False):
        out = Path(tempfile.gettempdir()) / "skdp-benchmarks"
    else:
        out = RESULTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    return out


def read_csv(name, results_dir=RESULTS_DIR):
    """The rows of ``<results_dir>/<name>.csv`` as dicts of strings (as written)."""
    with (Path(results_dir) / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def redraw(name, draw, out_dir):
    """``--plot-only``: draw ``<out_dir>/<name>.png`` with ``draw(rows, path)`` from the
    committed ``benchmarks/results/<name>.csv``, so a new figure style never re-measures."""
    path = Path(out_dir) / f"{name}.png"
    draw(read_csv(name), path)
    print(f"redrew {path} from {RESULTS_DIR / (name + '.csv')}", file=sys.stderr)
    return path


def rng_for(seed, name):
    """An independent ``numpy.random.Generator`` for one benchmark case.

    The stream depends only on the master ``seed`` and the case ``name`` (stable
    across runs and Python processes), so adding or reordering cases does not
    change the data of the others.
    """
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


# ---------------------------------------------------------------------- timing
def _calibrate(fn, min_time):
    """Smallest number of calls (1, 2, 4, …) whose total time is ≥ ``min_time``."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or number >= 2**20:
            return number
        # Jump close to the target, then keep doubling.
        number = max(2 * number, int(number * min_time / max(elapsed, 1e-9) * 0.8))


def _time_once(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def measure(fn, repeats=5, min_time=0.05):
    """Seconds per call of ``fn``: a list of ``repeats`` timings.

    ``fn`` is first called (at least once) to warm up and to choose how many calls
    make up one timing (enough for ``min_time`` seconds), as :mod:`timeit` does.
    """
    number = _calibrate(fn, min_time)
    return [_time_once(fn, number) for _ in range(repeats)]


def compare(fn, reference, repeats=5, min_time=0.05):
    """Time ``fn`` and ``reference`` interleaved; return ``(fn_times, reference_times)``.

    Alternating the two spreads slow phases of a shared machine over both, so that
    the ratio of the medians is steadier than either median.
    """
    n_fn = _calibrate(fn, min_time)
    n_ref = _calibrate(reference, min_time)
    fn_times, ref_times = [], []
    for _ in range(repeats):
        fn_times.append(_time_once(fn, n_fn))
        ref_times.append(_time_once(reference, n_ref))
    return fn_times, ref_times


# --------------------------------------------------------------------- output
def format_rate(per_second):
    """``4.56e6`` → ``"4.56M"``, ``1234.5`` → ``"1.23k"``."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(per_second) >= factor:
            return f"{per_second / factor:.3g}{suffix}"
    return f"{per_second:.3g}"


def _md_cell(value):
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value).replace("|", "\\|")


def markdown_table(rows, columns):
    """A GitHub markdown table; ``columns`` maps row key → header (in order)."""
    headers = list(columns.values())
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(_md_cell(row.get(key, "")) for key in columns) + " |")
    return "\n".join(lines)


def environment():
    """One line describing the machine and library versions."""
    return (
        f"{datetime.date.today().isoformat()} · Python {platform.python_version()} · "
        f"numpy {np.__version__} · {platform.machine()} · {os.cpu_count()} CPUs"
    )


def bar_chart(path, labels, values, *, title, xlabel, log=False, reference=None, colors=None):
    """Write a horizontal bar chart (one bar per label) to ``path`` (PNG), at page width
    (``_plot.figure``)."""
    import _plot

    height = 0.6 + 0.3 * len(labels)
    with _plot.figure(path, 1, panel_height=height) as (_, (ax,)):
        positions = np.arange(len(labels))[::-1]
        ax.barh(positions, values, color=colors or "tab:blue")
        ax.set_yticks(positions, labels)
        if log:
            ax.set_xscale("log")
            _plot.plain_log_ticks(ax)
        if reference is not None:
            ax.axvline(reference, color="black", linewidth=0.8, linestyle="--", zorder=2)
        for pos, value in zip(positions, values, strict=True):
            ax.annotate(
                f"{value:.2g}", (value, pos), xytext=(3, 0), textcoords="offset points",
                va="center", fontsize=8, zorder=3,
                bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"},
            )
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0)


def write_report(name, rows, columns, *, out_dir, title, notes=(), plot=None, csv_columns=None):
    """Print the markdown table and write ``<name>.csv``, ``<name>.md`` (and ``<name>.png``).

    Parameters
    ----------
    name : str
        File stem, e.g. ``"mechanisms"``.
    rows : list of dict
        One dict per table row, raw values (numbers stay numbers in the CSV).
    columns : dict
        Row key → markdown header, in display order.
    out_dir : Path
        Output directory (see :func:`output_dir`).
    title : str
        Heading of the markdown file.
    notes : sequence of str
        Bullet points printed under the table.
    plot : callable, optional
        ``plot(path)`` writes the PNG; :func:`bar_chart` is the usual body.
    csv_columns : list of str, optional
        Keys written to the CSV (default: every key seen in ``rows``, in order).

    Returns
    -------
    paths : list of Path
    """
    out_dir = Path(out_dir)
    table = markdown_table(rows, columns)
    body = [f"# {title}", "", environment(), "", table]
    if notes:
        body += ["", *[f"- {note}" for note in notes]]
    text = "\n".join(body) + "\n"
    print(text)

    if csv_columns is None:
        csv_columns = list(dict.fromkeys(key for row in rows for key in row))
    csv_path = out_dir / f"{name}.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=csv_columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()}
            )
    md_path = out_dir / f"{name}.md"
    md_path.write_text(text, encoding="utf-8")
    paths = [csv_path, md_path]
    if plot is not None:
        png_path = out_dir / f"{name}.png"
        plot(png_path)
        paths.append(png_path)
    print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
    return paths


def median(times):
    """Median of a list of timings."""
    return statistics.median(times)
