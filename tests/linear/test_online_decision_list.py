"""Lemma 15 embedding and OnlineDecisionListClassifier."""

import itertools
import warnings

import numpy as np
import pytest

from skdp.exceptions import PrivacyWarning
from skdp.linear import (
    DecisionListEmbedding,
    OnlineDecisionListClassifier,
    WinnowClassifier,
    decision_list_halfspace,
    decision_list_margin,
)
from skdp.linear._decision_list_embedding import evaluate_decision_list


@pytest.mark.parametrize("seed", range(6))
def test_lemma15_halfspace_represents_the_list_with_its_margin(seed):
    rng = np.random.default_rng(seed)
    d = 6
    r = int(rng.integers(1, 5))
    features = rng.choice(d, size=r, replace=False)
    rules = [(int(f), int(rng.choice([-1, 1]))) for f in features]
    default = int(rng.choice([-1, 1]))
    coef, bias, margin = decision_list_halfspace(rules, default, d)
    X = np.array(list(itertools.product([0, 1], repeat=d)))
    values = (2 * X - 1) @ coef + bias
    labels = evaluate_decision_list(rules, default, X)
    assert np.all(np.sign(values) == labels)
    assert np.min(labels * values) == pytest.approx(margin)
    assert margin >= decision_list_margin(r) - 1e-12
    assert np.abs(coef).sum() + abs(bias) == pytest.approx(1.0)


def test_winnow_learns_a_decision_list_through_the_embedding(rng):
    d = 12
    rules, default = [(3, 1), (7, -1), (1, 1)], -1
    X = rng.integers(0, 2, size=(20000, d))
    y = evaluate_decision_list(rules, default, X)
    Z = DecisionListEmbedding().fit_transform(X)
    rho = decision_list_halfspace(rules, default, d)[2]
    clf = WinnowClassifier(learning_rate=rho).fit(Z, y)
    assert clf.score(Z, y) == 1.0
    assert clf.n_mistakes_ <= np.log(2 * (d + 1)) / (rho * rho - rho**2 / 2)


def test_online_decision_list_rejects_non_binary_and_names_binarizer(rng):
    X = rng.uniform(size=(20, 3))
    y = rng.integers(0, 2, 20)
    with pytest.raises(ValueError, match="PublicBoundsBinarizer"):
        OnlineDecisionListClassifier(binarize=None).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        DecisionListEmbedding().fit(X)


def test_online_decision_list_learns_and_exports(rng):
    """As for DP-Winnow's large-margin test: with m = 1 the last release is one draw from
    private weights that put ≈ 0.57 on the target, so one seed's final score is a coin
    flip (for either accounting); the private scores and six seeds' releases are not."""
    X = rng.integers(0, 2, size=(40000, 5))
    y = X[:, 2]
    fits = []
    for seed in range(6):
        clf = OnlineDecisionListClassifier(max_length=1, epsilon=4.0, random_state=seed,
                                           classes=[0, 1], setting="practical")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            clf.fit(X, y)
        assert clf.margin_ == 1.0
        assert clf._scores[2] > 5 * np.abs(np.delete(clf._scores, 2)).max()
        fits.append((clf.score(X, y), clf))
    assert sum(score > 0.95 for score, _ in fits) >= 2
    clf = next(clf for score, clf in fits if score > 0.95)
    text = clf.export_text(feature_names=[f"f{j}" for j in range(5)])
    assert text.splitlines()[0].startswith("if f2 == 1: 1")
    assert text.splitlines()[-1].startswith("else: 0")


def test_export_text_default_names(rng):
    X = rng.integers(0, 2, size=(200, 3))
    clf = OnlineDecisionListClassifier(random_state=0).fit(X, X[:, 0])
    assert "else:" in clf.export_text()
    assert clf.export_text(max_rules=0).count("\n") == 0


@pytest.mark.filterwarnings("ignore::skdp.exceptions.PrivacyWarning")
def test_online_decision_list_block_equivalence(rng):
    X = rng.integers(0, 2, size=(3000, 6))
    y = evaluate_decision_list([(1, 1), (4, -1)], 1, X)
    params = dict(max_length=2, epsilon=2.0, n_rounds=3000, max_updates=200, random_state=1)
    one = OnlineDecisionListClassifier(**params).fit(X, y)
    blocks = OnlineDecisionListClassifier(**params)
    for start in (0, 10, 1500):
        stop = {0: 10, 10: 1500, 1500: 3000}[start]
        blocks.partial_fit(X[start:stop], y[start:stop], classes=[-1, 1])
    np.testing.assert_array_equal(one.weights_, blocks.weights_)
    assert one.n_updates_ == blocks.n_updates_ > 0
