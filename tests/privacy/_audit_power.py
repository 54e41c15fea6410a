"""The audit-power table (issue 26, item 9): for each audited mechanism and estimator,
its claim, the audit's value on the honest implementation and on a twin at 2× the
claimed ε (half the noise, doubled η, every step calibrated for 2ε), or the exact
computation used instead of sampling.

Each row calls the helpers of the audit that tests it (nothing is re-implemented
here), so the numbers ``benchmarks/audit_power.py`` prints are those the tests
assert on. Sampled values are Clopper–Pearson lower bounds (α = 10⁻⁶, the audits'
seeds); exact values are the pair's exact ε at the claimed δ
(:func:`skdp.audit.exact_epsilon`). Rows whose audit has no 2× twin yet say so in
``twin`` and have ``twin_value`` ``None``.
"""

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    mechanism: str
    epsilon: float  # the claimed ε
    delta: float  # the claimed δ
    method: str  # "exact" or "sampled"
    design: str
    honest: Callable[[], float] | None
    twin: str  # what the 2× twin is
    twin_value: Callable[[], float] | None
    test: str  # where the tests live


def _lb(result):
    return result.epsilon_lower_bound


def _exact_thresholds():
    import test_exact_thresholds as t

    b = t._charged_b()
    charged = dict(shift=1.0, gap=3.0 * t.C_B, k=t.C_K, n=t.C_N, delta=t.C_DELTA)

    def charged_value(factor):
        return t.stationary_epsilon(-0.1 * b, charged["shift"], b * factor, charged["gap"],
                                    charged["k"], charged["n"], charged["delta"])

    def published(calibration, eps, n, shift, factor):
        qb, tb, gap, k = t.calibrated(calibration, eps, 1e-6)
        return t.stationary_epsilon(0.0, shift, qb * factor, gap, k, n, 1e-6, tb * factor)

    file = "test_exact_thresholds.py"
    return [
        Row("BetweenThresholds, charged (k = 30, gap 3b)", 4.0, 0.05, "exact",
            "stationary: 100 queries at −0.1b vs −0.1b + 1", lambda: charged_value(1.0),
            "half the noise", lambda: charged_value(0.5), file),
        Row("BetweenThresholds, Stemmer Thm 4.3 (k = 59)", 2.0, 1e-6, "exact",
            "stationary: 177 queries at t_l vs t_l − 1",
            lambda: published("stemmer", 2.0, 177, -1.0, 1.0), "half the noise",
            lambda: published("stemmer", 2.0, 177, -1.0, 0.5), file),
        Row("BetweenThresholds, Stemmer Thm 4.3 (k = 59)", 2.0, 1e-6, "exact",
            "as above", None, "quarter of the noise (4×)",
            lambda: published("stemmer", 2.0, 177, -1.0, 0.25), file),
        Row("BetweenThresholds, BSU (Yan Lemma 1)", 0.9, 1e-6, "exact",
            "stationary: 40 queries at t_l vs t_l + 1, μ integrated",
            lambda: published("bsu", 0.9, 40, 1.0, 1.0), "half the noise (μ and ν)",
            lambda: published("bsu", 0.9, 40, 1.0, 0.5), file),
        Row("BetweenThresholds, BSU (Yan Lemma 1)", 0.9, 1e-6, "exact", "as above", None,
            "quarter of the noise (4×)", lambda: published("bsu", 0.9, 40, 1.0, 0.25), file),
        Row("AboveThreshold (c = 1)", 1.0, 0.0, "exact", "50 pins, then one query",
            lambda: t.svt_pinning_epsilon(1.0), "half the noise",
            lambda: t.svt_pinning_epsilon(0.5), file),
        Row("Stopper, Stemmer Thm 4.2", 1.0, 1e-3, "exact",
            "its audit's design (count t − 3 vs t − 2)",
            lambda: t.stopper_epsilon("stemmer", 1.0), "half the noise",
            lambda: t.stopper_epsilon("stemmer", 0.5), file),
        Row("Stopper, svt calibration", 1.0, 0.0, "exact", "as above",
            lambda: t.stopper_epsilon("svt", 1.0), "half the noise",
            lambda: t.stopper_epsilon("svt", 0.5), file),
        Row("Stopper, svt calibration", 1.0, 0.0, "exact", "as above", None,
            "quarter of the noise (4×)", lambda: t.stopper_epsilon("svt", 0.25), file),
    ]


def _exact_predictor():
    import test_exact_prediction as t

    rows = []
    for calibration, name in (("charged", "charged (cap 3)"), ("stemmer", "Stemmer (cap 3)"),
                              ("bsu", "BSU (cap 1)")):
        rows += [
            Row(f"PrivatePredictor's BetweenThresholds, {name}", t.EPSILON, t.DELTA,
                "exact", "its own instance; stationary votes j/k vs (j ± 1)/k",
                lambda c=calibration: t.predictor_epsilon(c, 1.0), "half the noise",
                lambda c=calibration: t.predictor_epsilon(c, 0.5), "test_exact_prediction.py"),
            Row(f"PrivatePredictor's BetweenThresholds, {name}", t.EPSILON, t.DELTA,
                "exact", "as above", None, "quarter of the noise (4×)",
                lambda c=calibration: t.predictor_epsilon(c, 0.25),
                "test_exact_prediction.py"),
        ]
    return rows


def _exact_decision_lists():
    import test_exact_decision_list as t
    from _decision_list_audit_runs import TwiceEpsilon

    from skdp.decision_list import DPDecisionListClassifier

    names = {"net-cover-sharp": "DP decision list, net cover (sharp pair, λ = 9)",
             "net-cover-negations": "DP decision list, net cover (negations pair)",
             "net-cover-tight": "DP decision list, net cover, tight accounting",
             "greedy-cover-sharp": "DP decision list, DP-GreedyCover (sharp pair)"}
    rows = []
    for key, name in names.items():
        _, _, (eps, delta) = t.CASES[key]
        rows.append(Row(
            name, eps, delta, "exact", "whole release (rule + noisy counts), 1 rule",
            lambda key=key: t.exact_case(key, DPDecisionListClassifier)[0],
            "every step calibrated for 2ε",
            lambda key=key: t.exact_case(key, TwiceEpsilon)[0], "test_exact_decision_list.py"))
    return rows


def _exact_challenge_bt():
    import test_exact_challenge_bt as t

    file = "test_exact_challenge_bt.py"
    return [
        Row("ChallengeBT, svt Stopper + charged BT (k = 30, T = 100, ε_s = 40)", t.EPS,
            t.DELTA, "exact", "stationary: BT queries at x vs x ± 1, Stopper included",
            lambda: t.challenge_epsilon(t.ChallengeBT, *t.HONEST_DESIGN),
            "half the inner BT's noise",
            lambda: t.challenge_epsilon(t.ChallengeHalfNoise, *t.TWIN_DESIGN), file),
        Row("ChallengeBT, svt Stopper + charged BT (default ε_s = ε)", t.EPS, t.DELTA,
            "exact", "as above", lambda: t.challenge_epsilon(t.ChallengeBT, *t.HONEST_DESIGN,
                                                             stopper_epsilon=t.EPS),
            "half the inner BT's noise",
            lambda: t.challenge_epsilon(t.ChallengeHalfNoise, *t.TWIN_DESIGN,
                                        stopper_epsilon=t.EPS), file),
        Row("ChallengeBT, Stemmer Stopper + Thm 4.3 BT (k = 15, T = 60)", t.S_EPS,
            t.S_DELTA, "exact", "as above, x = t_l + b/2 vs + 1",
            lambda: t.stemmer_challenge_epsilon(1.0), "half the inner BT's noise",
            lambda: t.stemmer_challenge_epsilon(0.5), file),
        Row("ChallengeBT, Stemmer Stopper + Thm 4.3 BT (k = 15, T = 60)", t.S_EPS,
            t.S_DELTA, "exact", "as above", None, "quarter of the noise (4×)",
            lambda: t.stemmer_challenge_epsilon(0.25), file),
    ]


def _exact_online():
    import test_batch_sanitized_exact_audit as batch
    import test_consistent_release_audit as lwy
    import test_dp_soa_histogram_exact as soa_hist
    import test_experts_proba_exact_audit as experts
    import test_hist_sparse_audit as hs
    import test_winnow_practical_exact as win_practical
    import test_winnow_scheduled_audit as win

    from skdp.linear import DPWinnowClassifier

    return [
        Row("HistSparse (Golowich & Livni Alg. 2, c = 1)", hs.P_PARAMS["epsilon"],
            hs.P_PARAMS["delta"], "exact", "50 pins, then one round; the switch round",
            lambda: hs.switch_round_epsilon(hs.P_PARAMS), "calibrated for 2ε (split doubled)",
            lambda: hs.switch_round_epsilon(hs._twice_epsilon_params()),
            "test_hist_sparse_audit.py"),
        Row("DP-Winnow, scheduled (K = 4, m = 1)", win.EPSILON, win.DELTA, "exact",
            "differing row folded with public pushes; 2^K released sequences",
            lambda: win.full_loss_epsilon(DPWinnowClassifier), "doubled η",
            lambda: win.full_loss_epsilon(win.DoubledEta), "test_winnow_scheduled_audit.py"),
        Row("DP-Winnow, practical (sparse vector, K = 1, m = 1)", win_practical.EPSILON,
            win_practical.DELTA, "exact", "its audit's design: equal counts, one draw",
            lambda: win_practical.design_epsilon(win_practical.DPWinnowClassifier),
            "doubled η", lambda: win_practical.design_epsilon(win_practical.DoubledEta),
            "test_winnow_practical_exact.py"),
        Row("Li–Wang–Ye, consistent release (c = 1)", lwy.EPSILON, lwy.DELTA, "exact",
            "row 0 moves the counts and the draw; (switch round, released point)",
            lambda: lwy.full_loss_epsilon(lwy.AdaptivePrivateOnlineClassifier),
            "half the noise (AboveThreshold and release)",
            lambda: lwy.full_loss_epsilon(lwy.HalfNoise), "test_consistent_release_audit.py"),
        Row("PrivateExpertsClassifier predict_proba (T = 8, L = 4)", experts.EPSILON, 0.0,
            "exact", "predict_proba after steps 1, 2, 4, 8 (the L nodes holding row 0)",
            lambda: experts.exact_epsilon_of(experts.PrivateExpertsClassifier),
            "half the node noise (2ε per cell)",
            lambda: experts.exact_epsilon_of(experts.HalfNoiseExperts),
            "test_experts_proba_exact_audit.py"),
        Row("Li–Wang–Ye agnostic: BatchSanitized, histogram sanitizer (B = 40)",
            batch.EPSILON, 0.0, "exact", "one batch, row 0's label flips; predict_proba",
            lambda: batch.exact_epsilon_of(batch._Recording), "half the sanitizer's noise",
            lambda: batch.exact_epsilon_of(batch.HalfNoiseSanitizer),
            "test_batch_sanitized_exact_audit.py"),
        Row("DP-SOA histogram step (design H; ε_hist = 0.67 of ε = 2)", soa_hist.EPSILON,
            soa_hist.DELTA, "exact", "B's count τ vs τ − 1; event: B released",
            lambda: soa_hist.released_b_epsilon(1.0),
            "half the histogram noise (the step alone ≤ 2·ε_hist = 1.34 < 2)",
            lambda: soa_hist.released_b_epsilon(0.5), "test_dp_soa_histogram_exact.py"),
    ]


def _exact_streams():
    # their audits import tests/_stream_recording.py: put tests/ on the path as pytest
    # does (benchmarks/audit_power.py only adds tests/privacy)
    tests_dir = str(Path(__file__).resolve().parent.parent)
    if tests_dir not in sys.path:
        sys.path.append(tests_dir)
    import test_continual_release_audit as cr
    import test_continual_release_guard_audit as guard

    from skdp.streams import ContinualReleaseClassifier

    share = 0.5  # the guard's share g of ε in the rows below (the tests also run g = 0.1)
    cr_file, guard_file = "test_continual_release_audit.py", "test_continual_release_guard_audit.py"
    return [
        Row("ContinualReleaseClassifier: rows routed to releases (doubling)", cr.EPSILON,
            0.0, "exact", "7 calls of 4 rows, one added positive in call 2; 3 released counts",
            lambda: cr._exact_epsilon(ContinualReleaseClassifier)[0],
            "each release refits on every row so far (a row in 2 releases)",
            lambda: cr._exact_epsilon(cr.Cumulative)[0], cr_file),
        Row("ContinualReleaseClassifier guard: checks (combine = latest, K = 1)",
            share * guard.EPSILON, 0.0, "exact",
            "one added mispredicted positive in call 2; 6 checks' K + C noisy counts",
            lambda: guard._audit(guard.RecordingGuard, "latest", share)[0],
            "check noise for K, not K + 1 (class counts forgotten)",
            lambda: guard._audit(guard.ForgetsClassCounts, "latest", share)[0], guard_file),
        Row("ContinualReleaseClassifier guard: whole stream (combine = recent, K = 2)",
            guard.EPSILON, 0.0, "exact", "as above, checks and 3 releases",
            lambda: guard._audit(guard.RecordingGuard, "recent", share)[1],
            "check noise for K, not K + 1 (1.5× on the checks)",
            lambda: guard._audit(guard.ForgetsClassCounts, "recent", share)[1], guard_file),
        Row("DP decision list partial_fit guard: checks (K = 1)", share * guard.EPSILON,
            0.0, "exact", "3 calls of 40 rows, one added mispredicted row in call 2",
            lambda: guard._list_audit(guard.RecordingGuard, share)[0],
            "check noise for K, not K + 1 (class counts forgotten)",
            lambda: guard._list_audit(guard.ForgetsClassCounts, share)[0], guard_file),
        Row("DP decision list partial_fit guard: check + release of a checked row",
            guard.EPSILON, 0.0, "exact", "as above: the check's exact ε + the release's ε",
            lambda: sum(guard._list_audit(guard.RecordingGuard, share)),
            "checked rows released at the full ε (the check taken as free)",
            lambda: sum(guard._list_audit(guard.RecordingGuard, share,
                                          guard.ReleasesAtFullEpsilon)), guard_file),
    ]


def _sampled_mechanisms():
    import test_binary_tree_audit as tree
    import test_histogram_audit as hist
    import test_laplace_exponential_audit as lap
    import test_sparse_vector_audit as svt

    return [
        Row("Laplace mechanism", 1.0, 0.0, "sampled", "0 vs 1, 4·10⁵ runs",
            lambda: _lb(lap.laplace_audit(1.0)), "half the scale",
            lambda: _lb(lap.laplace_audit(2.0)), "test_laplace_exponential_audit.py"),
        Row("geometric mechanism", 1.0, 0.0, "sampled", "10 vs 11, 4·10⁵ runs",
            lambda: _lb(lap.geometric_audit(1.0)), "half the scale",
            lambda: _lb(lap.geometric_audit(2.0)), "test_laplace_exponential_audit.py"),
        Row("exponential mechanism (Gumbel)", 1.0, 0.0, "sampled",
            "one score +1, 49 scores −1, 6·10⁴ runs",
            lambda: _lb(lap.selection_audit(lap._em_gumbel, False)),
            "half the noise (treated as monotone)",
            lambda: _lb(lap.selection_audit(lap._em_gumbel, True)),
            "test_laplace_exponential_audit.py"),
        Row("AboveThreshold (c = 1)", 1.0, 0.0, "sampled", "4 pins, 2·10⁵ runs",
            lambda: _lb(svt.pinning_audit(svt.AboveThreshold)), "half the noise",
            lambda: _lb(svt.pinning_audit(svt.HalfNoise)), "test_sparse_vector_audit.py"),
        Row("BinaryTreeCounter (T = 16)", 1.0, 0.0, "sampled", "step 1, 10⁵ runs",
            lambda: _lb(tree._audit(tree.BinaryTreeCounter, 1, 100_000)), "half the noise",
            lambda: _lb(tree._audit(tree.HalfNoise, 1, 100_000)), "test_binary_tree_audit.py"),
        Row("StableHistogram (pure-ε part)", hist.EPS, hist.DELTA, "sampled",
            "two counts move, 2·10⁵ runs",
            lambda: _lb(hist._audit(hist.StableHistogram, hist.D_SHIFT, hist.D_SHIFT_NB,
                                    [hist.X, hist.Y], [hist._shift_event], 200_000)),
            "half the noise",
            lambda: _lb(hist._audit(hist.HalfNoise, hist.D_SHIFT, hist.D_SHIFT_NB,
                                    [hist.X, hist.Y], [hist._shift_event], 200_000)),
            "test_histogram_audit.py"),
    ]


def _sampled_estimators():
    import test_charged_between_thresholds_audit as charged
    import test_decision_list_proba_audit as proba
    import test_dp_soa_competitor_audit as soa
    import test_perp_twin_power as perp
    import test_subsample_aggregate_audit as sa

    from skdp.audit import audit_mechanism

    def proba_audit(cls):
        clf = proba._clf() if cls is None else proba._clf(cls)
        return _lb(audit_mechanism(proba._sampler(clf), proba.D0, proba.D1, n_samples=6_000,
                                   events=proba.EVENTS))

    def soa_audit(cls):
        return _lb(audit_mechanism(
            soa._first_fire_sampler(cls, soa.H, soa.THRESHOLD), (soa.EVEN, soa.LEAD),
            (soa.LEAD, soa.EVEN), n_samples=8000, events=[lambda out: out == soa.ROUNDS],
            alpha=soa.ALPHA, delta=1e-6, random_state=1))

    def charged_audit(cls, factor):
        return _lb(charged._bt_audit(cls, factor))

    perp_claim = perp.claim()
    return [
        Row("BetweenThresholds, charged (k = 30, gap 3b)", charged.EPS, charged.DELTA,
            "sampled", "A/B design, LLR statistic, 20,000 runs",
            lambda: charged_audit(charged.BetweenThresholds, 1.0),
            "half the noise (sampling cannot reach it: exact row above)",
            lambda: charged_audit(charged.HalfNoise, 0.5),
            "test_charged_between_thresholds_audit.py"),
        Row("BetweenThresholds, charged (k = 30, gap 3b)", charged.EPS, charged.DELTA,
            "sampled", "as above", None, "a third of the noise (3×)",
            lambda: charged_audit(charged.ThirdNoise, 1 / 3),
            "test_charged_between_thresholds_audit.py"),
        Row("subsample-and-aggregate scores", sa.EPSILON, sa.DELTA, "sampled",
            "one teacher's vote flips, 2 released counts, 1000 / 1200 fits",
            lambda: _lb(sa._audit(sa.SubsampleAggregatePredictor, 1000, 300, 1)),
            "half the count noise",
            lambda: _lb(sa._audit(sa.HalfNoiseAggregate, 1200, 400, 4)),
            "test_subsample_aggregate_audit.py"),
        Row("DP decision list: released (rule × class) counts", proba.EPS_H, 0.0, "sampled",
            "one added row in the default cell, 6000 draws of its noise", lambda: proba_audit(None),
            "half the count noise", lambda: proba_audit(proba._HalfScale),
            "test_decision_list_proba_audit.py"),
        Row("DP-SOA: competitor sparse vector", soa.EPS_SVT, 1e-6, "sampled",
            "h released, one position moved, 8000 runs",
            lambda: soa_audit(soa.CompetitorHistSparse), "sensitivity 1/k for a 2/k query",
            lambda: soa_audit(soa._HalfSensitivity), "test_dp_soa_competitor_audit.py"),
        Row("RectanglesPERP, charged preset (initial-sample design)", *perp_claim,
            "sampled", "one added positive, 5 answers, 1000 runs",
            lambda: perp.twin_power(perp.sharp._Audited)[0],
            "half the noise of every ChallengeBT copy (measured: no power)",
            lambda: perp.twin_power(perp.HalfNoiseCopies)[0], "test_perp_twin_power.py"),
    ]


def rows(include_sampled=True):
    """Every row of the table (the exact ones first: they take seconds)."""
    out = (_exact_thresholds() + _exact_challenge_bt() + _exact_predictor()
           + _exact_decision_lists()
           + _exact_online() + _exact_streams())
    if include_sampled:
        out += _sampled_mechanisms() + _sampled_estimators()
    return out + NOT_YET


NOT_YET = [
    Row(name, float("nan"), float("nan"), "—", "", None, reason, None, test)
    for name, reason, test in [
        ("ReorderSliceCompute", "no 2× twin: Thm 4.1's bound has no constant (the audit "
         "checks ε·ln(1/δ̂) = 4.61, measured 0.82); no-slice-noise twin caught",
         "test_rsc_audit.py"),
        ("PERP: Rectangles / DecisionStump / sharp / charged presets",
         "no 2× twin caught: its copies' lemma is ChallengeBT's (exact 2× rows above); the "
         "whole predictor's audits are designed for partition and noiseless bugs (honest "
         "−0.53 of 2), and at PERP's sizes (first phase 6.8·10⁷ queries at ε = 1, d = 2) no "
         "exact model is in reach; measured power of the half-noise-copies twin: row above",
         "test_perp_audit.py, test_perp_sharp_audit.py, test_perp_twin_power.py"),
        ("DP-Winnow, practical (sparse vector)",
         "no 2× twin caught: each update folds one row, so a draw's scores lean only after "
         "draws the lean itself makes rare — the design realises 2η of each draw's 4η and "
         "monotone AboveThreshold ε̂/2 (K = 1, m = 1: exactly 0.5 of 2, row above), so "
         "the 2× twin stays 1.0 ≤ 2; the scheduled setting (default) folds M rows per "
         "window and is caught (row above); predict_proba is post-processing of the released draws",
         "test_winnow_audit.py, test_winnow_proba_audit.py"),
        ("Li–Wang–Ye adaptive, histogram release (non-default)",
         "no 2× twin caught: its audit's design moves the monotone switch by one count "
         "(monotone AboveThreshold realises about ε₀/2 on the designs tried) and its "
         "layer-1 histogram never releases there; no design realising more is known. The "
         "default consistent release and the agnostic learners are caught (rows above)",
         "test_adaptive_audit.py"),
        ("DP-SOA whole estimator (sparse vector, histogram, flat forest)",
         "2× twin via its competitor query (row above); the histogram step's share "
         "(ε_hist = 0.67 of 2) stays below the claim even doubled unless a design also "
         "realises the sparse vector's 1.34 (row above); "
         "noiseless twins caught",
         "test_dp_soa_audit.py, test_dp_soa_flat_audit.py"),
    ]
]
