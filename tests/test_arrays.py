"""evaltool.arrays against numpy itself (the peer each helper stands in for)."""

import numpy as np
import pytest

from evaltool.arrays import Membership, pair_order


@pytest.mark.parametrize("count, high", [(1000, 50), (8000, 8_800_000), (10, 10 ** 12), (50_000, 1 << 20)])
def test_membership_is_isin_on_first_and_repeated_calls(count, high):
    rng = np.random.default_rng(count)
    keys = np.unique(rng.integers(0, high, count))
    member = Membership()
    for _ in range(2):  # the second call reads the kept table
        values = rng.integers(-5, high + 5, 3 * count)
        assert np.array_equal(member(values, keys), np.isin(values, keys))


def test_membership_rebuilds_for_other_keys():
    member = Membership()
    values = np.arange(10)
    assert member(values, np.array([1, 4])).nonzero()[0].tolist() == [1, 4]
    assert member(values, np.array([2, 4])).nonzero()[0].tolist() == [2, 4]
    assert member(values, np.array([2, 5])).nonzero()[0].tolist() == [2, 5]  # same length, other values
    assert not member(values, np.zeros(0, dtype=np.int64)).any()


def test_membership_in_slices_is_isin(monkeypatch):
    monkeypatch.setattr(Membership, "SLICE", 7)  # values looked up 7 at a time: many slices and a short last one
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 200, 40))
    values = rng.integers(-20, 220, 1000)
    assert np.array_equal(Membership()(values, keys), np.isin(values, keys))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_counts_in_slices_is_bincount(monkeypatch, dtype):
    from evaltool import arrays

    monkeypatch.setattr(arrays, "COUNT_SLICE", 5)
    values = np.random.default_rng(4).integers(0, 30, 103).astype(dtype)
    for length in (0, 30, 45):
        assert np.array_equal(arrays.counts(values, length), np.bincount(values, minlength=length))
    assert arrays.counts(np.zeros(0, dtype=dtype), 3).tolist() == [0, 0, 0]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_membership_of_non_negative_values_beyond_the_largest_key(monkeypatch, dtype):
    monkeypatch.setattr(Membership, "SLICE", 11)
    rng = np.random.default_rng(5)
    keys = np.unique(rng.integers(0, 100, 30))
    values = np.concatenate([rng.integers(0, 300, 500), [keys[-1], keys[-1] + 1, keys[0]]]).astype(dtype)
    assert np.array_equal(Membership()(values, keys), np.isin(values, keys))


@pytest.mark.parametrize("count, high", [(0, 1), (1, 1), (1000, 3), (20_000, 5000), (300, 1 << 40)])
def test_pair_order_is_a_stable_lexsort(count, high):
    """Repeated pairs keep their row order, as lexsort's; values too large for one integer key
    (here 2**40 squared) take lexsort itself."""
    rng = np.random.default_rng(count)
    major, minor = rng.integers(0, high, count), rng.integers(0, high, count)
    assert np.array_equal(pair_order(major, minor), np.lexsort((minor, major)))
    if high < 1 << 31:  # codes of 32 bits, as the readers make: the key is built in 64
        assert np.array_equal(pair_order(major.astype(np.int32), minor.astype(np.int32)), np.lexsort((minor, major)))
