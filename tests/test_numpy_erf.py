"""NumPy has no erf: Lucid's array version (Cody's approximations) against ``math.erf``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lucid.backends.numpy_erf import erf

RNG = np.random.default_rng(7)
POINTS = np.concatenate([
    RNG.standard_normal(20000) * 3, np.linspace(-7.0, 7.0, 20001),
    np.logspace(-300, 1.5, 600), -np.logspace(-300, 1.5, 600),
    [0.0, 0.46875, -0.46875, 4.0, -4.0, 26.0, 27.0, 1e300, -1e300],
])


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-15), (np.float32, 5e-7),
                                         (np.float16, 1e-3)])
def test_matches_math_erf_to_the_last_places(dtype, rtol):
    with np.errstate(over="ignore"):  # 1e300 is inf in float16
        x = POINTS.astype(dtype)
    got = erf(x)
    want = np.array([math.erf(float(v)) for v in x])
    assert got.dtype == dtype
    finite = np.isfinite(x.astype(np.float64)) & (np.abs(want) > np.finfo(dtype).tiny)
    np.testing.assert_allclose(got[finite].astype(np.float64), want[finite], rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype)
    got = erf(x)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], [1.0, -1.0, 0.0, -0.0])
    assert np.signbit(got[4]) and not np.signbit(got[3])  # erf(-0) = -0, as math.erf
    with np.errstate(all="raise"):  # no warnings on the way
        erf(np.array([1e300, -1e300, 30.0, 1e-300], dtype=np.float64))


@pytest.mark.parametrize(("dtype", "want"), [(np.int64, np.float64), (np.int32, np.float64),
                                             (np.int16, np.float32), (np.int8, np.float16),
                                             (np.bool_, np.float16)])
def test_integers_give_the_float_numpys_ufuncs_give(dtype, want):
    """erf(1) of an int64 array is 0.8427 in float64 (as np.exp of it is a float64), not 0."""
    x = np.array([1, 0, 1]).astype(dtype)
    y = erf(x)
    assert y.dtype == want == np.exp(x).dtype
    np.testing.assert_allclose(y, [math.erf(1), 0.0, math.erf(1)], rtol=1e-3)


def test_lucid_erf_of_integers_is_a_float_on_both_devices():
    import lucid

    for device in ("cpu", "gpu"):
        y = lucid.erf(lucid.Tensor(np.array([1, -5]), device=device))
        assert y.dtype == lucid.Float64
        np.testing.assert_allclose(y.numpy(), [math.erf(1), math.erf(-5)], rtol=1e-6)
