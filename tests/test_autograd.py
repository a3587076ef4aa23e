"""Graph tests: the backward walk on diamonds, reuse, accumulation, deep chains, modes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.autograd import GradcheckError, grad, gradcheck
from lucid.engine.walk import topological_order


def test_diamond_dy_dx_is_2_plus_2e():
    # a = 2x feeds y along two paths: directly and through exp.  dy/dx = 2 + 2e^(2x).
    x = lucid.Tensor(0.5, requires_grad=True)
    a = 2 * x
    y = a + lucid.exp(a)
    y.backward()
    assert x.grad == pytest.approx(2 + 2 * math.e, rel=1e-12)
    assert abs(float(x.grad) - 7.437) < 1e-3
    assert a.grad is None  # intermediates are freed by default


def test_diamond_with_keep_grad_keeps_intermediates():
    x = lucid.Tensor(0.5, requires_grad=True)
    a = 2 * x
    e = lucid.exp(a)
    y = a + e
    y.backward(keep_grad=True)
    assert x.grad == pytest.approx(2 + 2 * math.e)
    assert a.grad == pytest.approx(1 + math.e)  # dy/da = 1 + e^a
    assert e.grad == pytest.approx(1.0)
    assert y.grad == pytest.approx(1.0)


def test_keep_grad_per_tensor():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.keep_grad = True
    g = h * 5
    (h * g).backward()  # y = 5h^2: dy/dh = 10h, dy/dx = 30h
    np.testing.assert_allclose(h.grad, 10 * h.numpy())
    assert g.grad is None  # only the tensor that asked keeps its gradient
    np.testing.assert_allclose(x.grad, 30 * h.numpy())


def test_reuse_x_times_x_visits_once():
    x = lucid.Tensor([1.5, -2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * x.numpy())
    order = topological_order(lucid.exp(x * x))
    assert len(order) == len(set(map(id, order))) == 3


def test_topological_order_puts_each_node_after_its_users():
    x = lucid.Tensor(1.0, requires_grad=True)
    b = x * 2
    a = b + 1  # a uses b
    r = a * b  # r uses a and b: b must come after a
    order = topological_order(r)
    assert [id(t) for t in order] == [id(r), id(a), id(b), id(x)]
    r2 = b * a  # same graph, inputs listed the other way round
    order2 = topological_order(r2)
    assert order2.index(a) < order2.index(b)


def test_walk_visits_ops_latest_first_then_leaves_and_matches_topological_order():
    w = lucid.Tensor([0.5, -1.0], requires_grad=True)
    b = lucid.Tensor(0.25, requires_grad=True)
    c = lucid.Tensor([2.0, 3.0])  # needs no gradient: never visited
    u = w * c  # made first ...
    v = lucid.exp(b) + w  # ... then a branch that reuses w
    r = (u * v).sum()
    visited = []
    for name, t in (("w", w), ("b", b), ("u", u), ("v", v), ("r", r)):
        t.register_hook(lambda g, name=name: visited.append(name))
    expected = topological_order(r)
    ops = [t for t in expected if t._op is not None]
    assert [t._op.seq for t in ops] == sorted((t._op.seq for t in ops), reverse=True)
    assert [id(t) for t in expected[-2:]] in ([id(w), id(b)], [id(b), id(w)])  # leaves last
    assert c not in set(expected)
    r.backward()
    names = {id(t): n for n, t in (("w", w), ("b", b), ("u", u), ("v", v), ("r", r))}
    assert visited == [names[id(t)] for t in expected if id(t) in names]
    np.testing.assert_allclose(w.grad, c.numpy() * v.numpy() + u.numpy())
    np.testing.assert_allclose(b.grad, np.sum(u.numpy() * np.exp(0.25)))


def test_backward_into_a_released_graph_touches_no_leaf():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = lucid.exp(x)
    y.sum().backward()
    x.grad = None
    z = y * 3  # a new op on top of the released exp
    with pytest.raises(RuntimeError, match="Exp: its graph was already released"):
        z.backward()
    assert x.grad is None and x._g is None and y._g is None


def test_accumulation_across_two_backward_calls():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    (x * 3).backward()
    (x * 4).backward()
    np.testing.assert_allclose(x.grad, [7.0, 7.0])


def test_backward_seed_is_ones_like_sum():
    x = lucid.Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    (x * x).backward()
    np.testing.assert_allclose(x.grad, 2 * x.numpy())


def test_explicit_grad_seed_and_its_shape_check():
    x = lucid.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.backward(grad=np.array([1.0, 0.0, -1.0]))
    np.testing.assert_allclose(x.grad, [2.0, 0.0, -2.0])
    y2 = x * 2
    with pytest.raises(ValueError, match=r"grad has shape \(2,\) but the tensor has shape \(3,\)"):
        y2.backward(grad=np.ones(2))


def test_chain_of_100k_nodes_backward_without_recursion():
    x = lucid.Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1e-6
    y.backward()
    assert x.grad == pytest.approx(1.0)
    del y  # deallocating a 100k-deep chain must not overflow the C stack either


def test_second_backward_through_released_graph_raises():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = lucid.exp(x)
    y.backward()
    msg = r"Exp: its graph was already released.*retain_graph=True"
    with pytest.raises(RuntimeError, match=msg):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = lucid.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * np.exp([1.0, 2.0]))


def test_backward_on_tensor_without_grad_raises():
    x = lucid.Tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"does not require grad.*requires_grad=True"):
        (x * 2).backward()


def test_leaf_backward_sets_its_own_grad():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    x.backward()
    np.testing.assert_allclose(x.grad, [1.0, 1.0])


def test_requires_grad_propagates():
    a = lucid.Tensor([1.0], requires_grad=True)
    b = lucid.Tensor([2.0])
    assert (a + b).requires_grad
    assert not (b + b).requires_grad
    assert (b + b)._op is None  # nothing recorded when no input needs a gradient
    assert not (a > b).requires_grad  # comparisons carry no gradient


def test_no_grad_records_nothing_and_works_as_decorator():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    with lucid.no_grad():
        assert not lucid.grad_enabled()
        y = lucid.exp(x) * 2
    assert lucid.grad_enabled()
    assert not y.requires_grad and y._op is None and y._prev == ()

    @lucid.no_grad()
    def f(t):
        return t * 3

    z = f(x)
    assert z._op is None and not z.requires_grad
    assert lucid.grad_enabled()


def test_no_grad_and_enable_grad_decorate_without_parentheses():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)

    @lucid.no_grad
    def f(t):
        assert not lucid.grad_enabled()
        return t * 3

    @lucid.enable_grad
    def g(t):
        return t * 3

    assert f.__name__ == "f"
    z = f(x)
    assert z._op is None and not z.requires_grad and lucid.grad_enabled()
    with lucid.no_grad():
        assert g(x).requires_grad
        assert not lucid.grad_enabled()
    with pytest.raises(TypeError, match=r"^no_grad\(\) takes no arguments, got 3; use `with"):
        lucid.no_grad(3)


def test_no_grad_restores_mode_after_an_exception():
    with pytest.raises(ZeroDivisionError), lucid.no_grad():
        raise ZeroDivisionError
    assert lucid.grad_enabled()


def test_gradients_match_dtype_of_the_input():
    x = lucid.Tensor(np.ones(3, np.float32), requires_grad=True)
    y = x * lucid.Tensor(np.full(3, 2.0))  # float64 operand: result float64
    assert y.dtype == lucid.Float64
    y.backward()
    assert x.grad.dtype == np.float32


def test_broadcast_gradient_is_summed_to_the_input_shape():
    a = lucid.Tensor(np.ones((3, 1, 4)), requires_grad=True)
    b = lucid.Tensor(np.ones((2, 4)), requires_grad=True)
    (a * b).backward()
    assert a.grad.shape == (3, 1, 4) and b.grad.shape == (2, 4)
    np.testing.assert_allclose(a.grad, np.full((3, 1, 4), 2.0))
    np.testing.assert_allclose(b.grad, np.full((2, 4), 3.0))


def test_a_backward_rule_with_a_wrong_shape_is_an_error_not_repaired():
    from lucid.ops.base import Op, apply

    class Broken(Op):
        """y = x; a deliberately wrong rule returning a (2,)-shaped gradient."""

        def forward(self, xp, x):
            return x * 1

        def backward(self, xp, g):
            return (g.sum(axis=0),)

        def forward_flops(self, out, x):
            return 0

        def backward_flops(self, out, x):
            return 0

    x = lucid.Tensor(np.ones((3, 2)), requires_grad=True)
    y = apply(Broken(), x)
    with pytest.raises(RuntimeError, match=r"Broken.backward returned a gradient of shape \(2,\) "
                                           r"for an input of shape \(3,2\)"):
        y.backward()


def test_grads_of_two_leaves_never_share_an_array():
    a = lucid.Tensor([1.0, 2.0], requires_grad=True)
    b = lucid.Tensor([3.0, 4.0], requires_grad=True)
    (a + b).backward()
    a.grad *= 0  # an in-place change to one .grad ...
    np.testing.assert_allclose(b.grad, [1.0, 1.0])  # ... leaves the other alone


# -- hooks ---------------------------------------------------------------------------------


def test_hook_sees_the_gradient_and_can_replace_it():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    remove = x.register_hook(lambda g: g * 10)
    (h * h).backward()
    np.testing.assert_allclose(seen[0], 2 * h.numpy())
    np.testing.assert_allclose(x.grad, 10 * 2 * 2 * h.numpy())
    remove()
    x.grad = None
    (x * 1).backward()
    np.testing.assert_allclose(x.grad, [1.0, 1.0])


def test_hook_returning_wrong_shape_raises():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: lucid.Tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"returned a gradient of shape \(1,\)"):
        (x * 2).backward()


# -- in-place ops and the version counter ------------------------------------------------


def test_version_counter_error_names_op_and_versions():
    w = lucid.Tensor([1.0, 2.0], requires_grad=True)
    x = lucid.Tensor([3.0, 4.0])
    y = w * x  # Mul saves x for dL/dw = x
    x += 1
    assert x._version == 1
    with pytest.raises(RuntimeError, match=r"backward through Mul: input 1 .*version 0 at "
                                           r"forward, 1 now"):
        y.backward()


def test_inplace_on_a_value_the_op_does_not_save_is_fine():
    w = lucid.Tensor([1.0, 2.0], requires_grad=True)
    x = lucid.Tensor([3.0, 4.0])
    y = w + x  # Add saves nothing
    x *= 2
    y.backward()
    np.testing.assert_allclose(w.grad, [1.0, 1.0])


def _where(x):
    cond = lucid.Tensor([True, False, True])
    return lucid.where(cond, x, 0.0), cond, "Where: input 2"


def _masked_fill(x):
    mask = lucid.Tensor([False, True, False])
    return x.masked_fill(mask, 0.0), mask, "MaskedFill: input 1"


def _cross_entropy(x):
    target = lucid.Tensor([1, 0])
    return lucid.cross_entropy(lucid.stack([x, 2 * x]), target), target, "CrossEntropy: input 1"


@pytest.mark.parametrize("build", [_where, _masked_fill, _cross_entropy],
                         ids=["where-cond", "masked_fill-mask", "cross_entropy-target"])
def test_inputs_kept_by_an_op_are_version_checked(build):
    """Ops that keep a constant input (a condition, a mask, class targets) declare it, so an
    in-place change to it between forward and backward is caught, not silently used."""
    x = lucid.Tensor([0.5, -1.0, 2.0], requires_grad=True)
    y, kept, where = build(x)
    kept[0] = kept[1]
    with pytest.raises(RuntimeError, match=rf"backward through {where} .*modified in place"):
        y.sum().backward()


def test_max_pool_input_is_version_checked():
    x = lucid.Tensor([[[1.0, 3.0, 2.0, 5.0]]], requires_grad=True)
    h = x * 1.0
    y = lucid.max_pool_nd(h, 1, 2)
    with lucid.no_grad():
        h += 10.0
    with pytest.raises(RuntimeError, match=r"backward through MaxPool: input 0 .*modified"):
        y.sum().backward()


def test_where_branches_are_not_version_checked():
    # where reads only the condition in backward: changing a branch afterwards is fine
    x = lucid.Tensor([0.5, -1.0], requires_grad=True)
    b = lucid.Tensor([7.0, 8.0])
    y = lucid.where(x > 0, x, b)
    b += 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [1.0, 0.0])


def test_inplace_on_saved_output_is_detected():
    x = lucid.Tensor([0.1, 0.2], requires_grad=True)
    y = lucid.exp(x)
    with lucid.no_grad():
        y += 1
    with pytest.raises(RuntimeError, match=r"Exp: its output .*modified in place"):
        y.backward()


def test_inplace_refused_on_tensor_requiring_grad():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"__iadd__: a leaf Variable that requires grad is "
                                           r"being used in an in-place operation.*no_grad.*"
                                           r"x = x \+ y"):
        x += 1
    with lucid.no_grad():
        x -= 1  # what an optimizer does
    np.testing.assert_allclose(x.numpy(), [0.0, 1.0])


# -- functional grad and gradcheck ------------------------------------------------------


def test_functional_grad_leaves_dot_grad_untouched():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = lucid.Tensor([3.0, 5.0], requires_grad=True)
    z = x * y + lucid.sin(x)
    gx, gy = grad(z, [x, y])
    np.testing.assert_allclose(gx.numpy(), [3.0 + np.cos(1.0), 5.0 + np.cos(2.0)])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])
    assert x.grad is None and y.grad is None


def test_functional_grad_unused_input():
    x = lucid.Tensor([1.0], requires_grad=True)
    u = lucid.Tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"input 1 .* is not used"):
        grad(x * 2, [x, u])
    assert grad(x * 2, [x, u], allow_unused=True)[1] is None


def test_gradcheck_catches_a_wrong_rule():
    from lucid.ops.base import Op, apply

    class BadSin(Op):
        """y = sin x with a wrong derivative (sin instead of cos)."""

        def forward(self, xp, x):
            self.x = x
            return xp.sin(x)

        def backward(self, xp, g):
            return (g * xp.sin(self.x),)

        def forward_flops(self, out, x):
            return out.size

        def backward_flops(self, out, x):
            return 2 * out.size

    x = lucid.Tensor(np.linspace(0.1, 1.0, 4), requires_grad=True)
    with pytest.raises(GradcheckError, match=r"gradient of input 0 \(shape \(4,\)\) is wrong"):
        gradcheck(lambda t: apply(BadSin(), t), x)
    assert gradcheck(lucid.sin, x)


def test_gradcheck_requires_float64():
    x = lucid.Tensor(np.ones(3, np.float32), requires_grad=True)
    with pytest.raises(ValueError, match=r"input 0 has dtype Float32; finite differences with "
                                         r"eps=1e-06 need float64 values and arithmetic"):
        gradcheck(lucid.exp, x)
    # a coarse step makes a float32 check meaningful (and allowed)
    assert gradcheck(lucid.exp, x, eps=1e-3, atol=1e-3, rtol=1e-2)


def test_leaf_grads_are_writable_even_when_the_rule_returned_a_view():
    x = lucid.Tensor(np.ones((2, 3)), requires_grad=True)
    x.sum().backward()  # Sum's rule broadcasts g: a read-only view
    x.grad *= 2  # gradient clipping and optimizers update .grad in place
    np.testing.assert_allclose(x.grad, np.full((2, 3), 2.0))


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("slices_first", [True, False])
def test_slice_gradients_are_added_into_place_without_touching_shared_arrays(device,
                                                                             slices_first):
    """x[t] in a loop over t: each slice's gradient is added into one array in place.  When
    a whole gradient arrived first it may be the very array an add passed to its other input
    as well (here w's), so it must be copied before a slice is added into it."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    rng = np.random.default_rng(3)
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    x = lucid.Tensor(xv, requires_grad=True, dtype=lucid.Float64, device=device)
    w = lucid.Tensor(wv, requires_grad=True, dtype=lucid.Float64, device=device)
    a = x * 2.0  # not a leaf: its gradient is assembled by the walk
    if slices_first:  # whole gradient reaches a first, then the slices
        parts = [a[t] * (t + 1.0) for t in range(4)] + [a.narrow(1, 1, 2) * 5.0]
        out = a + w
    else:  # slices first, then the whole gradient
        out = a + w
        parts = [a[t] * (t + 1.0) for t in range(4)] + [a.narrow(1, 1, 2) * 5.0]
    loss = out.sum() + sum(p.sum() for p in parts)
    loss.backward()
    # dL/da = 1 (from out) + (t + 1) on row t + 5 on columns 1..2; dL/dx = 2 dL/da
    da = np.ones((4, 3)) + np.arange(1.0, 5.0)[:, None]
    da[:, 1:3] += 5.0
    np.testing.assert_allclose(np.asarray(x.grad), 2 * da, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(w.grad), np.ones((4, 3)))  # untouched by the slices


# -- a weight used at every step: its gradient gathered as factors ----------------------------

def _lstm_steps(w, xw, state, before=None, after=None):
    """Three LSTM steps sharing ``w`` (their W_hh gradients arrive as factors), with w also
    used by ``before`` (made before the steps, so its gradient arrives last) and ``after``."""
    from lucid.ops.base import apply
    from lucid.ops.recurrent import LSTMStep

    loss = before(w) if before else 0.0
    for t in range(3):
        state = apply(LSTMStep(t), xw, w, state)
    loss = loss + (state * state).sum()
    return loss + after(w) if after else loss


USES = {  # another use of w besides the steps: a whole gradient, a slice, none
    "none": None,
    "whole": lambda w: (w * w).sum() * 0.5,
    "slice": lambda w: (w[1:3] * 3.0).sum(),
}


@pytest.mark.parametrize("use", sorted(USES))
@pytest.mark.parametrize("made", ["before", "after"])
def test_a_weight_shared_by_steps_gets_the_sum_of_its_factors_and_other_gradients(use, made):
    rng = np.random.default_rng(5)
    xw = lucid.Tensor(rng.standard_normal((3, 2, 8)), requires_grad=True)
    state = lucid.Tensor(rng.standard_normal((2, 2, 2)), requires_grad=True)
    w = lucid.Tensor(rng.standard_normal((8, 2)), requires_grad=True)
    other = {made: USES[use]}
    assert gradcheck(lambda w_: _lstm_steps(w_, xw, state, **other), w)
    assert gradcheck(lambda w_: _lstm_steps(w_ * 1.0, xw, state, **other), w)  # not a leaf


def test_hooks_capture_and_observers_see_a_factored_gradient_as_one_array():
    from lucid.engine.walk import run_backward

    rng = np.random.default_rng(6)
    xw = lucid.Tensor(rng.standard_normal((3, 2, 8)))
    state = lucid.Tensor(rng.standard_normal((2, 2, 2)))
    w = lucid.Tensor(rng.standard_normal((8, 2)), requires_grad=True)
    _lstm_steps(w, xw, state).backward()
    want = np.array(w.grad)
    (by_grad,) = grad(_lstm_steps(w, xw, state), [w])
    np.testing.assert_allclose(np.asarray(by_grad), want, rtol=1e-12)
    seen = []
    w.register_hook(lambda g: seen.append(g))
    observed = []
    run_backward(_lstm_steps(w, xw, state), np.ones(()),
                 observe=lambda node, grads: observed.extend(grads))
    np.testing.assert_allclose(np.asarray(seen[0].numpy()), want, rtol=1e-12)  # the product
    assert all(g is None or isinstance(g, np.ndarray) for g in observed)


def test_a_factored_gradient_on_gpu_equals_cpus():
    pytest.importorskip("mlx.core")
    rng = np.random.default_rng(7)
    arrays = rng.standard_normal((3, 2, 8)), rng.standard_normal((2, 2, 2)), \
        rng.standard_normal((8, 2))
    grads = {}
    for device in ("cpu", "gpu"):
        xw, state, w = (lucid.Tensor(a, dtype=lucid.Float32, device=device, requires_grad=True)
                        for a in arrays)
        _lstm_steps(w, xw, state, after=USES["whole"]).backward()
        grads[device] = [np.asarray(t.grad.numpy() if hasattr(t.grad, "numpy") else t.grad)
                         for t in (xw, state, w)]
    for a, b in zip(grads["cpu"], grads["gpu"]):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_a_0d_leaf_gets_a_0d_array_as_its_gradient_not_a_numpy_scalar():
    # NumPy arithmetic on 0-d arrays gives scalars (np.float64), which have no in-place
    # update: an optimizer step on a 0-d Parameter (PyTorch's nn.Parameter(torch.randn(())))
    # needs a real array.
    w = lucid.Tensor(1.5, requires_grad=True)
    (w * w).backward()
    assert isinstance(w.grad, np.ndarray) and w.grad.shape == ()
    assert float(w.grad) == 3.0


@pytest.mark.parametrize("before, after", [
    ((700, 10, 10), (700, 10, 100)),  # Python's defaults: full passes over a graph 10x rarer
    ((500, 5, 5), (500, 5, 5)),       # a program's own thresholds are kept
])
def test_import_defers_only_the_default_full_collections(before, after):
    import subprocess
    import sys

    code = (f"import gc; gc.set_threshold{before}; import lucid; "
            "x = lucid.Tensor([1.0, 2.0], requires_grad=True); (x * x).sum().backward(); "
            "print(gc.get_threshold(), gc.isenabled(), x.grad.tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == f"{after} True [2.0, 4.0]"


def test_backward_leaves_the_collector_as_it_found_it():
    import gc

    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    gc.disable()
    try:
        (x * 3).sum().backward()
        assert not gc.isenabled()  # a program's gc.disable() holds through backward
    finally:
        gc.enable()
    (x * 3).sum().backward()
    assert gc.isenabled() and x.grad.tolist() == [6.0, 6.0]
