"""Behaviour of the decision-list estimators: the cover, accounting, budgets, streaming."""

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _planted import planted
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from skdp import (
    BudgetExhaustedError,
    PrivacyBudget,
    PrivacyLeakWarning,
    PrivacyParameterError,
    PrivacyWarning,
    TestingSeed,
)
from skdp.accounting import account
from skdp.decision_list import (
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
    emcover_step_epsilon,
)
from skdp.decision_list._accounting import (
    emcover_histogram_step_epsilon,
    release_events,
    tight_step_epsilon,
)
from skdp.decision_list._greedy_cover import greedy_cover, predict_codes
from skdp.exceptions import StaleStateError
from skdp.preprocessing import PublicBoundsBinarizer

# Most tests fit without the public label set; its warning is tested on its own below.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:.*the label set \(classes_\) was read:skdp.PrivacyLeakWarning")


# -- the cover -----------------------------------------------------------------------
def _naive_cover(X, y, n_classes, max_rules, select):
    """Reference implementation recomputing every count from scratch (O(M·n·d))."""
    X = np.asarray(X.todense() if sp.issparse(X) else X).astype(bool)
    n, d = X.shape
    remaining = np.ones(n, dtype=bool)
    available = np.ones(d, dtype=bool)
    feats, labs, default = [], [], None
    for _ in range(min(max_rules, d)):
        idx = np.flatnonzero(available)
        scores, cover = [], []
        for f in [*idx, None]:
            fires = remaining & (X[:, f] if f is not None else True)
            for b in range(n_classes):
                scores.append(-int(np.sum(fires & (y != b))))
                cover.append(int(fires.sum()))
        pick = select(np.array(scores), np.array(cover))
        cand, b = divmod(pick, n_classes)
        if cand == idx.size:
            default = b
            break
        f = idx[cand]
        feats.append(f)
        labs.append(b)
        available[f] = False
        remaining &= ~X[:, f]
    return feats, labs, -1 if default is None else default


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_incremental_counts_match_naive_cover(seed, n_classes):
    rng = np.random.default_rng(seed)
    X = sp.random(200, 15, density=0.2, format="csr", random_state=seed)
    X.data[:] = 1
    y = rng.integers(0, n_classes, 200)

    def make_select():
        gen = np.random.default_rng(seed)
        return lambda s, c: int(np.argmax(s + gen.gumbel(size=s.size)))

    fast = greedy_cover(X, y, n_classes, max_rules=10, select=make_select())
    feats, labs, default = _naive_cover(X, y, n_classes, 10, make_select())
    assert list(fast.features) == feats
    assert list(fast.labels) == labs
    assert fast.default == default


def test_predict_codes_matches_first_rule():
    rng = np.random.default_rng(1)
    X = (rng.random((300, 6)) < 0.3).astype(int)
    rules, labels = [4, 1, 2], [1, 0, 2]
    out = predict_codes(sp.csr_matrix(X), rules, labels, 9, 6)
    for row, o in zip(X, out, strict=True):
        fired = [lab for f, lab in zip(rules, labels, strict=True) if row[f]]
        assert o == (fired[0] if fired else 9)


def test_greedy_recovers_planted_list():
    X, y = planted()
    clf = GreedyDecisionListClassifier().fit(X, y)
    assert clf.score(X, y) == 1.0
    assert [r[0] for r in clf.rules_[:3]] == [0, 3, 5]
    assert clf.export_text().splitlines()[0] == "if x0 then 1"


def test_dp_large_epsilon_recovers_planted_list():
    X, y = planted()
    clf = DPDecisionListClassifier(epsilon=50.0, max_rules=3, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.97
    assert clf.rules_[0] == (0, 1, 1)


def test_dense_and_sparse_give_same_list_and_seed_reproducible():
    X, y = planted(noise=0.05)
    a = DPDecisionListClassifier(epsilon=1.0, random_state=3).fit(X, y)
    b = DPDecisionListClassifier(epsilon=1.0, random_state=3).fit(sp.csr_matrix(X), y)
    assert a.rules_ == b.rules_ and a.default_label_ == b.default_label_
    np.testing.assert_array_equal(a.predict(X), b.predict(sp.csr_matrix(X)))


def test_multiclass_and_string_labels():
    X, y = planted(noise=0.0)
    # "if x7 then maybe" in front of the planted list
    y3 = np.where(X[:, 7] == 1, "maybe", np.array(["no", "yes"])[y])
    clf = GreedyDecisionListClassifier().fit(X, y3)
    assert set(clf.classes_) == {"no", "yes", "maybe"}
    assert clf.score(X, y3) == 1.0
    dp = DPDecisionListClassifier(epsilon=20.0, random_state=0).fit(X, y3)
    assert set(dp.predict(X)) <= set(clf.classes_)


def test_export_text_with_feature_names():
    X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    y = np.array(["a", "a", "b", "c"])
    clf = GreedyDecisionListClassifier().fit(X, y)
    assert clf.export_text(["rich", "tall"]) == "if rich then a\nelif tall then b\nelse c"
    with pytest.raises(ValueError, match="feature_names"):
        clf.export_text(["only one"])


# -- accounting ----------------------------------------------------------------------
# These tests pin the paper's DP-GreedyCover (algorithm="greedy_cover"): its M = d + 1
# selections are where the accountings differ. The net cover: test_net_cover.py.
def paper_list(**params):
    return DPDecisionListClassifier(algorithm="greedy_cover", **params)


def test_emcover_step_epsilon_is_lemma_18():
    eps, delta = 1.0, 1e-6
    step = emcover_step_epsilon(eps, delta)
    assert step == pytest.approx(eps / (2 * (math.log(1 / delta) + 1.5)))
    # Lemma 18: EMCover with ε̂ is (2 ε̂ (ln(1/δ) + 3/2), δ)-DP
    assert 2 * step * (math.log(1 / delta) + 1.5) == pytest.approx(eps)
    # the lemma's inequality 1 + (e^x − 1)p ≤ e^{2xp} holds only up to ~1.2564: cap
    assert emcover_step_epsilon(1e3, 1e-6) <= 1.2564313
    x = emcover_step_epsilon(1e3, 1e-6)
    p = np.linspace(0, 1, 101)
    assert np.all(1 + np.expm1(x) * p <= np.exp(2 * x * p) + 1e-12)


def test_paper_accounting_picks_the_larger_step_and_charges_what_it_guarantees():
    """``accounting="paper"`` is the choice before the tight accountant (then "auto")."""
    X, y = planted(d=12)
    many = paper_list(epsilon=1.0, delta=1e-6, accounting="paper",
                                    random_state=0).fit(X, y)
    # 12 selections + the ε̂/2 histogram: basic gives 1/12.5 = 0.08 > EMCover's ≈ 0.033
    assert many.accounting_ == "basic"
    assert many.step_epsilon_ == pytest.approx(1 / 12.5)
    assert many.privacy_spent_ == (1.0, 0.0)
    em = paper_list(epsilon=1.0, delta=1e-6, accounting="emcover",
                                  random_state=0).fit(X, y)
    assert em.accounting_ == "emcover"
    assert em.step_epsilon_ == pytest.approx(emcover_histogram_step_epsilon(1.0, 1e-6))
    assert em.privacy_spent_ == (1.0, 1e-6)
    X50 = np.hstack([X] * 5)  # 60 features: 61 steps, EMCover wins
    paper = paper_list(epsilon=1.0, delta=1e-6, accounting="paper",
                                     random_state=0).fit(X50, y)
    assert paper.accounting_ == "emcover"


def test_auto_accounting_takes_the_tight_accountant_where_it_wins():
    X, y = planted(d=12)
    auto = paper_list(epsilon=1.0, delta=1e-6, random_state=0).fit(X, y)
    # 12 ε̂-bounded-range selections and the ε̂/2 histogram by the accountant: ε̂ ≈ 0.12
    assert auto.accounting_ == "tight"
    assert auto.step_epsilon_ == tight_step_epsilon(1.0, 1e-6, 13) > 1.01 / 12.5
    assert auto.privacy_spent_ == (1.0, 1e-6)
    assert account(release_events(auto.step_epsilon_, 13)).epsilon(1e-6) <= 1.0
    X60 = np.hstack([X] * 5)  # 61 steps: still the accountant, above EMCover
    assert paper_list(epsilon=1.0, random_state=0).fit(X60, y).accounting_ \
        == "tight"
    X360 = np.hstack([X] * 30)  # 361 steps: EMCover (independent of the count) wins
    long = paper_list(epsilon=1.0, random_state=0).fit(X360, y)
    assert long.accounting_ == "emcover"
    assert long.step_epsilon_ == emcover_histogram_step_epsilon(1.0, 1e-6)
    # 5 steps: the accountant's gain over basic is < 1 %, so auto stays pure
    short = paper_list(epsilon=1.0, max_rules=4, random_state=0).fit(X, y)
    assert short.accounting_ == "basic" and short.privacy_spent_ == (1.0, 0.0)
    tight = paper_list(epsilon=1.0, max_rules=4, accounting="tight",
                                     random_state=0).fit(X, y)
    assert tight.accounting_ == "tight" and tight.step_epsilon_ >= 1.0 / 4.5


@pytest.mark.parametrize("accounting", ["emcover", "tight"])
def test_delta_zero_falls_back_to_basic_and_says_so(accounting):
    X, y = planted(d=6)
    with pytest.warns(PrivacyWarning, match="basic composition"):
        clf = paper_list(epsilon=1.0, delta=0.0, accounting=accounting).fit(X, y)
    assert clf.accounting_ == "basic"
    assert clf.step_epsilon_ == pytest.approx(1.0 / 6.5)
    assert clf.privacy_spent_ == (1.0, 0.0)


def test_max_rules_caps_the_list_whatever_the_data():
    X, y = planted(d=12, noise=0.3)
    clf = paper_list(epsilon=1.0, max_rules=4, random_state=0).fit(X, y)
    assert len(clf.rules_) <= 4 and clf.n_selections_ <= 4
    assert clf.step_epsilon_ == pytest.approx(1.0 / 4.5)


# -- budgets: clone, deepcopy, pickle, grid search -----------------------------------
def test_budget_is_charged_and_shared_by_copies():
    X, y = planted(d=6)
    budget = PrivacyBudget(epsilon=3.0, delta=1e-5)
    clf = paper_list(epsilon=1.0, budget=budget, random_state=TestingSeed(0))
    clf.fit(X, y)
    assert budget.spent.epsilon == pytest.approx(1.0)
    for twin in (clone(clf), copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))):
        assert twin.budget.shares_ledger_with(budget)
    clone(clf).fit(X, y)
    pickle.loads(pickle.dumps(clf)).fit(X, y)
    assert budget.spent.epsilon == pytest.approx(3.0)
    # a fitted copy keeps the record of what it spent; nothing is reset (7 selections:
    # "auto" takes the tight accountant's (ε, δ) split)
    assert clf.accounting_ == "tight"
    assert copy.deepcopy(clf).privacy_spent_ == clf.privacy_spent_ == (1.0, 1e-6)
    before = (clf.rules_, clf.default_label_, dict(clf.__dict__).keys())
    with pytest.raises(BudgetExhaustedError):
        clf.fit(X[:100], y[:100])
    assert (clf.rules_, clf.default_label_, clf.__dict__.keys()) == before
    assert budget.spent.epsilon == pytest.approx(3.0)


def test_grid_search_charges_every_fit_to_one_ledger_then_stops():
    X, y = planted(d=6)
    budget = PrivacyBudget(epsilon=100.0)
    search = GridSearchCV(
        DPDecisionListClassifier(epsilon=1.0, budget=budget, random_state=TestingSeed(0)),
        {"max_rules": [2, 4]},
        cv=3,
    )
    search.fit(X, y)
    n_fits = 2 * 3 + 1  # 6 CV fits + the refit
    assert budget.spent.epsilon == pytest.approx(n_fits * 1.0)
    assert len(budget.charges) == n_fits
    small = PrivacyBudget(epsilon=4.0)
    search = GridSearchCV(
        DPDecisionListClassifier(epsilon=1.0, budget=small, random_state=TestingSeed(0)),
        {"max_rules": [2, 4]},
        cv=3,
        error_score="raise",
    )
    with pytest.raises(BudgetExhaustedError):
        search.fit(X, y)
    assert small.spent.epsilon == pytest.approx(4.0)


def test_pipeline_with_public_binarizer_and_cross_val_score():
    rng = np.random.default_rng(0)
    Xr = rng.uniform(0, 10, size=(600, 3))
    y = ((Xr[:, 0] > 5) | (Xr[:, 2] < 2)).astype(int)
    pipe = make_pipeline(
        PublicBoundsBinarizer(bounds=(0, 10), n_thresholds=4),
        DPDecisionListClassifier(epsilon=4.0, max_rules=6, random_state=0),
    )
    scores = cross_val_score(pipe, Xr, y, cv=3)
    assert scores.mean() > 0.8
    pipe.fit(Xr, y)
    names = pipe[0].get_feature_names_out()
    assert "x0 > 6" in pipe[-1].export_text(names) or "then" in pipe[-1].export_text(names)


# -- partial_fit ---------------------------------------------------------------------
def test_partial_fit_releases_on_a_public_schedule_and_predict_never_spends():
    """Calls 1, 3, 7, … release a list learned on their chunk; predict reads only."""
    X, y = planted(noise=0.05)
    budget = PrivacyBudget(epsilon=10.0, delta=1e-5)
    clf = DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], budget=budget,
                                   random_state=TestingSeed(0))
    blocks = np.array_split(np.arange(len(y)), 7)
    releases = []
    for block in blocks:
        clf.partial_fit(X[block], y[block])
        releases.append(clf.n_releases_)
        before = copy.deepcopy(clf.__dict__)
        charges = len(budget.charges)
        clf.predict(X[:50])
        clf.predict_proba(X[:50])
        clf.decision_function(X[:50])
        assert len(budget.charges) == charges  # predict never pays
        assert clf.__dict__.keys() == before.keys() and clf.rules_ == before["rules_"]
        assert clf._stream.version == before["_stream"].version  # nor moves the stream
    assert releases == [1, 1, 2, 2, 2, 2, 3]
    # one charge for the whole stream: each row is used by exactly one release
    assert len(budget.charges) == 1 and budget.spent.epsilon == pytest.approx(1.0)
    assert clf.privacy_spent_.epsilon == pytest.approx(1.0)
    # the last release is fit's routine on the chunk of calls 4..7
    assert clf.score(X, y) > 0.8


def test_progressive_validation_pays_once():
    """river-style predict-then-learn, one row at a time: one charge, not one per row."""
    X, y = planted(d=6)
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    clf = DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], budget=budget,
                                   random_state=TestingSeed(0))
    clf.partial_fit(X[:1], y[:1])
    right = 0
    for i in range(1, 300):
        right += clf.predict(X[i : i + 1])[0] == y[i]
        assert clf.predict_proba(X[i : i + 1]).shape == (1, 2)
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
    assert len(budget.charges) == 1 and budget.spent.epsilon == pytest.approx(1.0)
    assert clf.n_releases_ == 8  # calls 1, 3, 7, …, 255
    # a stale copy cannot continue the stream (its noise would repeat)
    twin = copy.deepcopy(clf)
    clf.partial_fit(X[:5], y[:5])
    with pytest.raises(StaleStateError):
        twin.partial_fit(X[:5], y[:5])


def test_partial_fit_first_call_is_refused_unchanged_when_unpaid():
    X, y = planted(d=6)
    budget = PrivacyBudget(epsilon=0.5)
    clf = DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], budget=budget)
    with pytest.raises(BudgetExhaustedError):
        clf.partial_fit(X[:10], y[:10])
    assert not hasattr(clf, "classes_") and budget.spent.epsilon == 0


def test_greedy_partial_fit_equals_fit_on_the_concatenation():
    X, y = planted(noise=0.05)
    greedy = GreedyDecisionListClassifier()
    for block in np.array_split(np.arange(len(y)), 5):
        greedy.partial_fit(X[block], y[block], classes=[0, 1])
    whole = GreedyDecisionListClassifier().fit(X, y)
    assert greedy.rules_ == whole.rules_
    np.testing.assert_allclose(greedy.predict_proba(X), whole.predict_proba(X))
    with pytest.warns(FutureWarning, match="release"):
        assert greedy.release() is greedy


def test_partial_fit_input_checks():
    X, y = planted(d=6)
    clf = DPDecisionListClassifier()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[:10], y[:10], classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[:10], y[:10] + 5)
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:10, :3], y[:10])


# -- bad input -----------------------------------------------------------------------
def test_non_binary_input_names_the_public_binarizer_and_costs_nothing():
    budget = PrivacyBudget(epsilon=1.0)
    clf = DPDecisionListClassifier(epsilon=1.0, budget=budget, binarize=None)
    with pytest.raises(ValueError, match="PublicBoundsBinarizer"):
        clf.fit(np.array([[0.5, 1.0], [0.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match="PublicBoundsBinarizer"):
        GreedyDecisionListClassifier(binarize=None).fit(
            sp.csr_matrix([[2.0, 1.0], [0.0, 1.0]]), [0, 1])
    assert budget.spent.epsilon == 0.0


@given(
    bad=st.sampled_from([np.nan, np.inf, -np.inf, 0.5, 2.0, -1.0]),
    row=st.integers(0, 9),
    col=st.integers(0, 3),
    sparse=st.booleans(),
)
def test_bad_values_fail_before_any_privacy_is_spent(bad, row, col, sparse):
    X = (np.random.default_rng(row).random((10, 4)) < 0.5).astype(float)
    X[row, col] = bad
    y = np.arange(10) % 2
    budget = PrivacyBudget(epsilon=1.0)
    clf = DPDecisionListClassifier(epsilon=0.5, budget=budget, binarize=None)  # 0/1 only
    with pytest.raises(ValueError):
        clf.fit(sp.csr_matrix(X) if sparse else X, y)
    assert budget.spent.epsilon == 0.0 and not hasattr(clf, "rules_")


@given(
    epsilon=st.one_of(
        st.sampled_from([0.0, -1.0, np.inf, np.nan, "1", None, True]),
        st.floats(max_value=0.0),
    ),
    delta=st.sampled_from([1e-6, 0.0]),
)
def test_invalid_epsilon_fails_before_any_privacy_is_spent(epsilon, delta):
    X, y = planted(n=50, d=6)
    budget = PrivacyBudget(epsilon=1.0, delta=1e-3)
    with pytest.raises((PrivacyParameterError, TypeError, ValueError)):
        DPDecisionListClassifier(epsilon=epsilon, delta=delta, budget=budget).fit(X, y)
    assert budget.spent == (0.0, 0.0)


@given(delta=st.sampled_from([-1e-3, 1.0, 2.0, np.nan, "x"]))
def test_invalid_delta_fails_before_any_privacy_is_spent(delta):
    X, y = planted(n=50, d=6)
    budget = PrivacyBudget(epsilon=1.0, delta=1e-3)
    with pytest.raises((PrivacyParameterError, TypeError, ValueError)):
        DPDecisionListClassifier(epsilon=1.0, delta=delta, budget=budget).fit(X, y)
    assert budget.spent == (0.0, 0.0)


@given(n_features=st.integers(1, 9).filter(lambda d: d != 6))
def test_predict_with_wrong_number_of_features(n_features):
    X, y = planted(n=100, d=6)
    clf = DPDecisionListClassifier(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.zeros((3, n_features)))


def test_binarize_parameter_and_sparse_negative_threshold():
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(200, 3))
    y = (Xr[:, 1] > 0).astype(int)
    clf = GreedyDecisionListClassifier(binarize=0.0).fit(Xr, y)
    assert clf.score(Xr, y) == 1.0
    with pytest.raises(ValueError, match="binarize"):
        GreedyDecisionListClassifier(binarize=-1.0).fit(sp.csr_matrix(Xr), y)


def test_no_warnings_in_normal_use():
    X, y = planted(d=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # normal use is unseeded (a seed is skdp's warned testing mode)
        DPDecisionListClassifier(classes=[0, 1]).fit(X, y).predict(X)


def test_label_set_from_data_warns_and_public_classes_are_checked():
    X, y = planted(d=6)
    with pytest.warns(PrivacyLeakWarning, match="classes="):
        DPDecisionListClassifier(random_state=0).fit(X, y)
    budget = PrivacyBudget(epsilon=1.0)
    clf = DPDecisionListClassifier(classes=[0, 1], budget=budget)
    with pytest.raises(ValueError, match="not in classes"):
        clf.fit(X, y + 1)
    assert budget.spent.epsilon == 0.0
    # a public label no row carries is still a possible prediction
    clf = DPDecisionListClassifier(classes=[0, 1, 2], random_state=0).fit(X, y)
    assert list(clf.classes_) == [0, 1, 2]
    stream = DPDecisionListClassifier(classes=[0, 1], random_state=0).partial_fit(X, y)
    assert list(stream.classes_) == [0, 1]


def test_pickled_fitted_estimator_predicts_the_same():
    X, y = planted(noise=0.05)
    clf = DPDecisionListClassifier(random_state=0).fit(X, y)
    twin = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(twin.predict(X), clf.predict(X))
    assert twin.privacy_spent_ == clf.privacy_spent_ and twin.export_text() == clf.export_text()


def test_partial_fit_after_fit_continues_the_stream_and_never_reuses_noise():
    X, y = planted(d=6)
    clf = paper_list(epsilon=1.0, random_state=0).fit(X[:1500], y[:1500])
    fitted = list(clf.rules_)
    clf.partial_fit(X[1500:2000], y[1500:2000])  # call 2: buffered
    assert clf.rules_ == fitted and clf.n_releases_ == 1
    clf.partial_fit(X[2000:], y[2000:])  # call 3: the chunk of calls 2-3 is released
    assert clf.n_releases_ == 2 and clf.privacy_spent_ == (1.0, 1e-6)  # disjoint rows
    # each release of the stream gets its own noise (seeded: keyed by its number), and
    # the list keeps no generator that could replay either
    assert not any(isinstance(v, np.random.Generator) for v in vars(clf).values())
    assert (clf._release_generator(None, 0).random()
            != clf._release_generator(None, 1).random())


def test_demo_row_spends_from_the_budget():
    from skdp.decision_list._demo import demo_row

    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    row = demo_row(np.random.default_rng(0), budget)
    assert set(row) == {"what", "privacy", "private result", "non-private"}
    assert budget.spent.epsilon == pytest.approx(1.0)  # the default list at ε = 1


def test_feature_names_in_from_a_dataframe_are_used_by_export_text():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"smoker": [1, 1, 0, 0], "old": [0, 1, 1, 0]})
    clf = GreedyDecisionListClassifier().fit(X, ["a", "a", "b", "c"])
    assert list(clf.feature_names_in_) == ["smoker", "old"]
    assert clf.export_text() == "if smoker then a\nelif old then b\nelse c"
