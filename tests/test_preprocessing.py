import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.preprocessing import PublicBoundsBinarizer, PublicBoundsClipper


@parametrize_with_checks(
    [PublicBoundsClipper(), PublicBoundsClipper(lower=-5, upper=5, scale=False),
     PublicBoundsBinarizer(), PublicBoundsBinarizer(bounds=(-3, 3), n_thresholds=3)]
)
# The checks fit on tiny or unscaled data on purpose: the learners' "too few rows",
# "no public bounds" and "cannot learn within n_rounds" UserWarnings are expected
# there (hundreds per run); other categories (deprecations, RuntimeWarning) still show.
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_fit_learns_nothing_from_values():
    a = PublicBoundsClipper(0, 10).fit(np.zeros((3, 2)))
    b = PublicBoundsClipper(0, 10).fit(np.full((3, 2), 1e9))
    X = np.array([[3.0, 12.0]])
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    c = PublicBoundsBinarizer(bounds=(0, 1), n_thresholds=4).fit(np.zeros((2, 2)))
    d = PublicBoundsBinarizer(bounds=(0, 1), n_thresholds=4).fit(np.ones((5, 2)) * 7)
    np.testing.assert_array_equal(c.transform(X), d.transform(X))


def test_clipper_maps_bounds_to_unit_interval():
    clip = PublicBoundsClipper(lower=[0, -2], upper=[10, 2])
    out = clip.fit_transform(np.array([[0.0, -2.0], [10.0, 2.0], [5.0, 0.0], [99.0, -99.0]]))
    np.testing.assert_allclose(out, [[-1, -1], [1, 1], [0, 0], [1, -1]])


def test_binarizer_bounds_grid_and_names():
    b = PublicBoundsBinarizer(bounds=[[0, 4], [10, 20], [0, 1]], n_thresholds=3)
    b.fit(np.zeros((1, 3)))
    np.testing.assert_allclose(b.thresholds_[0], [1, 2, 3])
    np.testing.assert_allclose(b.thresholds_[1], [12.5, 15, 17.5])
    assert list(b.get_feature_names_out(["a", "b", "c"]))[:2] == ["a > 1", "a > 2"]


def test_binarizer_in_pipeline_with_dataframe_names():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"age": [20.0, 50.0], "income": [1.0, 3.0]})
    pipe = make_pipeline(PublicBoundsBinarizer(thresholds=[[30, 60], [2]]))
    assert pipe.fit_transform(X).tolist() == [[0, 0, 0], [1, 0, 1]]
    assert list(pipe.get_feature_names_out()) == ["age > 30", "age > 60", "income > 2"]


@pytest.mark.parametrize(
    "make",
    [lambda: PublicBoundsBinarizer(thresholds=0.5, bounds=(0, 1)),
     lambda: PublicBoundsBinarizer(thresholds=[[1]], bounds=(0, 1)),
     lambda: PublicBoundsBinarizer(bounds=[[0, 5], [10, 20]]),  # (2, 2): two readings
     lambda: PublicBoundsClipper(lower=0),
     lambda: PublicBoundsBinarizer(thresholds=[[1]]),  # 1 entry for 2 features
     lambda: PublicBoundsBinarizer(thresholds=[[np.nan], [1]]),
     lambda: PublicBoundsBinarizer(bounds=(1, 0)),
     lambda: PublicBoundsBinarizer(bounds=[[0, 1, 2]]),
     lambda: PublicBoundsClipper(lower=1, upper=1),
     lambda: PublicBoundsClipper(lower=[0, 0, 0], upper=1),
     lambda: PublicBoundsClipper(lower=np.nan)],
)
def test_bad_bounds_have_clear_errors(make):
    with pytest.raises(ValueError):
        make().fit(np.zeros((3, 2)))


def test_nan_input_rejected():
    with pytest.raises(ValueError):
        PublicBoundsClipper().fit(np.array([[np.nan, 1.0]]))


def test_default_binarizer_cuts_at_zero_like_sklearn():
    X01 = np.array([[0, 1, 1], [1, 0, 0]])
    np.testing.assert_array_equal(PublicBoundsBinarizer().fit_transform(X01), X01)
    X = np.array([[-2.0, 0.5]])
    np.testing.assert_array_equal(PublicBoundsBinarizer(thresholds=1.0).fit_transform(X),
                                  [[0, 0]])


def test_binarizer_reads_diffprivlib_bounds_form():
    lower, upper = np.array([5.0, 0.0, 10.0]), np.array([150.0, 1.0, 20.0])
    ours = PublicBoundsBinarizer(bounds=np.column_stack([lower, upper])).fit(np.zeros((1, 3)))
    theirs = PublicBoundsBinarizer(bounds=(lower, upper)).fit(np.zeros((1, 3)))
    for a, b in zip(ours.thresholds_, theirs.thresholds_, strict=True):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(theirs.thresholds_[0], [77.5])


def test_binarizer_ambiguous_bounds_message_names_the_fix():
    with pytest.raises(ValueError, match=r"ambiguous.*thresholds="):
        PublicBoundsBinarizer(bounds=([5, 150], [50, 200])).fit(np.zeros((1, 2)))
    # Only one reading has low < high for both features: it is taken.
    lower, upper = [5, 50], [150, 106]  # diffprivlib's form; as pairs, (150, 106) is empty
    b = PublicBoundsBinarizer(bounds=(lower, upper)).fit(np.zeros((1, 2)))
    np.testing.assert_allclose(np.concatenate(b.thresholds_), [77.5, 78])


@pytest.mark.parametrize("X", [np.zeros((2, 2)), np.full((2, 2), 1e6)])
def test_clipper_without_bounds_always_warns(X):
    # The warning depends on the parameters only, never on the data.
    with pytest.warns(UserWarning, match="no public bounds"):
        PublicBoundsClipper().fit(X)
