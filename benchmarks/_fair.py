"""statsmodels' ``fair`` survey and its printed codebook, shared by the benchmarks.

The codes are the survey's answer grid from ``statsmodels.datasets.fair.NOTE``: public,
so bounds and cut points taken from them cost no privacy.
"""

from __future__ import annotations

import sys

FAIR_CODES = {  # statsmodels.datasets.fair.NOTE (and the survey's answer grid)
    "rate_marriage": [1, 2, 3, 4, 5], "age": [17.5, 22, 27, 32, 37, 42],
    "yrs_married": [0.5, 2.5, 6, 9, 13, 16.5, 23], "children": [0, 1, 2, 3, 4, 5.5],
    "religious": [1, 2, 3, 4], "educ": [9, 12, 14, 16, 17, 20],
    "occupation": [1, 2, 3, 4, 5, 6], "occupation_husb": [1, 2, 3, 4, 5, 6],
}


def load_fair():
    """``(frame of the coded columns, label "had an affair")``, or None without statsmodels."""
    try:
        import statsmodels.api as sm
    except ImportError:
        print("statsmodels not importable (pip install --target /tmp/benchdeps statsmodels):"
              " skipping fair", file=sys.stderr)
        return None
    frame = sm.datasets.fair.load_pandas().data
    return frame[list(FAIR_CODES)], (frame["affairs"].to_numpy() > 0).astype(int)
