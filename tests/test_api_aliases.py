"""Lucid 2.x's spellings kept as aliases: the same objects as the PyTorch/NumPy names."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn import init


@pytest.mark.parametrize("alias,name", [("subtract", "sub"), ("multiply", "mul"),
                                        ("divide", "div"), ("power", "pow")])
def test_arithmetic_aliases_are_the_same_functions(alias, name):
    assert getattr(lucid, alias) is getattr(lucid, name)
    a, b = lucid.Tensor([3.0, 4.0]), lucid.Tensor([2.0, 0.5])
    want = {"sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power}[name]
    np.testing.assert_allclose(getattr(lucid, alias)(a, b).numpy(), want(a.numpy(), b.numpy()))


def test_get_seed_reports_the_last_seed():
    state = lucid.random.get_state()
    try:
        lucid.random.seed(123)
        assert lucid.random.get_seed() == 123
        lucid.random.rand(3)  # drawing does not change it
        assert lucid.random.get_seed() == 123
        lucid.random.seed(None)
        assert lucid.random.get_seed() is None
        with pytest.raises((TypeError, ValueError)):
            lucid.random.seed(-1)
        assert lucid.random.get_seed() is None  # a refused seed changes nothing
    finally:
        lucid.random.set_state(state)


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "zeros", "ones",
                                  "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_normal"])
def test_init_names_without_underscore_are_aliases(name):
    assert getattr(init, name) is getattr(init, name + "_")
    assert name in init.__all__


def test_init_alias_fills_in_place_like_the_original():
    w1, w2 = nn.Linear(4, 3).weight, nn.Linear(4, 3).weight
    lucid.random.seed(7)
    init.kaiming_normal(w1)
    lucid.random.seed(7)
    init.kaiming_normal_(w2)
    np.testing.assert_array_equal(w1.numpy(), w2.numpy())
    assert init.zeros(w1) is w1 and not w1.numpy().any()


def test_split_int_is_the_piece_size_as_pytorch():
    x = lucid.arange(5)
    assert [p.tolist() for p in lucid.split(x, 2)] == [[0, 1], [2, 3], [4]]
    assert [p.tolist() for p in lucid.split(x, [1, 4])] == [[0], [1, 2, 3, 4]]
    # NumPy's meaning of an int (the number of pieces) is chunk's
    assert [p.tolist() for p in lucid.chunk(lucid.arange(6), 2)] == [[0, 1, 2], [3, 4, 5]]
    assert "np.split" in lucid.split.__doc__
