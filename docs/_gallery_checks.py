"""The gallery's image scraper: sphinx-gallery's matplotlib scraper, after checking
each figure for overlaps a reader would see (``layout_problems`` of
``benchmarks/_plot.py``: tick labels of one axis that overlap, a legend over data).

A figure with one raises, so the example errors and the docs build fails
(``abort_on_example_error``). Named in docs/conf.py as ``"_gallery_checks"``:
sphinx-gallery imports this module and calls ``_get_sg_image_scraper()``.
"""

import importlib.util
from pathlib import Path

_PLOT = Path(__file__).resolve().parents[1] / "benchmarks" / "_plot.py"


def _layout_problems():
    spec = importlib.util.spec_from_file_location("skdp_bench_plot", _PLOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.layout_problems


def checked_matplotlib_scraper(block, block_vars, gallery_conf):
    import matplotlib.pyplot as plt
    from sphinx_gallery.scrapers import matplotlib_scraper

    layout_problems = _layout_problems()
    problems = [problem for number in plt.get_fignums()
                for problem in layout_problems(plt.figure(number))]
    if problems:
        raise RuntimeError(f"{block_vars['src_file']}: unreadable figure: {problems}")
    return matplotlib_scraper(block, block_vars, gallery_conf)


def _get_sg_image_scraper():
    return checked_matplotlib_scraper
