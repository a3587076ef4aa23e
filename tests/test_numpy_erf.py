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
