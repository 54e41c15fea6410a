"""Answering speed of Yan's predictor with random-forest teachers (issue 32, "Speed").

:class:`~skdp.prediction.PrivatePredictor` with ``estimator=RandomForestClassifier(
n_estimators=10)`` on 2·10⁵ labelled rows (x ~ U[0, 1]⁴, y = [x₀ + x₁² > 0.8]), ε = 1,
δ = 10⁻⁶, defaults otherwise (oblivious mode, charged calibration: k = 2 113 teachers of
≈ 95 rows each). Measured, in batches of 100 fresh queries:

* **votes**: the exact count of teachers voting +1 on a batch — before: one
  ``teacher.predict(batch)`` per teacher (the generic path, still used for other
  estimators); after: :class:`~skdp.prediction._tree_votes.TreeVotes` (every tree of
  every teacher walked together, Lemma T). The two counts are checked equal;
* **stream**: ``predict`` on consecutive batches with the stacked votes: answers/s
  over all batches, over the batches without a hard query, and the time of the hard
  queries, for both ``teacher_update`` rules on the same fitted teachers:
  ``"refit"`` (each hard query retrains the teachers that disagree with its random
  label: sklearn ``fit`` calls, ~half of k; measured on the first ``--refit-hard``
  hard queries only, they take minutes) and ``"none"`` (teachers stay as fitted).

Wall-clock and CPU seconds are both reported: the machine is shared (load ≫ cores), so
CPU time is the better estimate of an unloaded machine. Run ``PYTHONPATH=. python
benchmarks/predictor_speed.py`` (the fit alone is k forest fits: minutes) or ``--quick``
(2·10⁴ rows, fewer batches).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _report import make_parser, output_dir, rng_for, write_report
from sklearn.ensemble import RandomForestClassifier

from skdp.prediction import PrivatePredictor, QueryBudgetExhaustedError

NAME = "predictor_speed"
BATCH = 100


def _clock():
    return time.perf_counter(), time.process_time()


def _since(start):
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def main() -> None:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--refit-hard", type=int, default=2,
                        help="hard queries measured with teacher_update='refit'")
    args = parser.parse_args()
    n = 20_000 if args.quick else 200_000
    batches = 5 if args.quick else args.batches
    out = output_dir(args)
    rng = rng_for(args.seed, "predictor_speed")
    X = rng.random((n, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.8).astype(int)
    queries = rng.random((batches * BATCH, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seed's PrivacyWarning
        start = _clock()
        clf = PrivatePredictor(estimator=RandomForestClassifier(n_estimators=10, random_state=0),
                               epsilon=1.0, delta=1e-6, n_queries=10_000, classes=[0, 1],
                               teacher_update="none", random_state=args.seed).fit(X, y)
    fit_wall, fit_cpu = _since(start)
    teachers = clf._state.teachers
    k = clf.n_teachers_
    rows = []

    # Votes on the same batches, both ways (the generic path is the code before).
    stacked = teachers._tree_votes()
    per_model = []
    for b in range(min(3, batches)):
        batch = queries[b * BATCH : (b + 1) * BATCH]
        teachers._trees = False  # force the generic path: one predict per teacher
        start = _clock()
        before = teachers.vote(batch)
        per_model.append(_since(start))
        teachers._trees = stacked
        start = _clock()
        after = teachers.vote(batch)
        per_model[-1] += _since(start)
        assert np.array_equal(before, after), "stacked votes differ from the teachers'"
    t = np.median(np.array(per_model), axis=0)
    for label, wall, cpu in (("votes, one predict per teacher (before)", t[0], t[1]),
                             ("votes, stacked trees (after)", t[2], t[3])):
        rows.append({"what": label, "rows": BATCH, "wall_s": wall, "cpu_s": cpu,
                     "answers_per_s_wall": BATCH / wall, "answers_per_s_cpu": BATCH / cpu})

    # The stream: predict batch after batch (stacked votes), hard queries included. The
    # same predictor answers first with refitting teachers (the rule is fixed at fit,
    # so it is set on its teachers) until --refit-hard hard queries, then without: a
    # copy could not answer (the charged calibration runs one instance per fitted
    # predictor, and copies share the cap on hard queries).
    teachers.update = "refit"
    next_batch = 0
    n_hard = {}
    for update, limit in (("refit", args.refit_hard), ("none", None)):
        model = clf
        teachers.update = update
        easy, hard = [], []
        answered = 0
        hard_before = model.n_hard_queries_
        for b in range(next_batch, batches):
            next_batch = b + 1
            batch = queries[b * BATCH : (b + 1) * BATCH]
            before_hard = model.n_hard_queries_
            start = _clock()
            try:
                answered += model.predict(batch).size
                stopped = False
            except QueryBudgetExhaustedError as exc:
                answered += exc.n_answered
                stopped = True
            spent = _since(start)
            (hard if model.n_hard_queries_ > before_hard else easy).append(spent)
            if stopped or (limit is not None and model.n_hard_queries_ - hard_before >= limit):
                break
        n_hard[update] = (model.n_hard_queries_ - hard_before, len(hard), len(easy) + len(hard))
        for label, times, count in ((f"stream ({update}), batches without a hard query", easy,
                                     BATCH * len(easy)),
                                    (f"stream ({update}), batches with a hard query", hard,
                                     BATCH * len(hard)),
                                    (f"stream ({update}), all batches", easy + hard, answered)):
            if not times:
                continue
            wall, cpu = np.sum(times, axis=0)
            rows.append({"what": label, "rows": count, "wall_s": wall, "cpu_s": cpu,
                         "answers_per_s_wall": count / wall, "answers_per_s_cpu": count / cpu})
    columns = {"what": "measured", "rows": "rows answered", "wall_s": "wall s",
               "cpu_s": "CPU s", "answers_per_s_wall": "answers/s (wall)",
               "answers_per_s_cpu": "answers/s (CPU)"}
    notes = [
        f"PrivatePredictor(estimator=RandomForestClassifier(n_estimators=10)) on {n} rows: "
        f"k = {k} teachers, mode {clf.mode_}, calibration {clf.calibration_}, cap "
        f"{clf.max_hard_queries_} hard queries; fit {fit_wall:.0f} s wall, {fit_cpu:.0f} s "
        "CPU (not part of answering).",
        f"Votes: median of {len(per_model)} batches of {BATCH} fresh rows; the counts of both "
        "paths are asserted equal.",
        "Stream, teacher_update='none' (then, on the next batches): {} hard queries in "
        "{} of {} batches of {}.".format(*n_hard["none"], BATCH),
        "Stream, teacher_update='refit' (the same predictor, first): stopped "
        "after {} hard queries ({} of {} batches). Each retrains the teachers that "
        "disagree with its random label (RandomForestClassifier.fit each); a refit "
        "teacher is swapped into the stacked votes in place.".format(*n_hard["refit"]),
        "Target (issue 32): ≥ 100 answers/s in batches of 100.",
    ]
    write_report(NAME, rows, columns, out_dir=out,
                 title="Yan's predictor with random-forest teachers: answering speed",
                 notes=notes)


if __name__ == "__main__":
    main()
