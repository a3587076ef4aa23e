"""lucid.distributed, DistributedDataParallel and DistributedSampler.

In one process (a world of one) the API must still work; the real thing runs 2 local ranks
through the launcher (tests/distributed_worker.py), four jobs at once, each with a time limit:
DDP on shards equals one process on the whole batch, a model that differs between ranks is
refused, and a killed or hung rank makes the others stop with an error in bounded time.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lucid
import lucid.distributed as dist
import lucid.nn as nn
from lucid.cost import Cost
from lucid.data import DataLoader, DistributedSampler, TensorDataset
from lucid.distributed import launch
from lucid.nn.parallel import DistributedDataParallel as DDP

WORKER = "tests/distributed_worker.py"


def _mlp():
    lucid.random.seed(0)
    return nn.Sequential(nn.Linear(4, 8, dtype=lucid.Float64), nn.Tanh(),
                         nn.Linear(8, 2, dtype=lucid.Float64))


# -- a world of one ------------------------------------------------------------------------


def test_a_process_without_launcher_is_rank_0_of_1():
    dist.init()
    assert dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "none")
    dist.barrier()


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_collectives_in_a_world_of_one_return_the_input(device, op):
    x = lucid.Tensor(np.arange(6.0).reshape(2, 3)).to(device)
    np.testing.assert_array_equal(dist.all_reduce(x, op=op).numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(dist.all_gather(x).numpy(), np.arange(6.0).reshape(2, 3))
    assert dist.broadcast(x, src=0) is x


def test_all_reduce_updates_a_tensor_without_grad_in_place_as_pytorch():
    t = lucid.Tensor([1.0, 2.0])
    version = t._version
    out = dist.all_reduce(t)
    assert t._version == version + 1 and out is not t
    w = lucid.Tensor([1.0, 2.0], requires_grad=True)
    dist.all_reduce(w)
    assert w._version == 0  # a tensor that needs a gradient is left alone


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"broadcast: src must be a rank in 0\.\.0, got 3"):
        dist.broadcast(lucid.ones(2), src=3)
    with pytest.raises(ValueError, match="init: timeout must be a positive number"):
        dist.init(timeout=0)


def test_ring_bytes_is_two_n_minus_one_over_n():
    assert [dist.ring_bytes(1200, n) for n in (1, 2, 3, 4)] == [0, 1200, 1600, 1800]


def test_cost_shows_bytes_sent_beside_flops():
    assert Cost(flops=0, bytes_sent=1_048_576).text() == "0 FLOPs + 1,048,576 bytes sent"
    assert Cost(macs=2, flops=1, bytes_sent=8).text("FLOPs") == "5 FLOPs + 8 bytes sent"
    assert (Cost(1, 2, 3) + Cost(1, 1, 1)) == Cost(2, 3, 4)
    assert Cost(macs=2, flops=1).text() == "2 MACs + 1 FLOP"  # unchanged without traffic


# -- DDP in a world of one -----------------------------------------------------------------


def test_ddp_of_one_process_trains_as_the_module():
    x = lucid.Tensor(np.linspace(-1, 1, 12).reshape(3, 4))
    ref = _mlp()
    ref(x).sum().backward()
    model = DDP(_mlp())
    assert model.module is not None and isinstance(model.module, nn.Sequential)
    model(x).sum().backward()
    for (name, p), q in zip(model.module.named_parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.grad, q.grad, err_msg=name)
    assert model.reducer.all_reduces == 1  # one bucket for this small model


def test_ddp_state_dict_has_the_module_keys_and_loads_either_form():
    model = DDP(_mlp())
    sd = model.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    prefixed = {"module." + k: v * 0 for k, v in sd.items()}
    model.load_state_dict(prefixed)
    assert float(np.abs(model.module[0].weight.numpy()).sum()) == 0.0
    assert [n for n, _ in model.named_parameters()][0] == "module.0.weight"  # as PyTorch


def test_ddp_buckets_follow_the_cap_in_reverse_registration_order():
    model = DDP(_mlp(), bucket_cap_mb=(2 + 16) * 8 / 2**20)  # room for 2.bias + 2.weight
    buckets = [[p.name for p in b.params] for b in model.reducer.buckets]
    assert buckets == [["module.2.bias", "module.2.weight"], ["module.0.bias"],
                       ["module.0.weight"]]
    assert model.bytes_per_step() == {"bytes_all_reduced": (2 + 16 + 8 + 32) * 8,
                                      "all_reduces": 3, "bytes_sent": 0}


def test_no_sync_accumulates_and_the_next_backward_averages_the_total():
    model = DDP(_mlp())
    x = lucid.Tensor(np.ones((2, 4)))
    with model.no_sync():
        model(x).sum().backward()
    assert model.reducer.all_reduces == 0
    once = [p.grad.copy() for p in model.parameters()]
    model(x).sum().backward()
    assert model.reducer.all_reduces == 1
    for p, g in zip(model.parameters(), once):
        np.testing.assert_allclose(p.grad, 2 * g, rtol=1e-15)


def test_a_parameter_left_without_gradient_is_reported_at_the_next_forward():
    class OneUsed(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(4, 2), nn.Linear(4, 2)

        def forward(self, x):
            return self.used(x)

    model = DDP(OneUsed())
    x = lucid.Tensor(np.ones((2, 4), dtype=np.float32))
    model(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"gave no gradient to 2 parameter\(s\) "
                                           r"\(module\.unused\.bias, module\.unused\.weight\)"):
        model(x)


def test_draw_model_sees_the_gradient_sync_with_its_bytes():
    model = DDP(_mlp())
    with lucid.count_flops():
        out = model(lucid.Tensor(np.ones((2, 4))))
    assert type(out._op).name == "gradient_sync"
    assert out._op.bytes_sent == 0 and out._op.bytes_sent_bwd == 0  # one rank sends nothing
    assert "all-reduce of gradients: 464 bytes in 1 bucket" in repr(model)


# -- DistributedSampler --------------------------------------------------------------------


def test_sampler_shards_are_disjoint_padded_and_cover_the_data():
    ds = list(range(10))
    shards = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded with 0, 1 (PyTorch)
    dropped = [list(DistributedSampler(ds, 3, r, shuffle=False, drop_last=True)) for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    shuffled = [DistributedSampler(ds, 2, r, seed=5) for r in range(2)]
    a, b = (list(s) for s in shuffled)
    assert sorted(a + b) == ds and not set(a) & set(b)
    for s in shuffled:
        s.set_epoch(1)
    assert [list(s) for s in shuffled] != [a, b]
    assert sorted(list(shuffled[0]) + list(shuffled[1])) == ds


def test_sampler_feeds_a_dataloader():
    ds = TensorDataset(lucid.Tensor(np.arange(8.0)))
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))
    assert len(loader) == 2
    assert [b[0].numpy().tolist() for b in loader] == [[1.0, 3.0], [5.0, 7.0]]
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=DistributedSampler(ds, 2, 0), shuffle=True)
    with pytest.raises(ValueError, match=r"rank must be in 0\.\.1, got 2"):
        DistributedSampler(ds, num_replicas=2, rank=2)


def test_sampler_is_importable_where_the_data_helpers_are():
    import lucid.data as data

    assert data.DistributedSampler is DistributedSampler


# -- two ranks, through the launcher -------------------------------------------------------


def _launch(tmp_path, mode, n=2, timeout=None, deadline=120):
    start = time.monotonic()
    result = launch.run(WORKER, [mode, str(tmp_path)], n=n, timeout=timeout, capture=True,
                        deadline=deadline)
    found = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("rank*.json"))]
    return result, found, time.monotonic() - start


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """The four 2-rank jobs, started together (each waits on its processes most of the
    time): mode -> (launcher result, what each rank wrote, seconds)."""
    timeouts = {"exact": None, "mismatch": None, "kill": 20, "hang": 2}
    with ThreadPoolExecutor(len(timeouts)) as pool:
        running = {mode: pool.submit(_launch, tmp_path_factory.mktemp(mode), mode,
                                     timeout=timeout) for mode, timeout in timeouts.items()}
        return {mode: job.result() for mode, job in running.items()}


@pytest.fixture(scope="module")
def exact_run(jobs):
    return jobs["exact"]


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-5)])
def test_ddp_on_two_ranks_equals_one_process_on_the_whole_batch(exact_run, kind, device,
                                                                 dtype, tol):
    result, found, _ = exact_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(found) == 2 and all(f["world"] == 2 for f in found)
    for rank in found:
        row = rank[f"{kind}-{device}-{dtype}"]
        assert row["max_diff"] <= tol, row
        assert row["keys"][0] == "0.bias"  # state_dict keys carry no "module." prefix
        assert 0 < row["all_reduces"] <= 3 * 20  # a few buckets per step, not one per tensor


def test_collectives_agree_on_two_ranks(exact_run):
    result, found, _ = exact_run
    assert result.returncode == 0, result.stderr[-3000:]
    for rank, f in enumerate(found):
        for device in ("cpu", "gpu"):
            c = f["collectives"][device]
            assert c["sum"] == [10.0, 12.0, 14.0, 16.0]
            assert c["sum_grad"] == [3.0] * 4  # d/dx of Σ_r (r+1)·Σx: the all-reduced seeds
            assert (c["mean"], c["max"], c["min"]) == (0.5, 1.0, 0.0)
            assert c["gather"] == [[0.0] * 3] * 2 + [[1.0] * 3] * 2
            # rows of rank r in the weights 0..11, counted once per rank
            assert c["gather_grad"] == (2 * np.arange(6.0).reshape(2, 3) + 12 * rank).tolist()
            assert c["broadcast"] == [6.0] * 3
        assert f["collectives"]["bytes"] == [4000, 4000, 0]  # 2(N-1)/N of 4000 bytes, 0 FLOPs


def test_lucid_flops_of_a_ddp_step_on_two_ranks_reports_the_bytes_sent(exact_run):
    result, found, _ = exact_run
    params = (6 * 16 + 16 + 16 * 3 + 3) * 8  # the MLP's float64 gradients: one bucket
    for f in found:
        assert f", backward 768 MACs + 249 FLOPs + {dist.ring_bytes(params, 2):,} bytes sent" \
            in f["magic"], f["magic"]


def test_batchnorm_under_ddp_uses_local_statistics_and_rank_0s_running_ones(exact_run):
    result, found, _ = exact_run
    bn = [f["batchnorm"] for f in found]
    assert bn[0]["after_train"] != bn[1]["after_train"]  # each rank's own batch statistics
    for f in bn:
        assert f["after_next_forward"] == bn[0]["after_train"]  # broadcast from rank 0


def test_no_sync_accumulation_on_two_ranks(exact_run):
    result, found, _ = exact_run
    for f in found:
        assert f["no_sync"]["calls"] == [0, 1]
        assert f["no_sync"]["max_diff"] <= 1e-12


def test_a_model_that_differs_on_one_rank_is_refused_on_every_rank(jobs):
    result, found, _ = jobs["mismatch"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(found) == 2
    for f in found:
        assert "rank 1 built a different model from rank 0's" in f["error"]
        assert ("'0.weight' (16,6) Float32 on rank 0 but '0.weight' (17,6) Float32 on rank 1"
                in f["error"])


def test_a_killed_rank_makes_the_others_fail_with_an_error(jobs):
    result, found, seconds = jobs["kill"]
    assert result.returncode != 0 and result.returncode != 124
    assert "DistributedError" in result.stderr and "crashed or been killed" in result.stderr
    assert found == []
    assert seconds < 60


def test_a_hung_rank_makes_the_others_give_up_after_the_timeout(jobs):
    result, found, seconds = jobs["hang"]
    assert result.returncode != 0
    assert "waited 2 s for the other ranks and gave up" in result.stderr
    assert "exited with code 124" in result.stderr  # the watchdog's exit status
    assert seconds < 60


# -- seeing it: drawing, %lucid_flops, summarize --------------------------------------------


def test_a_drawing_of_a_ddp_step_shows_the_gradient_all_reduce_coloured_apart():
    from lucid_viz import draw
    from lucid_viz.scene import COMMUNICATION

    model = DDP(_mlp())
    with lucid.count_flops():
        loss = model(lucid.Tensor(np.ones((3, 4)))).sum()
    dot = draw(loss).dot()
    line = next(s for s in dot.splitlines() if "GradientSync" in s)
    assert "all-reduce of gradients: 464 bytes in 1 bucket" in line
    assert f'fillcolor="{COMMUNICATION["fill"]}"' in line
    swatch = f'<TD BGCOLOR="{COMMUNICATION["fill"]}" COLOR="{COMMUNICATION["line"]}"'
    assert swatch in dot and "communication between ranks</TD>" in dot  # the legend says so


def test_lucid_flops_reports_bytes_sent_beside_flops():
    from lucid_viz.graph import trace

    with lucid.count_flops():
        y = dist.all_reduce(lucid.Tensor(np.ones(10), requires_grad=True) * 2.0)
    node = next(n for n in trace(y).nodes if n.op == "AllReduce")
    assert node.traffic == "all-reduce (sum) of 80 bytes"
    assert node.cost().bytes_sent == 0  # a world of one sends nothing; 2 ranks: tested above


def test_summarize_says_what_a_ddp_step_all_reduces():
    from lucid.models import summarize

    s = summarize(DDP(_mlp()), (2, 4), print_summary=False)
    assert s.communication == {"bytes_all_reduced": 464, "all_reduces": 1, "bytes_sent": 0}
    assert "All-reduced per training step: 464 bytes of gradients in 1 all-reduce(s)" in str(s)


# -- the ring, simulated and drawn ----------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_the_ring_all_reduce_sums_and_each_rank_sends_2_n_minus_1_over_n(n):
    from lucid.distributed.ring import simulate_ring_all_reduce

    values = np.random.default_rng(n).normal(size=(n, n))
    steps = simulate_ring_all_reduce(values)
    assert len(steps) == 1 + 2 * (n - 1)
    np.testing.assert_allclose(steps[-1].values, np.tile(values.sum(0), (n, 1)), rtol=1e-12)
    assert all(who == frozenset(range(n)) for row in steps[-1].holds for who in row)
    chunks_sent = [sum(src == r for s in steps for src, _, _ in s.sends) for r in range(n)]
    assert chunks_sent == [2 * (n - 1)] * n  # one chunk (1/n of the data) per step
    assert dist.ring_bytes(n * 1000, n) == 2 * (n - 1) * 1000


def test_the_ring_picture_fits_the_projector():
    from matplotlib.text import Text

    from lucid_viz.distributed import plot_ring_all_reduce

    fig = plot_ring_all_reduce(4)
    assert fig.get_size_inches()[0] <= 9
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text()]
    assert sizes and min(sizes) >= 11
    with pytest.raises(ValueError, match="n must be an int from 2 to 5"):
        plot_ring_all_reduce(9)


def test_an_empty_host_file_from_mlx_launch_n_1_is_a_world_of_one(tmp_path, monkeypatch):
    from lucid.distributed import world

    empty = tmp_path / "hosts"
    empty.write_text("\n")  # what `mlx.launch -n 1` hands its one rank
    monkeypatch.setenv("MLX_HOSTFILE", str(empty))
    monkeypatch.setenv("MLX_RANK", "0")
    assert not world._launched()
    empty.write_text('[["127.0.0.1:5000"], ["127.0.0.1:5001"]]')
    assert world._launched()


def test_the_launcher_passes_host_files_and_backends_to_mlx_launch():
    ours, extra = launch.parse(["--hostfile", "hosts.json", "--backend", "mpi", "train.py",
                                "--epochs", "3"])
    assert (ours.script, ours.args) == ("train.py", ["--epochs", "3"])
    cmd = launch.command(ours.script, ours.args, ours.nproc, 30, port=40000, extra=extra)
    assert cmd[0].endswith("mlx.launch")
    assert "--hostfile=hosts.json" in cmd and "--backend=mpi" in cmd and "-n" not in cmd
    assert cmd[cmd.index("--env") + 1] == "LUCID_DIST_TIMEOUT=30"
    assert cmd[-4:] == ["--", "train.py", "--epochs", "3"]
    local = launch.command("train.py", n=3, port=40000)
    assert local[local.index("-n") + 1] == "3" and "ring" in local


def test_the_launcher_shares_the_cores_between_the_ranks_blas_threads(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    env = launch.rank_environment(2)
    assert env["OPENBLAS_NUM_THREADS"] == "4"  # 8 cores / 2 ranks
    assert env["OMP_NUM_THREADS"] == "3"  # the user's own setting wins
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    assert launch.rank_environment(16)["MKL_NUM_THREADS"] == "1"
    assert os.environ.get("MKL_NUM_THREADS") is None  # this process's own is left alone


def test_sampler_is_importable_under_pytorchs_paths():
    from lucid.utils.data import DistributedSampler as flat
    from lucid.utils.data.distributed import DistributedSampler as nested

    assert flat is DistributedSampler and nested is DistributedSampler
