"""``skdp label MODEL.pkl PUBLIC.csv [--out LABELS.csv]``: private labels for a student.

The command-line form of :func:`skdp.prediction.label_public`: the pickled predictor is
loaded as ``skdp serve`` loads it (made durable, so its running mechanism and answer
memory live in its ledger's store: labelling the same rows twice is free, a crash never
pays twice, and a server answering from the same model continues the same mechanism),
the CSV is read and checked against the fitted columns, and the labels are written one
per line under a ``label`` header, in the rows' order.

Every check on the file happens before the first query is answered, and no message
quotes a cell: a bad cell is named by its line and column.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import warnings
from typing import Any, TextIO

import numpy as np

__all__ = ["PublicFileError", "label_file", "read_public_csv"]


class PublicFileError(ValueError):
    """The public CSV cannot be labelled (missing, malformed, wrong columns)."""


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def read_public_csv(path: str, n_features: int,
                    feature_names: Any = None) -> np.ndarray:
    """The rows of a public CSV as a float array of shape (n_rows, n_features).

    A header row is optional when the model was fitted on an array (it is recognised
    by a cell that is not a number) and then ignored; the file must then have exactly
    ``n_features`` columns. When the model was fitted on a DataFrame
    (``feature_names``), the header is required and must name every fitted column
    (any order; no other column). Every cell must be a finite number.
    """
    if not os.path.isfile(path):
        raise PublicFileError(f"{path}: no such file.")
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            lines = [(i, row) for i, row in enumerate(csv.reader(handle), start=1)
                     if any(cell.strip() for cell in row)]  # blank lines are skipped
    except (UnicodeDecodeError, csv.Error) as exc:
        # csv.Error's message quotes no cell; a decoding error names a byte position.
        raise PublicFileError(f"{path}: not a readable CSV text file "
                              f"({type(exc).__name__}).") from None
    if not lines:
        raise PublicFileError(f"{path} holds no rows.")
    header = [cell.strip() for cell in lines[0][1]]
    has_header = not all(_is_number(cell) for cell in header)
    if feature_names is not None:
        names = [str(name) for name in feature_names]
        if not has_header:
            raise PublicFileError(
                f"{path} needs a header row naming the model's columns: {names}.")
        # Column names are the public schema, not data: they may be named.
        unknown = [c for c in header if c not in names]
        missing = [c for c in names if c not in header]
        repeated = sorted({c for c in header if header.count(c) > 1})
        if unknown or missing or repeated:
            parts = [f"missing {missing}" if missing else "",
                     f"unknown {unknown}" if unknown else "",
                     f"repeated {repeated}" if repeated else ""]
            raise PublicFileError(
                f"{path}: the header must name exactly the model's columns {names} "
                f"({', '.join(p for p in parts if p)}).")
        take = [header.index(name) for name in names]
        width = len(header)
    else:
        width = len(header)
        if width != n_features:
            raise PublicFileError(
                f"{path} has {width} columns; the model was fitted on {n_features}.")
        take = list(range(width))
        names = header if has_header else [str(j + 1) for j in range(width)]
    body = lines[1:] if has_header else lines
    if not body:
        raise PublicFileError(f"{path} holds a header but no rows.")
    X = np.empty((len(body), len(take)))
    for r, (line, row) in enumerate(body):
        if len(row) != width:
            raise PublicFileError(
                f"{path} line {line} has {len(row)} columns; the file has {width}.")
        for j, c in enumerate(take):
            try:
                value = float(row[c])
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                where = names[j] if feature_names is not None else names[c]
                raise PublicFileError(
                    f"{path} line {line}, column {c + 1} ({where!s}): not a finite number "
                    "(empty, NaN, infinite or text). Nothing was labelled or spent.")
            X[r, j] = value
    return X


def _write_labels(labels: np.ndarray, out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["label"])
    writer.writerows([label] for label in np.asarray(labels).tolist())


def label_file(model_path: str, csv_path: str, out_path: str | None = None) -> int:
    """Label ``csv_path`` with the pickled predictor; write the labels to ``out_path``
    (stdout if None). Returns the number of rows labelled.

    Raises :class:`PublicFileError` (bad file, before anything is spent),
    ``TypeError``/``OSError`` (the model file), and
    :class:`~skdp.exceptions.BudgetExhaustedError` after writing the labels released
    before the budget or a cap ran out (they are paid for; none if it refused first).
    """
    from ..exceptions import BudgetExhaustedError
    from ..prediction import label_public
    from ._app import unpickle_predictor

    if not os.path.isfile(model_path):
        raise OSError(f"{model_path}: no such file.")
    model = unpickle_predictor(model_path)
    X = read_public_csv(csv_path, int(model.n_features_in_),
                        getattr(model, "feature_names_in_", None))
    # Only a good file reaches the store: the state record is made (or loaded) here.
    model.make_durable()
    try:
        with warnings.catch_warnings():
            # Columns were matched by name above; the array has none to check again.
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            labels = label_public(model, X)
    except BudgetExhaustedError as exc:
        # A QueryBudgetExhaustedError carries the labels released before it (paid);
        # any other refusal came before the first answer.
        _emit(np.asarray(getattr(exc, "answers", [])), out_path)
        raise
    _emit(labels, out_path)
    return int(labels.shape[0])


def _emit(labels: np.ndarray, out_path: str | None) -> None:
    if out_path is None:
        _write_labels(labels, sys.stdout)
        return
    with open(out_path, "w", newline="") as handle:
        _write_labels(labels, handle)
