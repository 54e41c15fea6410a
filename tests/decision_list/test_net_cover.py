"""The net cover: the default DP decision list and the non-private greedy list's default."""

import numpy as np
import pytest
import scipy.sparse as sp
from _planted import planted
from scipy.stats import chisquare

from skdp import PrivacyBudget
from skdp.accounting import account
from skdp.decision_list import DPDecisionListClassifier, GreedyDecisionListClassifier, _frequencies
from skdp.decision_list._accounting import release_events
from skdp.decision_list._greedy_cover import greedy_cover, predict_codes
from skdp.decision_list._net_cover import COUNT_SHARE, auto_n_rules, net_selector

# Most tests fit without the public label set (its warning: tests/test_public_labels.py).
pytestmark = pytest.mark.filterwarnings(
    r"ignore:.*the label set \(classes_\) was read:skdp.PrivacyLeakWarning")


def _naive_net_cover(X, y, n_classes, n_rules, weight, negations, select):
    """Reference net cover recomputing every count from scratch."""
    X = np.asarray(X).astype(bool)
    n, d = X.shape
    remaining = np.ones(n, dtype=bool)
    available = np.ones(d, dtype=bool)
    rules = []
    for _ in range(n_rules):
        idx = np.flatnonzero(available)
        literals = [(f, 1) for f in idx] + ([(f, 0) for f in idx] if negations else [])
        scores, cover = [], []
        for f, sign in literals:
            fires = remaining & (X[:, f] == sign)
            for b in range(n_classes):
                right = int(np.sum(fires & (y == b)))
                scores.append(right - weight * (int(fires.sum()) - right))
                cover.append(int(fires.sum()))
        cand, b = divmod(select(np.array(scores), np.array(cover)), n_classes)
        f, sign = literals[cand]
        rules.append((f, sign, b))
        available[f] = False
        remaining &= X[:, f] != sign
    return rules


@pytest.mark.parametrize("negations", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_incremental_net_cover_matches_naive(negations, n_classes):
    rng = np.random.default_rng(n_classes)
    X = (rng.random((300, 10)) < 0.3).astype(int)
    y = rng.integers(0, n_classes, 300)

    def make_select():
        gen = np.random.default_rng(5)
        return lambda s, c: int(np.argmax(s + 3 * gen.gumbel(size=s.size)))

    fast = greedy_cover(sp.csr_matrix(X), y, n_classes, max_rules=6, select=make_select(),
                        score="net", error_weight=1.5, negations=negations, allow_true=False)
    rules = _naive_net_cover(X, y, n_classes, 6, 1.5, negations, make_select())
    assert list(zip(fast.features, fast.signs, fast.labels, strict=True)) == rules
    assert fast.default == -1  # the rows left are labelled from the released counts
    # prediction with negated literals: the first rule whose literal holds
    Xc = sp.csr_matrix(X)
    out = predict_codes(Xc, fast.features, fast.labels, n_classes, 10, fast.signs)
    for row, o in zip(X, out, strict=True):
        fired = [b for f, s, b in rules if row[f] == s]
        assert o == (fired[0] if fired else n_classes)


def test_list_length_grows_with_a_noisy_count_not_with_n():
    """Issue 27: K comes from a noisy row count (it was round(2ε) whatever n)."""
    step = lambda k: 0.95 / (k + 0.5)  # noqa: E731  basic composition's ε̂
    ks = [auto_n_rules(n, 80, 2.5, step, 64) for n in (50, 1_000, 10_000, 100_000)]
    assert ks == sorted(ks) and ks[0] == 0 and ks[-1] > ks[1] > 0, ks
    assert auto_n_rules(10**9, 80, 2.5, step, 64) == 64  # capped by the public maximum
    X, y = planted()
    short = DPDecisionListClassifier(epsilon=2.0, classes=[0, 1], random_state=0)
    with pytest.warns(UserWarning, match="too few for a rule list"):
        short.fit(X[:12], y[:12])
    long = DPDecisionListClassifier(epsilon=2.0, classes=[0, 1], random_state=0).fit(X, y)
    assert len(short.rules_) == 1 < len(long.rules_)
    assert abs(long.n_samples_estimate_ - X.shape[0]) < 200  # noise scale 1/(0.05·2) = 10
    # an explicit max_rules is the old fixed length: no count, K steps whatever n
    for n in (200, 3000):
        clf = DPDecisionListClassifier(epsilon=2.0, max_rules=4, classes=[0, 1],
                                       random_state=0).fit(X[:n], y[:n])
        assert len(clf.rules_) == 4 and clf.n_selections_ == 4
        assert not hasattr(clf, "n_samples_estimate_")


def test_net_cover_accounting():
    X, y = planted()
    # ε = 4, K = 8: 8 bounded-range rule steps + the ε̂/2 histogram through the accountant
    clf = DPDecisionListClassifier(epsilon=4.0, max_rules=8, classes=[0, 1],
                                   random_state=0).fit(X, y)
    assert clf.accounting_ == "tight" and clf.step_epsilon_ > 1.01 * 4.0 / 8.5
    assert account(release_events(clf.step_epsilon_, 9)).epsilon(1e-6) <= 4.0
    assert clf.privacy_spent_ == (4.0, 1e-6)
    # "paper" (the prototype's accounting) and "basic": ε/(K + 1/2), pure
    for accounting in ("paper", "basic"):
        clf = DPDecisionListClassifier(epsilon=4.0, max_rules=8, accounting=accounting,
                                       classes=[0, 1], random_state=0).fit(X, y)
        assert clf.accounting_ == "basic" and clf.step_epsilon_ == pytest.approx(4.0 / 8.5)
        assert clf.privacy_spent_ == (4.0, 0.0)


@pytest.mark.parametrize("max_rules, weight", [(4, 0.5), (5, 1.0), (None, 1.0)])
def test_lift_histogram_weight(monkeypatch, max_rules, weight):
    """Under the lift score a list of K ≥ 5 rules releases its counts at ε̂ (w = 1) and
    ε̂ is calibrated for it (basic: ε/(K + 1)); shorter lists keep ε̂/2. The noise draw
    is recorded at the module attribute the release calls."""
    drawn = []
    draw = _frequencies.geometric_mechanism

    def record(rows, epsilon, *args, **kwargs):
        drawn.append(epsilon)
        return draw(rows, epsilon, *args, **kwargs)

    monkeypatch.setattr(_frequencies, "geometric_mechanism", record)
    X, y = planted()
    clf = DPDecisionListClassifier(epsilon=4.0, max_rules=max_rules, accounting="basic",
                                   bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, y)
    k = len(clf.rules_)
    rest = 4.0 * (1 - COUNT_SHARE) if max_rules is None else 4.0
    assert k >= 5 or weight == 0.5
    assert clf.step_epsilon_ == pytest.approx(rest / (k + weight))
    assert drawn[-1] == pytest.approx(weight * clf.step_epsilon_)
    assert account(release_events(clf.step_epsilon_, k + 1, weight)).epsilon(0) <= rest + 1e-9


@pytest.mark.filterwarnings("ignore:.*too few for a rule list:UserWarning")
def test_short_two_class_lists_switch_to_the_net_score():
    """rule_score="auto" with bounds: lift, unless the automatic length allows at most
    four rules on two classes (then net, from the released count); an explicit score,
    a fixed max_rules, a long list or three classes keep lift."""
    X, y = planted(n=6000, d=12, seed=1)

    def fit(n, **kw):
        params = {"epsilon": 1.0, "bounds": (0, 1), "random_state": 0, **kw}
        params.setdefault("classes", [0, 1])
        return DPDecisionListClassifier(**params).fit(X[:n], y[:n])

    short = fit(200)
    assert len(short.rules_) <= 4 and short.rule_score_ == "net"
    assert fit(200, rule_score="lift").rule_score_ == "lift"
    assert fit(200, max_rules=2).rule_score_ == "lift"
    assert fit(6000).rule_score_ == "lift" and len(fit(6000).rules_) > 4
    y3 = np.where(X[:200, 1] == 1, 2, y[:200])
    three = DPDecisionListClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1, 2],
                                     random_state=0).fit(X[:200], y3)
    assert three.rule_score_ == "lift"
    # the net release's plan: basic composition with the histogram at ε̂/2
    basic = fit(200, accounting="basic")
    k = len(basic.rules_)
    assert basic.step_epsilon_ == pytest.approx(1.0 * (1 - COUNT_SHARE) / (k + 0.5))


def test_automatic_length_accounting():
    """The count pays ε·COUNT_SHARE, the list the rest: (ε, δ) in all (basic composition)."""
    X, y = planted()
    rest = 4.0 * (1 - COUNT_SHARE)
    clf = DPDecisionListClassifier(epsilon=4.0, classes=[0, 1], random_state=0).fit(X, y)
    k = len(clf.rules_)
    assert clf.accounting_ == "tight" and clf.privacy_spent_ == (4.0, 1e-6)
    assert account(release_events(clf.step_epsilon_, k + 1)).epsilon(1e-6) <= rest
    clf = DPDecisionListClassifier(epsilon=4.0, accounting="basic", classes=[0, 1],
                                   random_state=0).fit(X, y)
    assert clf.privacy_spent_ == (4.0, 0.0)
    assert clf.step_epsilon_ == pytest.approx(rest / (len(clf.rules_) + 0.5))


def test_emcover_is_refused_for_the_net_cover_before_any_privacy_is_spent():
    X, y = planted()
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    clf = DPDecisionListClassifier(accounting="emcover", budget=budget, classes=[0, 1])
    with pytest.raises(ValueError, match="Lemma 18"):
        clf.fit(X, y)
    assert budget.spent.epsilon == 0.0 and not hasattr(clf, "rules_")


def test_net_selector_samples_the_lemma_distribution():
    """Rule step ∝ exp(ε̂q/(1 + λ)) (chi-square, α = 1e-6)."""
    step, lam, n = 1.2, 2.0, 20_000
    scores = np.array([0.0, 1.0, 3.0, -2.0])
    rng = np.random.default_rng(0)
    select = net_selector(step, lam, rng)
    draws = np.array([select(scores, scores) for _ in range(n)])
    p = np.exp(step / (1 + lam) * scores)
    p /= p.sum()
    assert chisquare(np.bincount(draws, minlength=4), n * p).pvalue > 1e-6


def test_dp_net_cover_learns_a_planted_list_and_beats_the_paper_at_moderate_epsilon():
    X, y = planted(noise=0.05)
    net = DPDecisionListClassifier(epsilon=2.0, classes=[0, 1], random_state=1).fit(X, y)
    assert [r[0] for r in net.rules_[:3]] == [0, 3, 5]
    assert net.score(X, y) > 0.93


def test_negated_literals_are_learned_and_printed():
    rng = np.random.default_rng(0)
    X = (rng.random((2000, 4)) < 0.5).astype(int)
    y = np.where(X[:, 2] == 0, 1, X[:, 0])  # "if ~x2 then 1 elif x0 then 1 else 0"
    clf = DPDecisionListClassifier(epsilon=8.0, max_rules=2, negations=True, classes=[0, 1],
                                   random_state=0).fit(X, y)
    assert clf.rules_[0] == (2, 0, 1)
    assert clf.export_text().splitlines()[0] == "if ~x2 then 1"
    assert clf.score(X, y) == 1.0
    assert clf.export_text(["a", "b", "c d", "e"]).startswith("if ~(c d) then 1")


def _noisy(seed, n=3000):
    """y = x0 with 20 % label noise, 3 more fair coins, 30 rare (1 %) features."""
    rng = np.random.default_rng(seed)
    X = np.c_[rng.random((n, 4)) < 0.5, rng.random((n, 30)) < 0.01].astype(int)
    return X, np.where(rng.random(n) < 0.2, 1 - X[:, 0], X[:, 0])


def test_greedy_net_cover_learns_impure_rules_on_noisy_data():
    X, y = _noisy(0)
    Xt, yt = _noisy(1)
    # Rivest's error score takes the rare, nearly pure features first
    rivest = GreedyDecisionListClassifier(algorithm="greedy_cover").fit(X, y)
    assert rivest.rules_[0][0] >= 4 and rivest.score(Xt, yt) < 0.75
    net = GreedyDecisionListClassifier().fit(X, y)
    assert net.rules_[0] == (0, 1, 1) and net.score(Xt, yt) > 0.78
    # it stops once no rule is right on more than λ/(1 + λ) of the rows it covers
    X2 = np.random.default_rng(0).integers(0, 2, (500, 6))
    y2 = np.random.default_rng(1).integers(0, 2, 500)
    assert len(GreedyDecisionListClassifier(error_weight=3.0).fit(X2, y2).rules_) <= 2


def test_greedy_net_cover_recovers_a_noise_free_list():
    X, y = planted()
    clf = GreedyDecisionListClassifier().fit(X, y)
    assert clf.score(X, y) == 1.0
    assert [r[0] for r in clf.rules_[:3]] == [0, 3, 5]
