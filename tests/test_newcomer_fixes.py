"""Issue 29's first-ten-minutes fixes: pandas output of ConjunctionFeatures, a notebook
display without numpydoc warnings, one name (n_queries) for the planned number of
queries with a deprecation path for the other."""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

import skdp
from skdp.hypotheses import Thresholds


def test_conjunction_features_pandas_output():
    X = pd.DataFrame([[0.5, -1.0], [-0.2, 2.0], [1.0, 1.0]], columns=["age", "dose"])
    cf = skdp.ConjunctionFeatures(k=2).set_output(transform="pandas")
    out = cf.fit_transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(cf.get_feature_names_out())
    np.testing.assert_array_equal(out.to_numpy(),
                                  skdp.ConjunctionFeatures(k=2).fit_transform(X).toarray())
    # default output stays sparse
    assert not isinstance(skdp.ConjunctionFeatures().fit_transform(X), pd.DataFrame)
    pipe = make_pipeline(skdp.ConjunctionFeatures(),
                         skdp.GreedyDecisionListClassifier()).set_output(transform="pandas")
    assert pipe.fit(X, [0, 1, 1]).predict(X).shape == (3,)


@pytest.mark.parametrize("name", [n for n in skdp.__all__
                                  if inspect.isclass(getattr(skdp, n))
                                  and hasattr(getattr(skdp, n), "_repr_html_")])
def test_notebook_display_warns_nothing(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        html = getattr(skdp, name)()._repr_html_()
    assert name in html


def test_n_queries_is_the_one_name_and_planned_queries_is_deprecated():
    for cls in (skdp.PrivatePredictor, skdp.SubsampleAggregatePredictor):
        assert "n_queries" in cls().get_params()
    rng = np.random.default_rng(0)
    X = rng.random((400, 1))
    y = (X[:, 0] > 0.5).astype(int)
    new = skdp.PrivatePredictor(Thresholds(), n_queries=50, classes=[0, 1], random_state=0)
    old = skdp.PrivatePredictor(Thresholds(), planned_queries=50, classes=[0, 1],
                                random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new.fit(X, y)
    with pytest.warns(FutureWarning, match="renamed n_queries"):
        old.fit(X, y)
    assert old.n_teachers_ == new.n_teachers_ and old.thresholds_ == new.thresholds_
    with pytest.warns(FutureWarning):  # the deprecated name, when given, is the one used
        both = skdp.PrivatePredictor(Thresholds(), planned_queries=50, n_queries=10**6,
                                     classes=[0, 1], random_state=0).fit(X, y)
    assert both.thresholds_ == new.thresholds_


ONLINE = [skdp.SOAClassifier, skdp.DPSOAClassifier, skdp.AdaptivePrivateOnlineClassifier,
          skdp.BatchSanitizedOnlineClassifier, skdp.PrivateExpertsClassifier]


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_default_class_on_a_table_says_it_learns_the_feature_mean(cls):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200], y[:200]
    kw = {} if cls is skdp.SOAClassifier else {"classes": [0, 1], "random_state": 0}
    with pytest.warns(UserWarning, match=r"MEAN of all 30 features.*MeanThresholds\(bounds"):
        cls(**kw).fit(X, y)
    # an explicit choice is not second-guessed
    from skdp.hypotheses import MeanThresholds

    param = "experts" if cls is skdp.PrivateExpertsClassifier else "hypothesis_class"
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", category=skdp.PrivacyWarning)
        cls(**kw, **{param: MeanThresholds(bounds=(0.0, 100.0))}).fit(X, y)
