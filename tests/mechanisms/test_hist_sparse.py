"""HistSparse (Golowich & Livni Alg. 2): switching, cutoff, budget split, batching, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.exceptions import MechanismHaltedError
from skdp.mechanisms import HistSparse

K = 200


def _hs(**kw):
    params = dict(epsilon=4.0, delta=1e-3, n_items=K, eta=0.5, max_switches=3, initial=0,
                  random_state=0)
    params.update(kw)
    return HistSparse(**params)


def test_budget_split_sums_to_epsilon_and_delta():
    hs = _hs(epsilon=3.0, delta=1e-4, max_switches=5)
    assert hs.svt_epsilon + hs.max_switches * hs.hist_epsilon == pytest.approx(3.0)
    assert hs.max_switches * hs.hist_delta == pytest.approx(1e-4)
    assert hs.svt_epsilon == pytest.approx(2.0)  # the paper's 2:1 ratio
    assert hs.threshold == pytest.approx(1 - 3 * 0.5 / 32)
    assert hs._svt.sensitivity == pytest.approx(1 / K)  # one of k positions changes


def test_stays_while_frequent_and_switches_to_the_mode():
    hs = _hs()
    assert hs.process(np.zeros(K, dtype=int), n_rounds=100) == (100, False)
    mixed = np.r_[np.full(150, 7), np.full(50, 3)]
    answered, switched = hs.process(mixed, n_rounds=100)
    assert switched and answered >= 1 and hs.current == 7 and hs.n_switches == 1
    assert hs.switch_rounds == [100 + answered - 1] and hs.n_rounds == 100 + answered
    assert hs.process(mixed, n_rounds=50) == (50, False)  # 7 is frequent again


def test_ignored_item_is_never_released_and_nothing_released_keeps_current():
    hs = _hs(ignore=-1)
    _, switched = hs.process(np.full(K, -1), n_rounds=10)
    assert switched and hs.current == 0  # only the ignored item was frequent
    spread = np.arange(K)  # every count is 1: a stable histogram releases nothing
    hs.process(spread, n_rounds=10)
    assert hs.current == 0


def test_generic_hashable_items():
    hs = _hs(initial="a")
    data = ["b"] * 150 + ["c"] * 50
    hs.process(data, n_rounds=20)
    assert hs.current == "b"


def test_cutoff_halts():
    hs = _hs(max_switches=2)
    for item in (1, 2):
        assert hs.process(np.full(K, item), n_rounds=50)[1]
    assert hs.halted and hs.n_switches == 2
    with pytest.raises(MechanismHaltedError, match="cutoff of 2 switches"):
        hs.process(np.full(K, 3))


def test_ties_are_broken_at_random():
    data = np.r_[np.full(100, 1), np.full(100, 2)]
    picks = set()
    for seed in range(40):
        hs = _hs(random_state=seed, eta=0.25)
        hs.process(data, n_rounds=20)
        picks.add(hs.current)
    assert picks == {1, 2}


@given(st.lists(st.integers(1, 40), min_size=1, max_size=8), st.integers(0, 2**31))
def test_batching_does_not_change_the_answers(sizes, seed):
    """Rounds with the same list in one call or many: the same transcript (same seed)."""
    rng = np.random.default_rng(seed)
    lists = [rng.choice(4, size=K, p=[0.7, 0.1, 0.1, 0.1]) if i % 2 else
             np.full(K, int(rng.integers(4))) for i in range(len(sizes))]
    one, many = _hs(random_state=seed, max_switches=4), _hs(random_state=seed, max_switches=4)
    for data, n in zip(lists, sizes, strict=True):
        left = n
        while left and not one.halted:
            done, _ = one.process(data, left)
            left -= done
        left = n
        while left and not many.halted:
            done, _ = many.process(data, 1)
            left -= done
    assert one.switch_rounds == many.switch_rounds and one.current == many.current


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(delta=0.0), "delta > 0"),
        (dict(delta=1.5), "delta"),
        (dict(eta=0.0), "eta"),
        (dict(eta=1.5), "eta"),
        (dict(eta=True), "eta"),
        (dict(n_items=0), "n_items"),
        (dict(max_switches=0), "max_switches"),
        (dict(svt_share=1.0), "svt_share"),
    ],
)
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        _hs(**kw)


def test_bad_lists():
    hs = _hs()
    with pytest.raises(ValueError, match="n_items=200"):
        hs.process(np.zeros(K - 1))
    with pytest.raises(ValueError, match="n_items=200"):
        hs.process(np.zeros((K, 1)))
    with pytest.raises(ValueError, match="n_rounds"):
        hs.process(np.zeros(K), n_rounds=-1)
    assert hs.n_rounds == 0
