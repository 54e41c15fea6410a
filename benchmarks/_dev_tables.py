"""Development tables for ``benchmarks/rule_lists_real.py`` (issue 27), with PUBLIC bounds.

Every table comes with a *public schema*: per numeric column a (low, high) range taken
from the column's documented meaning (a codebook, a printed data description, a unit's
physical range, the generator's documented domain), never from the rows; per
categorical column the documented list of categories; and which columns the
documentation says may be missing. Nothing here looks at the data to build a bound,
a cut or a category list.

Tables (none is one of the ten hidden tables of the issue):

* ``breast_cancer`` (sklearn, 569 × 30, 37 % positive): ranges printed in its DESCR
  (:func:`skdp.datasets.breast_cancer_public_bounds`).
* ``fair`` (statsmodels, 6,366 × 8, label ``affairs > 0``, 32 % positive): the survey's
  answer codes printed in ``statsmodels.datasets.fair.NOTE``. Skipped with a message when
  statsmodels is not importable (``$SKDP_BENCH_SITE``, default ``/tmp/benchdeps``).
* ``imbalanced-skewed`` (simulated, 8,000 × 6, ~5.5 % positive): a credit table whose
  label is mostly "balance above 2,000" where balance is log-normal on a documented
  0–20,000 range (so one midpoint cut at 10,000 hides the signal).
* ``churn-like`` (simulated, 7,000 rows): one dominant binary feature (phone service,
  90 % yes, nearly uninformative), three categorical columns with public category lists,
  tenure / charges with missing values (``total_charges`` is missing for new customers,
  ``monthly_charges`` at random); ~27 % churn.
* ``planted-5-rules`` (simulated, 6,000 × 40 bits, 2 % label noise): a planted length-5
  decision list (:func:`skdp.datasets.planted_decision_list`, density 0.15).
* ``digits`` (sklearn, 1,797 × 64, 10 classes): pixel intensities, documented range 0–16.

:func:`numeric_matrix` turns a table into one float matrix (categoricals one-hot encoded
with ``OneHotEncoder(categories=<public lists>)``; NaN kept) plus its per-column bounds
and the mask of columns that may hold NaN. It imports no private learner; from skdp it
takes only the documented breast-cancer ranges and the planted-list generator.
"""

import os
import sys
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from _fair import FAIR_CODES, load_fair
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.preprocessing import OneHotEncoder

sys.path.append(os.environ.get("SKDP_BENCH_SITE", "/tmp/benchdeps"))

__all__ = ["Table", "dev_tables", "numeric_matrix"]


@dataclass
class Table:
    """A development table and its public schema (nothing in the schema is computed)."""

    name: str
    frame: pd.DataFrame  # feature columns only
    y: np.ndarray
    numeric: dict  # column -> (low, high), documented range
    categorical: dict = field(default_factory=dict)  # column -> public category list
    may_be_missing: tuple = ()  # documented: these columns can hold NaN
    source: str = ""  # where the bounds come from, for the report's notes
    classes: tuple = ()

    def __post_init__(self):
        self.classes = tuple(np.unique(self.y).tolist()) if not self.classes else self.classes


# ----------------------------------------------------------------- real (bundled) tables
def _breast_cancer():
    from skdp.datasets import breast_cancer_public_bounds  # the documented DESCR ranges

    data = load_breast_cancer()
    names = [str(n) for n in data.feature_names]
    bounds = breast_cancer_public_bounds(names)
    return Table("breast_cancer", pd.DataFrame(data.data, columns=names), data.target,
                 {n: tuple(b) for n, b in zip(names, bounds, strict=True)},
                 source="ranges printed in load_breast_cancer().DESCR")


def _fair():
    loaded = load_fair()
    if loaded is None:
        return None
    frame, y = loaded
    bounds = {name: (codes[0], codes[-1]) for name, codes in FAIR_CODES.items()}
    return Table("fair", frame.astype(float), y, bounds,
                 source="answer codes in statsmodels.datasets.fair.NOTE")


def _digits(quick):
    data = load_digits()
    X, y = data.data, data.target
    if quick:
        X, y = X[:900], y[:900]
    names = [f"pixel_{i}" for i in range(X.shape[1])]
    return Table("digits", pd.DataFrame(X, columns=names), y, dict.fromkeys(names, (0.0, 16.0)),
                 source="pixel intensities 0..16 (load_digits().DESCR)")


# ----------------------------------------------------------------- simulated tables
def _imbalanced(rng):
    """Label ≈ "balance > 2,000" on a skewed balance: one midpoint cut cannot see it."""
    n = 8000
    balance = np.minimum(rng.lognormal(6.2, 1.0, n), 20000.0)
    income = np.minimum(rng.lognormal(10.5, 0.6, n), 500000.0)
    age = rng.integers(18, 91, n).astype(float)
    n_cards = rng.integers(0, 11, n).astype(float)
    student = (rng.random(n) < 0.2).astype(float)
    utilisation = rng.beta(2, 5, n)
    risk = np.where(balance > 2000, 0.6, 0.01) * np.where(student == 1, 1.2, 1.0)
    y = (rng.random(n) < np.minimum(risk, 1.0)).astype(int)
    frame = pd.DataFrame({"balance": balance, "income": income, "age": age,
                          "n_cards": n_cards, "student": student, "utilisation": utilisation})
    bounds = {"balance": (0, 20000), "income": (0, 500000), "age": (18, 90),
              "n_cards": (0, 10), "student": (0, 1), "utilisation": (0, 1)}
    return Table("imbalanced-skewed", frame, y, bounds,
                 source="simulated; documented domains (balance capped at a 20,000 limit)")


CHURN_CATEGORIES = {
    "contract": ["month-to-month", "one_year", "two_year"],
    "payment_method": ["electronic_check", "mailed_check", "bank_transfer", "credit_card"],
    "internet": ["dsl", "fiber", "none"],
}


def _churn(rng):
    """One dominant binary feature, categoricals with public lists, NaN in two columns."""
    n = 7000
    phone = (rng.random(n) < 0.9).astype(float)
    contract = rng.choice(CHURN_CATEGORIES["contract"], n, p=[0.55, 0.21, 0.24])
    payment = rng.choice(CHURN_CATEGORIES["payment_method"], n, p=[0.34, 0.23, 0.22, 0.21])
    internet = rng.choice(CHURN_CATEGORIES["internet"], n, p=[0.34, 0.44, 0.22])
    senior = (rng.random(n) < 0.16).astype(float)
    tenure = np.where(rng.random(n) < 0.03, 0, rng.integers(1, 73, n)).astype(float)
    monthly = np.clip(20 + 25 * (internet == "dsl") + 55 * (internet == "fiber")
                      + 10 * phone + rng.normal(0, 8, n), 18, 120)
    total = tenure * monthly
    logit = (-1.6 + 1.4 * (contract == "month-to-month") - 1.2 * (contract == "two_year")
             + 0.9 * (internet == "fiber") + 0.6 * (payment == "electronic_check")
             - 0.035 * tenure + 0.4 * senior - 0.1 * phone + 1.0 * (tenure == 0))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    total[tenure == 0] = np.nan  # billing has not started: missing, as in real churn data
    monthly[rng.random(n) < 0.05] = np.nan
    frame = pd.DataFrame({"phone_service": phone, "senior": senior, "tenure": tenure,
                          "monthly_charges": monthly, "total_charges": total,
                          "contract": contract, "payment_method": payment,
                          "internet": internet})
    bounds = {"phone_service": (0, 1), "senior": (0, 1), "tenure": (0, 72),
              "monthly_charges": (0, 150), "total_charges": (0, 72 * 150)}
    return Table("churn-like", frame, y, bounds, dict(CHURN_CATEGORIES),
                 may_be_missing=("monthly_charges", "total_charges"),
                 source="simulated; tariff limits (tenure ≤ 72 months, charges ≤ 150/month),"
                 " public category lists")


def _planted(rng):
    from skdp.datasets import planted_decision_list

    X, y, _ = planted_decision_list(rng, 6000, 40, length=5, noise=0.02)
    names = [f"bit_{i}" for i in range(40)]
    return Table("planted-5-rules", pd.DataFrame(X.astype(float), columns=names), y,
                 dict.fromkeys(names, (0.0, 1.0)), source="bits (0/1)")


def dev_tables(quick=False, seed=0, only=None):
    """The development tables, in report order (``only``: an iterable of names to keep)."""
    makers = [
        ("breast_cancer", _breast_cancer),
        ("fair", _fair),
        ("imbalanced-skewed", lambda: _imbalanced(np.random.default_rng([seed, 1]))),
        ("churn-like", lambda: _churn(np.random.default_rng([seed, 2]))),
        ("planted-5-rules", lambda: _planted(np.random.default_rng([seed, 3]))),
        ("digits", lambda: _digits(quick)),
    ]
    out = []
    for name, make in makers:
        if only and name not in only:
            continue
        table = make()
        if table is not None:
            out.append(table)
    return out


# ----------------------------------------------------------------- one numeric matrix
def categorical_encoder(table):
    """``OneHotEncoder`` with the PUBLIC category lists (``categories="auto"`` would
    release the set of categories present in the private rows)."""
    cols = list(table.categorical)
    return OneHotEncoder(categories=[table.categorical[c] for c in cols],
                         handle_unknown="ignore", sparse_output=False, dtype=float)


def numeric_matrix(table):
    """(X, lower, upper, missing_mask, names): numeric columns then one-hot categoricals.

    NaN stays NaN; one-hot columns have bounds (0, 1). With explicit ``categories`` the
    fitted encoder is the same whatever rows it sees, so it is fitted on the table
    (as a user's pipeline would) without releasing anything.
    """
    num = list(table.numeric)
    parts = [table.frame[num].to_numpy(dtype=float)]
    names = list(num)
    lower = [table.numeric[c][0] for c in num]
    upper = [table.numeric[c][1] for c in num]
    if table.categorical:
        cols = list(table.categorical)
        enc = categorical_encoder(table).fit(table.frame[cols])
        parts.append(enc.transform(table.frame[cols]))
        onehot = [f"{c}={v}" for c in cols for v in table.categorical[c]]
        names += onehot
        lower += [0.0] * len(onehot)
        upper += [1.0] * len(onehot)
    missing = np.array([c in table.may_be_missing for c in names])
    return (np.hstack(parts), np.asarray(lower, float), np.asarray(upper, float), missing,
            names)
