"""Honest units: MACs only for multiply-adds, FLOPs for the rest, and backward counts only the
gradients an op's rule actually computes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lucid
from lucid.cost import Cost, op_cost, total_cost
from lucid.engine.walk import run_backward
from tests.specs import ALL_SPECS

# Every spec row with a FLOPs hand count whose op takes two or more float inputs.
MULTI = [(s, f) for s in ALL_SPECS for f in s.flops if s.grad
         and sum(np.issubdtype(a.dtype, np.floating) for a in f.inputs) >= 2]


def _run(spec, arrays, wanted):
    """Forward under count_flops with only the inputs in ``wanted`` requiring grad; the op's
    output node and what its backward rule returned for each input."""
    inputs = [lucid.Tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]
    with lucid.count_flops():
        out = spec.fn(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    seen = {}

    def observe(node, grads):
        if node is out:
            seen["grads"] = grads
            seen["g"] = node_g[0]

    node_g = [np.ones(out.shape)]
    if out.requires_grad:
        run_backward(out, node_g[0], observe=observe)
    return out, seen


def test_multi_input_rows_exist():
    names = {s.name for s, _ in MULTI}
    assert {"mul", "div", "sub", "pow", "maximum", "where", "matmul", "linear"} <= names


@pytest.mark.parametrize("spec,case", MULTI,
                         ids=[f"{s.id}-{k}" for k, (s, _) in enumerate(MULTI)])
def test_backward_computes_and_counts_only_the_wanted_gradients(spec, case):
    floats = [i for i, a in enumerate(case.inputs) if np.issubdtype(a.dtype, np.floating)]
    full, _ = _run(spec, case.inputs, set(floats))
    assert full._op.flops_bwd == case.backward
    for k in range(1, len(floats)):
        for wanted in itertools.combinations(floats, k):
            out, seen = _run(spec, case.inputs, set(wanted))
            if not out.requires_grad:  # (an output of several that needs none of these)
                continue
            op = out._op
            for parent, got in zip(out._prev, seen["grads"]):
                if not parent.requires_grad:  # no gradient built (g or a view of it: no work)
                    assert got is None or np.shares_memory(got, seen["g"]), (spec.name, wanted)
            assert 0 <= op.flops_bwd <= full._op.flops_bwd, (spec.name, wanted)


def _bwd(fn, *arrays, wanted):
    inputs = [lucid.Tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]
    with lucid.count_flops():
        out = fn(*inputs)
    return out._op.flops_bwd


A, B = np.ones((3, 4)), np.full((4,), 2.0)  # b broadcast over 3 rows: its sum costs 12 - 4


@pytest.mark.parametrize("fn,only_a,only_b,both", [
    (lucid.mul, 12, 12 + 8, 24 + 8),        # g*b | g*a and its sum down | both
    (lucid.sub, 0, 12 + 8, 12 + 8),         # g passed on | -g and its sum | both
    (lucid.add, 0, 8, 8),
    (lucid.div, 12, 48 + 8, 48 + 8),        # g/b | (g/b) then three more | g/b is shared
    (lucid.maximum, 60, 72 + 8, 84 + 8),    # the share (4 per element) is built either way
])
def test_binary_backward_hand_counts_per_wanted_input(fn, only_a, only_b, both):
    assert _bwd(fn, A, B, wanted={0}) == only_a
    assert _bwd(fn, A, B, wanted={1}) == only_b
    assert _bwd(fn, A, B, wanted={0, 1}) == both


def test_matmul_and_linear_backward_count_each_operand_once():
    x, w = np.ones((2, 3)), np.ones((4, 3))
    assert _bwd(lambda a, b: a @ b.T, x, w, wanted={0}) == 24
    assert _bwd(lambda a, b: a @ b.T, x, w, wanted={0, 1}) == 48
    bias = np.ones(4)
    assert _bwd(lucid.nn.functional.linear, x, w, bias, wanted={1}) == 24
    assert _bwd(lucid.nn.functional.linear, x, w, bias, wanted={0, 1, 2}) == 48 + 4


def test_units_macs_for_products_flops_for_the_rest():
    x = lucid.Tensor(np.ones((2, 3)), requires_grad=True)
    w = lucid.Tensor(np.ones((4, 3)), requires_grad=True)
    b = lucid.Tensor(np.ones(4), requires_grad=True)
    with lucid.count_flops():
        y = lucid.nn.functional.linear(x, w, b)   # 24 multiply-adds + 8 bias adds
        z = lucid.tanh(y)                          # 8 FLOPs
        m = x @ w.T                                # 24 MACs
    assert op_cost(y._op) == Cost(macs=24, flops=8)
    assert op_cost(y._op, backward=True) == Cost(macs=48, flops=4)
    assert op_cost(z._op) == Cost(0, 8)
    assert op_cost(m._op) == Cost(24, 0)
    assert total_cost([y._op, z._op]) == Cost(24, 16)
    assert total_cost([y._op, z._op]).text() == "24 MACs + 16 FLOPs"
    assert total_cost([y._op, z._op]).text("FLOPs") == "64 FLOPs"
    assert Cost(0, 1).text() == "1 FLOP" and Cost(1, 0).text() == "1 MAC"
    assert Cost().text() == "0 FLOPs"
    # the seed's single number is unchanged: MACs and FLOPs added as they are
    assert z.flops == 24 + 8 + 8
    with pytest.raises(ValueError, match=r"Cost.text: the unit must be 'MACs'.*got 'GFLOPs'"):
        Cost(1, 1).text("GFLOPs")


def test_uncounted_graph_has_no_cost():
    x = lucid.Tensor(np.ones(3), requires_grad=True)
    y = lucid.exp(x)
    assert op_cost(y._op) is None
    assert total_cost([y._op]) == Cost()


def test_gpu_counts_match_cpu():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    for device in ("cpu", "gpu"):
        a = lucid.Tensor(x, requires_grad=True).to(device)
        w = lucid.Tensor(np.ones((5, 4)), requires_grad=False).to(device)
        with lucid.count_flops():
            y = lucid.nn.functional.linear(a, w) * 2.0
        assert op_cost(y._prev[0]._op, backward=True) == Cost(60, 0), device


def test_summarize_draw_and_magic_agree_on_resnet_18_stages():
    from lucid.models import summarize
    from lucid.models.imgclf import resnet_18
    from lucid_viz import draw
    from lucid_viz.magic import count_source

    lucid.random.seed(0)
    model = resnet_18(num_classes=10).eval()
    x = lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32)
    summary = summarize(model, (1, 3, 32, 32), print_summary=False)
    dot = draw(model, x, depth=1).dot()
    report, _ = count_source("model(x)", {"model": model, "x": x})
    magic = {r.path: r.forward for r in report.modules}
    for stage in ("layer1", "layer2", "layer3", "layer4"):
        box = dot[dot.index(f'"m:{stage}" [label="'):]
        label = box[:box.index('",')]
        total = summary.modules[stage]
        assert total.text() in label, (stage, label)
        assert magic[f"model.{stage}"] == total
        assert total.macs > 0 and total.flops > 0  # convolutions, and BatchNorm/ReLU/adds
    assert summary.total == report.forward == summary.modules[""]
    assert summary.modules["layer1"] == Cost(9_437_184, 90_880)  # 4 convs; BN, ReLU, 2 adds
