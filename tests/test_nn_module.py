"""nn.Module, Parameter and Buffer (seed 003): registration, walks, state_dict, devices."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn as nn


class Lin(nn.Module):
    """Seed 003's Linear, written with Parameters only."""

    def __init__(self, in_features, out_features):
        super().__init__()
        rng = np.random.default_rng(in_features * 100 + out_features)
        self.weight = nn.Parameter(lucid.Tensor(rng.standard_normal((out_features, in_features))))
        self.bias = nn.Parameter(lucid.zeros(out_features))

    def forward(self, x):
        return x @ self.weight.T + self.bias


class BN(nn.Module):
    """Seed 003's BN skeleton: running statistics as Buffers."""

    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.running_mean = nn.Buffer(lucid.zeros(num_features))
        self.running_var = nn.Buffer(lucid.ones(num_features))
        self.momentum = momentum
        self.eps = eps

    def forward(self, x):
        return (x - self.running_mean) / lucid.sqrt(self.running_var + self.eps)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Lin(3, 4)
        self.bn = BN(4)
        self.fc2 = Lin(4, 2)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)))


def test_parameter_and_buffer_flags():
    p = nn.Parameter(lucid.Tensor([1.0, 2.0]))
    assert p.requires_grad and p.keep_grad and p.is_leaf
    b = nn.Buffer(lucid.Tensor([1.0, 2.0]))
    assert not b.requires_grad and not b.keep_grad
    x = lucid.Tensor([1.0], requires_grad=True)
    q = nn.Parameter(x * 2)  # a Tensor is unwrapped: no graph shared
    assert q._op is None and q._prev == ()
    assert repr(p) == "Parameter([1., 2.], requires_grad=True)"


def test_setattr_registers_in_order_with_pytorch_keys():
    net = Net()
    assert [k for k, _ in net.named_parameters()] == [
        "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [k for k, _ in net.named_buffers()] == ["bn.running_mean", "bn.running_var"]
    assert [k for k, _ in net.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert [type(m).__name__ for m in net.children()] == ["Lin", "BN", "Lin"]
    assert list(net.state_dict()) == [
        "fc1.weight", "fc1.bias", "bn.running_mean", "bn.running_var", "fc2.weight", "fc2.bias"]
    assert len(list(net.parameters())) == 4 and len(list(net.buffers())) == 2


def test_reassigning_a_name_moves_it_between_registries():
    m = nn.Module()
    m.x = nn.Parameter(lucid.zeros(2))
    m.x = nn.Buffer(lucid.zeros(2))
    assert "x" not in m._parameters and "x" in m._buffers
    with pytest.raises(TypeError, match=r"Module.x is a buffer: assign a Tensor or None"):
        m.x = 3
    del m.x
    m.x = 3  # now a plain attribute
    assert "x" not in m._buffers and m.x == 3
    m.y = nn.Parameter(lucid.zeros(1))
    with pytest.raises(TypeError, match=r"Module.y is a parameter: assign an nn.Parameter or "
                                        r"None, not Tensor"):
        m.y = lucid.zeros(1)
    m.y = None
    assert m._parameters["y"] is None and list(m.parameters()) == []


def test_register_with_none_slots_skipped_by_state_dict():
    m = nn.Module()
    m.register_parameter("bias", None)
    m.register_buffer("mask", None)
    m.add_module("head", None)
    m.register_buffer("scale", lucid.ones(2))
    assert m.bias is None and m.mask is None and m.head is None
    assert isinstance(m.scale, nn.Buffer)
    assert list(m.state_dict()) == ["scale"]
    with pytest.raises(KeyError, match="without '.'"):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="must be an nn.Parameter or None"):
        m.register_parameter("w", lucid.zeros(2))


def test_setattr_before_super_init_is_a_clear_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(lucid.zeros(1))

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\)"):
        Bad()


def test_shared_parameters_counted_once():
    m = nn.Module()
    m.a = Lin(2, 2)
    m.b = m.a  # the same module twice
    assert len(list(m.parameters())) == 2
    assert [k for k, _ in m.named_modules()] == ["", "a"]


def test_state_dict_is_a_detached_copy_and_keep_vars_gives_tensors():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict) and isinstance(sd["fc1.weight"], np.ndarray)
    sd["fc1.weight"][...] = 0
    assert np.abs(net.fc1.weight.numpy()).sum() > 0
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight


def test_state_dict_pass_attr_leaves_names_out():
    class Cached(nn.Module):
        _state_dict_pass_attr = ("cache",)

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lucid.zeros(2))
            self.cache = nn.Buffer(lucid.zeros(3))

    assert list(Cached().state_dict()) == ["w"]


def test_load_state_dict_round_trip():
    a, b = Net(), Net()
    b.fc1.weight.data = b.fc1.weight.data * 0
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(b.fc1.weight.numpy(), a.fc1.weight.numpy())
    x = lucid.Tensor(np.ones((2, 3)))
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_load_state_dict_strict_collects_every_problem_once():
    net = Net()
    sd = net.state_dict()
    del sd["fc2.bias"]
    sd["extra.w"] = np.zeros(1)
    sd["fc1.weight"] = np.zeros((9, 9))
    sd["bn.running_mean"] = sd["bn.running_mean"].astype(np.complex128)  # complex into real
    before = net.fc1.bias.numpy().copy()
    sd["fc1.bias"] = before + 1
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    msg = str(info.value)
    assert "4 problem(s)" in msg
    assert "missing key 'fc2.bias'" in msg and "unexpected key 'extra.w'" in msg
    assert "fc1.weight: shape (9,9) in the state dict, (4,3) in the model" in msg
    assert ("bn.running_mean: dtype Complex128 in the state dict cannot be copied into the "
            "model's Float64") in msg
    np.testing.assert_array_equal(net.fc1.bias.numpy(), before)  # nothing was loaded


def test_load_state_dict_non_strict_returns_the_lists():
    net = Net()
    sd = net.state_dict()
    del sd["fc2.bias"]
    sd["extra"] = np.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["extra"]


def test_train_eval_propagate():
    net = Net()
    assert net.training and net.bn.training
    assert net.eval() is net and not net.bn.training
    net.train()
    assert net.fc2.training


def test_forward_hooks_and_pre_hooks():
    lin = Lin(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = lin(lucid.Tensor(np.ones((1, 2))))
    np.testing.assert_allclose(out.numpy(), np.ones((1, 2)))  # 0 @ W + 0 bias + 1
    assert calls == [(1, 2)]
    h1.remove()
    h2()
    out = lin(lucid.Tensor(np.ones((1, 2))))
    np.testing.assert_allclose(out.numpy(), np.ones((1, 2)) @ lin.weight.numpy().T)


def test_zero_grad_and_backward_through_module():
    net = Net()
    net(lucid.Tensor(np.ones((2, 3)))).backward()
    assert all(p.grad is not None for p in net.parameters())
    assert all(b.grad is None for b in net.buffers())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_repr_is_readable():
    seq = nn.Sequential(Lin(2, 3), nn.Sequential(BN(3)))
    assert repr(seq) == "Sequential(\n  (0): Lin()\n  (1): Sequential(\n    (0): BN()\n  )\n)"


def test_containers():
    seq = nn.Sequential(OrderedDict(first=Lin(2, 3), second=Lin(3, 1)))
    assert [k for k, _ in seq.named_parameters()][0] == "first.weight"
    assert len(seq) == 2 and isinstance(seq[1], Lin) and len(seq[0:1]) == 1
    ml = nn.ModuleList([Lin(1, 1), Lin(1, 1)])
    holder = nn.Module()
    holder.layers = ml
    assert len(list(holder.parameters())) == 4
    md = nn.ModuleDict({"a": Lin(1, 1)})
    assert "a" in md and list(md.keys()) == ["a"]


def test_module_to_gpu_moves_params_buffers_in_place_each_once():
    pytest.importorskip("mlx.core")
    net = Net()
    w = net.fc1.weight
    x = lucid.Tensor(np.ones((2, 3)))
    ref = net(x).numpy()
    assert net.to("gpu") is net
    assert net.fc1.weight is w and w.device == "gpu"
    assert all(t.device == "gpu" for t in [*net.parameters(), *net.buffers()])
    out = net(x.to("gpu"))
    assert out.device == "gpu"
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    out.backward()
    assert w.grad is not None and isinstance(w.grad, lucid.backends.get_backend("gpu").array_type)
    net.to("cpu")
    assert isinstance(w.grad, np.ndarray) and w.device == "cpu"
    # a state dict saved on gpu loads on cpu
    sd_gpu = Net().to("gpu").state_dict()
    cpu_net = Net()
    cpu_net.load_state_dict(sd_gpu)
    np.testing.assert_array_equal(cpu_net.fc1.weight.numpy(), sd_gpu["fc1.weight"])


def test_repr_puts_settings_on_their_own_line_above_children():
    mha = nn.MultiHeadAttention(8, 2)
    assert repr(mha) == (
        "MultiHeadAttention(\n"
        "  embed_dim=8, num_heads=2, dropout=0.0, batch_first=True\n"
        "  (out_proj): Linear(in_features=8, out_features=8, bias=True)\n"
        ")"
    )


def test_a_reassigned_parameter_keeps_its_place_in_the_state_dict():
    import lucid.nn as nn_

    layer = nn_.Linear(3, 2)
    layer.weight = nn_.Parameter(lucid.zeros(2, 3))
    assert list(layer.state_dict()) == ["weight", "bias"]  # PyTorch's order, not moved last
    layer.register_parameter("weight", nn_.Parameter(lucid.ones(2, 3)))
    assert list(layer.state_dict()) == ["weight", "bias"]
    assert float(layer.weight.sum().item()) == 6.0
    layer.bias = None  # an optional slot keeps its place too (and leaves the state dict)
    assert list(layer.state_dict()) == ["weight"]
