"""Generic op tests derived from the spec table (tests/specs): one row, every check."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.ops import REGISTRY, Op
from tests.specs import ALL_SPECS

CASES = [(spec, i) for spec in ALL_SPECS for i in range(len(spec.samples))]
CASE_IDS = [f"{spec.id}-{i}" for spec, i in CASES]


def _tensors(arrays, requires_grad=False):
    return [
        lucid.Tensor(a, requires_grad=requires_grad and np.issubdtype(a.dtype, np.floating))
        for a in arrays
    ]


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("spec,i", CASES, ids=CASE_IDS)
def test_forward_matches_numpy_float64(spec, i):
    arrays = spec.samples[i]
    got = _outputs(spec.fn(*_tensors(arrays)))
    want = _outputs(spec.ref(*[a.copy() for a in arrays]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert isinstance(g, lucid.Tensor)
        assert g.shape == w.shape
        assert g.dtype == lucid.types.to_numeric_type(w.dtype), (g.dtype, w.dtype)
        np.testing.assert_allclose(g.numpy(), w, atol=spec.atol, rtol=spec.rtol)


GRAD_CASES = [(s, i) for s, i in CASES if s.grad]


@pytest.mark.parametrize("spec,i", GRAD_CASES, ids=[f"{s.id}-{i}" for s, i in GRAD_CASES])
def test_gradcheck_float64(spec, i):
    inputs = _tensors(spec.samples[i], requires_grad=True)
    assert gradcheck(spec.fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


ERROR_CASES = [(s, e) for s in ALL_SPECS for e in s.errors]


@pytest.mark.parametrize("spec,case", ERROR_CASES,
                         ids=[f"{s.id}-{k}" for k, (s, _) in enumerate(ERROR_CASES)])
def test_error_inputs(spec, case):
    with pytest.raises(case.exc, match=case.match):
        case.call()


FLOPS_CASES = [(s, f) for s in ALL_SPECS for f in s.flops]


@pytest.mark.parametrize("spec,case", FLOPS_CASES,
                         ids=[f"{s.id}-{k}" for k, (s, _) in enumerate(FLOPS_CASES)])
def test_flops_hand_counts(spec, case):
    inputs = _tensors(case.inputs, requires_grad=spec.grad)
    with lucid.count_flops():
        out = _outputs(spec.fn(*inputs))[0]
    assert type(out._op).name == spec.name
    assert out._op.flops == case.forward
    assert out._op.flops_bwd == (case.backward if spec.grad else 0)


@pytest.mark.parametrize("spec,i", CASES, ids=CASE_IDS)
def test_flops_rule_runs_on_every_sample(spec, i):
    inputs = _tensors(spec.samples[i], requires_grad=spec.grad)
    with lucid.count_flops():
        out = _outputs(spec.fn(*inputs))[0]
    assert isinstance(out._op.flops, int) and out._op.flops >= 0
    assert out.flops >= out._op.flops


def _graph_ops(outputs):
    """Every (node, op) recorded below ``outputs``, each once."""
    seen, stack, found = set(), list(outputs), []
    while stack:
        node = stack.pop()
        if id(node) in seen or node._op is None:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(node._prev)
    return found


def _arrays_in(value):
    """The NumPy arrays an op keeps, looking into tuples, lists and dicts."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _arrays_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays_in(v)


@pytest.mark.parametrize("spec,i", CASES, ids=CASE_IDS)
def test_saved_values_are_declared(spec, i):
    """An op that keeps an input (or a view of one) must name it in ``saves_inputs``, and one
    that keeps its output must say ``saves_output``: the version check sees only those."""
    inputs = _tensors(spec.samples[i], requires_grad=spec.grad)
    for node in _graph_ops(_outputs(spec.fn(*inputs))):
        op = node._op
        kept = list(_arrays_in(vars(op)))
        declared = op.saves_inputs
        for pos, parent in enumerate(node._prev):
            if any(np.may_share_memory(k, parent.data) for k in kept):
                assert declared is True or (declared and pos in declared), (
                    f"{type(op).__name__} keeps input {pos} but saves_inputs = {declared!r}")
        own = [k for k in kept if not any(np.may_share_memory(k, p.data) for p in node._prev)]
        if any(np.may_share_memory(k, node.data) for k in own):  # (a view's output is its input)
            assert op.saves_output, f"{type(op).__name__} keeps its output, saves_output False"


# -- meta-tests -----------------------------------------------------------------------------


def test_every_registered_op_has_a_spec_row():
    covered = {s.name for s in ALL_SPECS}
    missing = sorted(set(REGISTRY) - covered)
    assert not missing, f"registered ops without a spec row: {missing}"


def test_every_spec_row_names_a_registered_op():
    unknown = sorted({s.name for s in ALL_SPECS} - set(REGISTRY))
    assert not unknown, f"spec rows for unregistered ops: {unknown}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_op_has_flops_rules_and_a_docstring(name):
    cls = REGISTRY[name]
    assert cls.forward_flops is not Op.forward_flops, f"{name} has no forward FLOPs rule"
    assert cls.backward_flops is not Op.backward_flops, f"{name} has no backward FLOPs rule"
    assert cls.forward is not Op.forward
    if cls.differentiable:
        assert cls.backward is not Op.backward, f"{name} is differentiable but has no backward"
    assert inspect.getdoc(cls), f"{name} has no docstring stating its maths"


def test_differentiable_ops_are_gradchecked():
    checked = {s.name for s in ALL_SPECS if s.grad}
    for name, cls in REGISTRY.items():
        if cls.differentiable:
            assert name in checked, f"{name} is differentiable but no spec row gradchecks it"


def test_public_surface_is_the_registry():
    """lucid.<name> is exactly the catalogue's public functions (plus what the package adds
    itself); nothing private leaks (no helper factories, no engine switches)."""
    from lucid.ops import FUNCTIONS

    for name, fn in FUNCTIONS.items():
        assert getattr(lucid, name) is fn, name
    assert not hasattr(lucid, "_predicate")
    assert "MODE" not in sys.modules["lucid.tensor"].__all__  # (lucid.tensor is the function)
    private = [n for n in dir(lucid) if n.startswith("_") and not n.startswith("__")]
    assert not private, private
