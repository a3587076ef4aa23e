"""DataLoader under PyTorch's arguments: samplers, batch_sampler, batch_size=None,
IterableDataset, and worker processes (num_workers > 0): seeded, in order, errors raised here
with the worker's traceback; lucid.utils.data spells it all as torch.utils.data does."""

from __future__ import annotations

import os

import numpy as np
import pytest

import lucid
import lucid.utils.data as tud
from lucid.data import DataLoader, Dataset, TensorDataset
from lucid.data.sampler import (
    BatchSampler,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from lucid.data.worker import get_worker_info


def _ds(n=20):
    X = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    return TensorDataset(X, np.arange(n))


def _labels(loader):
    return [yb.numpy().tolist() for _, yb in loader]


class Squares(Dataset):
    """Sample i: (i², the pid of the process that made it, a draw from lucid.random)."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        draw = lucid.random.randint(0, 10**6).item()
        return np.array([i * i, os.getpid(), draw], dtype=np.int64)


# --------------------------------------------------------------------------------------------
# workers


@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_give_the_same_batches_in_the_same_order(shuffle):
    lucid.random.seed(0)
    plain = _labels(DataLoader(_ds(), batch_size=3, shuffle=shuffle))
    lucid.random.seed(0)
    workers = _labels(DataLoader(_ds(), batch_size=3, shuffle=shuffle, num_workers=3,
                                 prefetch_factor=1))
    assert workers == plain and len(plain) == 7
    assert sorted(sum(plain, [])) == list(range(20))


def test_batches_are_made_in_worker_processes_and_tensors_come_back():
    batches = list(DataLoader(Squares(), batch_size=4, num_workers=2))
    assert all(isinstance(b, lucid.Tensor) and b.dtype == lucid.Int64 for b in batches)
    rows = np.concatenate([b.numpy() for b in batches])
    np.testing.assert_array_equal(rows[:, 0], np.arange(12) ** 2)
    pids = set(rows[:, 1].tolist())
    assert os.getpid() not in pids and len(pids) == 2


def test_workers_are_seeded_differently_and_repeatably():
    def run():
        lucid.random.seed(7)
        return np.concatenate([b.numpy() for b in DataLoader(Squares(), batch_size=2,
                                                              num_workers=2)])[:, 2]

    a, b = run(), run()
    np.testing.assert_array_equal(a, b)  # lucid.random.seed repeats the workers' draws
    # worker 0 makes batches 0, 2, 4; worker 1 batches 1, 3, 5: their streams differ
    assert a[0:2].tolist() != a[2:4].tolist()


def test_worker_info_and_worker_init_fn():
    seen = {}

    class Who(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = get_worker_info()
            return np.array([info.id, info.num_workers, info.seed % 1000, Who.init[0]])

    Who.init = [-1]

    def init(worker_id):
        Who.init[0] = 100 + worker_id

    rows = np.concatenate([b.numpy() for b in DataLoader(Who(), batch_size=1, num_workers=2,
                                                          worker_init_fn=init)])
    assert rows[:, 0].tolist() == [0, 1, 0, 1] and set(rows[:, 1]) == {2}
    assert rows[:, 3].tolist() == [100, 101, 100, 101]
    assert (rows[1, 2] - rows[0, 2]) % 1000 == 1  # seeds base + worker id
    assert get_worker_info() is None and not seen


def test_an_error_in_a_worker_is_raised_here_with_its_traceback():
    class Broken(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            if i == 5:
                raise KeyError(f"no sample {i}")
            return np.float32(i)

    with pytest.raises(KeyError) as info:
        list(DataLoader(Broken(), batch_size=2, num_workers=2))
    message = str(info.value)
    assert "Caught KeyError in DataLoader worker process 0" in message
    assert "Traceback" in message and "no sample 5" in message and "__getitem__" in message


def test_persistent_workers_are_kept_between_passes_and_stop_with_the_loader():
    loader = DataLoader(Squares(), batch_size=6, num_workers=2, persistent_workers=True)
    first = np.concatenate([b.numpy() for b in loader])
    pool = loader._pool
    second = np.concatenate([b.numpy() for b in loader])
    assert loader._pool is pool and set(first[:, 1]) == set(second[:, 1])
    np.testing.assert_array_equal(first[:, 0], second[:, 0])
    assert not np.array_equal(first[:, 2], second[:, 2])  # the workers' streams went on
    pool.shutdown()
    assert all(not w.is_alive() for w in pool.workers)


def test_leaving_a_pass_early_stops_its_workers():
    it = iter(DataLoader(Squares(), batch_size=2, num_workers=2))
    next(it)
    pool = it.gi_frame.f_locals["self"]
    it.close()
    assert all(not w.is_alive() for w in pool.workers)


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"num_workers": -1}, ValueError, "num_workers"),
    ({"num_workers": 1.5}, ValueError, "num_workers"),
    ({"prefetch_factor": 2}, ValueError, "num_workers > 0"),
    ({"persistent_workers": True}, ValueError, "num_workers > 0"),
    ({"timeout": -1}, ValueError, "timeout"),
    ({"worker_init_fn": 3}, TypeError, "worker_init_fn"),
    ({"sampler": [0, 1], "shuffle": True}, ValueError, "mutually exclusive with shuffle"),
    ({"batch_sampler": [[0, 1]], "batch_size": 4}, ValueError, "mutually exclusive"),
    ({"pin_memory": "yes"}, TypeError, "pin_memory"),
])
def test_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        DataLoader(_ds(), **kwargs)


def test_pin_memory_is_accepted_and_changes_nothing():
    a = _labels(DataLoader(_ds(), batch_size=4, pin_memory=True))
    assert a == _labels(DataLoader(_ds(), batch_size=4))


# --------------------------------------------------------------------------------------------
# samplers and the other PyTorch arguments


def test_sampler_and_batch_sampler_choose_the_order():
    ds = _ds(6)
    assert _labels(DataLoader(ds, batch_size=4, sampler=[5, 4, 3, 2, 1, 0])) == [
        [5, 4, 3, 2], [1, 0]]
    assert _labels(DataLoader(ds, batch_sampler=[[0, 5], [2], [1, 3, 4]])) == [
        [0, 5], [2], [1, 3, 4]]
    loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, True))
    assert len(loader) == 1 and _labels(loader) == [[0, 1, 2, 3]]
    assert loader.batch_size is None


def test_batch_size_none_yields_single_samples():
    loader = DataLoader(_ds(3), batch_size=None)
    samples = list(loader)
    assert len(loader) == 3 and samples[1][1].item() == 1 and samples[1][0].shape == (2,)


def test_random_samplers_draw_from_lucid_random_or_a_generator():
    lucid.random.seed(3)
    a = list(RandomSampler(range(10)))
    lucid.random.seed(3)
    assert a == lucid.random.permutation(10).numpy().tolist()
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    assert list(RandomSampler(range(10), generator=g1)) == list(
        RandomSampler(range(10), generator=g2))
    with_rep = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(with_rep) == 50 and set(with_rep) == {0, 1, 2}
    assert len(list(RandomSampler(range(4), num_samples=10))) == 10
    assert sorted(SubsetRandomSampler([7, 8, 9])) == [7, 8, 9]
    with pytest.raises(TypeError, match="generator"):
        RandomSampler(range(3), generator="seed")


def test_weighted_random_sampler_follows_the_weights():
    lucid.random.seed(0)
    drawn = np.array(list(WeightedRandomSampler([1.0, 0.0, 3.0], num_samples=4000)))
    counts = np.bincount(drawn, minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.25, 0.0, 0.75], atol=0.03)
    assert sorted(WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]
    with pytest.raises(ValueError, match="without replacement"):
        WeightedRandomSampler([1, 0], 2, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([1, -1], 2)


def test_iterable_dataset_batches_consecutive_samples():
    class Count(tud.IterableDataset):
        def __iter__(self):
            return iter(np.float32(i) for i in range(7))

    batches = [b.numpy().tolist() for b in DataLoader(Count(), batch_size=3)]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(list(DataLoader(Count(), batch_size=3, drop_last=True))) == 2
    with pytest.raises(ValueError, match="its own order"):
        DataLoader(Count(), shuffle=True)
    with pytest.raises(TypeError, match="no \\[i\\]"):
        Count()[0]


def test_torch_utils_data_names():
    for name in ("Dataset", "IterableDataset", "TensorDataset", "DataLoader", "Subset",
                 "ConcatDataset", "random_split", "default_collate", "Sampler",
                 "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
                 "WeightedRandomSampler", "BatchSampler", "get_worker_info"):
        assert hasattr(tud, name), name
    assert lucid.utils.data.DataLoader is DataLoader
    parts = tud.random_split(_ds(10), [0.7, 0.3], generator=np.random.default_rng(0))
    again = tud.random_split(_ds(10), [7, 3], generator=np.random.default_rng(0))
    assert [len(p) for p in parts] == [7, 3]
    np.testing.assert_array_equal(parts[0].indices, again[0].indices)
    np.testing.assert_array_equal(np.sort(np.concatenate([p.indices for p in parts])),
                                  np.arange(10))


def test_torch_utils_data_submodules():
    from lucid.utils.data.dataloader import DataLoader as DL
    from lucid.utils.data.dataloader import default_collate, get_worker_info
    from lucid.utils.data.dataset import Dataset as DS
    from lucid.utils.data.sampler import SubsetRandomSampler as SRS

    assert (DL, DS, SRS) == (DataLoader, Dataset, SubsetRandomSampler)
    assert default_collate is tud.default_collate and get_worker_info is tud.get_worker_info


def test_spawned_workers_get_the_loader_through_multiprocessing():
    # "spawn" (macOS's and Windows' default) starts fresh interpreters: the loader travels
    # by multiprocessing's own transport, the batches back as arrays
    ds = _ds(6)
    loader = DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn")
    assert _labels(loader) == [[0, 1, 2, 3], [4, 5]]


def test_batches_keep_their_dtypes_through_the_workers():
    from lucid.data.worker import from_arrays, to_arrays

    for a in (np.array([True, False]), np.arange(3, dtype=np.int32),
              np.ones(2, np.float16), np.arange(3, dtype=np.uint8)):
        t = from_arrays(to_arrays({"x": [lucid.Tensor(a)]}))["x"][0]
        assert t.dtype == lucid.Tensor(a).dtype and t.numpy().dtype == a.dtype


def test_a_lucid_generator_orders_the_shuffle_and_the_split():
    def order(seed):
        g = lucid.Generator().manual_seed(seed)
        return _labels(DataLoader(_ds(12), batch_size=12, shuffle=True, generator=g))[0]

    lucid.random.seed(0)
    a = order(42)
    lucid.random.seed(1)  # the module's stream plays no part
    assert order(42) == a and order(7) != a and sorted(a) == list(range(12))
    parts = tud.random_split(_ds(12), [8, 4], generator=lucid.Generator().manual_seed(42))
    again = tud.random_split(_ds(12), [8, 4], generator=lucid.Generator().manual_seed(42))
    np.testing.assert_array_equal(parts[1].indices, again[1].indices)


def test_a_worker_that_dies_is_an_error_not_a_hang():
    class Dies(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            os._exit(3)  # the process vanishes without a word (a crash, the OOM killer)

    with pytest.raises(RuntimeError, match=r"DataLoader worker 0 \(pid \d+\) exited "
                                           r"unexpectedly with exit code 3"):
        list(DataLoader(Dies(), batch_size=2, num_workers=1))


def test_timeout_raises_when_no_batch_comes():
    class Slow(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            import time

            time.sleep(3)
            return np.float32(i)

    with pytest.raises(RuntimeError, match="timed out after 1 seconds"):
        list(DataLoader(Slow(), batch_size=2, num_workers=1, timeout=1))
