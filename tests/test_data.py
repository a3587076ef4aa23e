"""lucid.data: TensorDataset, DataLoader (batching, seeded shuffling, drop_last, collate),
Subset, ConcatDataset and random_split, on cpu and gpu."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lucid
import lucid.random
from lucid.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

HAS_MLX = importlib.util.find_spec("mlx") is not None
needs_mlx = pytest.mark.skipif(not HAS_MLX, reason="MLX is not installed")
DEVICES = ["cpu", pytest.param("gpu", marks=needs_mlx)]


def _xy(n=10):
    X = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n, dtype=np.int64)
    return X, y


# --------------------------------------------------------------------------------------------
# TensorDataset


def test_tensor_dataset_items_and_length():
    X, y = _xy()
    ds = TensorDataset(lucid.Tensor(X), lucid.Tensor(y))
    assert len(ds) == 10
    x3, y3 = ds[3]
    np.testing.assert_array_equal(x3.numpy(), X[3])
    assert y3.item() == 3 and y3.dtype == lucid.Int64 and x3.dtype == lucid.Float32
    np.testing.assert_array_equal(ds[-1][0].numpy(), X[-1])
    with pytest.raises(IndexError, match="out of range"):
        ds[10]
    with pytest.raises(TypeError, match="int"):
        ds[1.5]


def test_seed_001_dtype_converts_every_tensor_then_to_gpu_moves_them():
    X, y = _xy()
    ds = TensorDataset(X.astype(np.float64), y, dtype=lucid.Float)  # bit-free: width from data
    assert [t.dtype for t in ds.tensors] == [lucid.Float64, lucid.Float64]
    ds32 = TensorDataset(lucid.Tensor(X), lucid.Tensor(y), dtype=lucid.Float32)
    assert [t.dtype for t in ds32.tensors] == [lucid.Float32, lucid.Float32]
    if HAS_MLX:
        assert ds.to("gpu") is ds  # seed 001 calls ds.to("gpu") without reassigning
        assert all(t.device == "gpu" for t in ds.tensors)
        xb, yb = next(iter(DataLoader(ds, batch_size=4)))
        assert xb.device == yb.device == "gpu"


def test_tensor_dataset_keeps_the_callers_tensors_untouched_by_to():
    X, y = _xy()
    tx = lucid.Tensor(X)
    ds = TensorDataset(tx, lucid.Tensor(y))
    if HAS_MLX:
        ds.to("gpu")
        assert tx.device == "cpu"


def test_tensor_dataset_errors():
    with pytest.raises(ValueError, match=r"same first dimension.*\(10,3\).*\(9,\)"):
        TensorDataset(np.zeros((10, 3)), np.zeros(9))
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(lucid.Tensor(3.0))


# --------------------------------------------------------------------------------------------
# DataLoader


@pytest.mark.parametrize("device", DEVICES)
def test_batches_in_order_cover_the_data(device):
    X, y = _xy(10)
    ds = TensorDataset(X, y).to(device)
    loader = DataLoader(ds, batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert all(b[0].device == device for b in batches)
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), X)
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]), y)
    assert batches[0][1].dtype == lucid.Int64 and batches[0][0].dtype == lucid.Float32


def test_drop_last():
    X, y = _xy(10)
    loader = DataLoader(TensorDataset(X, y), batch_size=4, drop_last=True)
    assert len(loader) == 2
    assert [b[0].shape[0] for b in loader] == [4, 4]
    exact = DataLoader(TensorDataset(X, y), batch_size=5, drop_last=True)
    assert len(exact) == 2 and len(list(exact)) == 2


@pytest.mark.parametrize("device", DEVICES)
def test_shuffle_is_seeded_by_lucid_random(device):
    X, y = _xy(50)
    ds = TensorDataset(X, y).to(device)

    def epoch_orders(seed):
        lucid.random.seed(seed)
        loader = DataLoader(ds, batch_size=8, shuffle=True)
        return [np.concatenate([yb.numpy() for _, yb in loader]) for _ in range(2)]

    a1, a2 = epoch_orders(0)
    b1, b2 = epoch_orders(0)
    c1, _ = epoch_orders(1)
    np.testing.assert_array_equal(a1, b1)  # same seed, same order
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # each pass draws a new order
    assert not np.array_equal(a1, c1)  # another seed, another order
    assert sorted(a1.tolist()) == list(range(50))  # every sample once per pass
    lucid.random.seed(0)
    np.testing.assert_array_equal(a1, lucid.random.permutation(50).numpy())
    # rows stay paired: X[i] travels with y[i]
    lucid.random.seed(3)
    for xb, yb in DataLoader(ds, batch_size=8, shuffle=True):
        np.testing.assert_array_equal(xb.numpy(), X[yb.numpy()])


def test_tensor_dataset_batches_are_gathered_in_one_step_not_per_item():
    X, y = _xy(20)

    class NoItems(TensorDataset):
        def __getitem__(self, index):
            raise AssertionError("the DataLoader fetched a single item")

    batches = list(DataLoader(NoItems(X, y), batch_size=6, shuffle=True))
    assert sum(b[0].shape[0] for b in batches) == 20
    # and a Subset of a TensorDataset takes the same path
    sub = Subset(NoItems(X, y), [5, 1, 7])
    (xb, yb), = list(DataLoader(sub, batch_size=3))
    np.testing.assert_array_equal(yb.numpy(), [5, 1, 7])


def test_gather_equals_stacking_items_and_checks_indices():
    X, y = _xy(12)
    ds = TensorDataset(X, y)
    idx = [7, 0, 11, 3]
    fast = ds.gather(idx)
    slow = default_collate([ds[i] for i in idx])
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype == b.dtype
    with pytest.raises(IndexError, match="out of range"):
        ds.gather([0, 12])


@needs_mlx
def test_gpu_gather_checks_indices_mlx_would_not():
    X, y = _xy(5)
    ds = TensorDataset(X, y).to("gpu")
    with pytest.raises(IndexError, match="index 7"):
        ds.gather([1, 7])
    with pytest.raises(IndexError):
        ds[5]


def test_custom_dataset_with_dict_samples_and_default_collate():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": np.array([i, i + 1.0]), "y": i * i, "name": f"s{i}"}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    first = batches[0]
    np.testing.assert_array_equal(first["x"].numpy(), [[0.0, 1.0], [1.0, 2.0]])
    np.testing.assert_array_equal(first["y"].numpy(), [0, 1])
    assert first["name"] == ["s0", "s1"]


def test_plain_list_dataset_and_custom_collate_fn():
    data = [(np.float32(i), i % 2) for i in range(6)]
    xb, yb = next(iter(DataLoader(data, batch_size=3)))
    np.testing.assert_array_equal(xb.numpy(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(yb.numpy(), [0, 1, 0])
    seen = []
    loader = DataLoader(data, batch_size=4, collate_fn=lambda s: seen.append(s) or len(s))
    assert list(loader) == [4, 2]
    assert seen[0][0] == data[0]


def test_collate_of_tensor_samples_keeps_device_and_dtype():
    samples = [lucid.Tensor(np.full(3, i, np.float16)) for i in range(4)]
    batch = default_collate(samples)
    assert batch.shape == (4, 3) and batch.dtype == lucid.Float16
    pairs = default_collate([(s, s.sum()) for s in samples])
    assert isinstance(pairs, tuple) and pairs[1].shape == (4,)


def test_collate_of_tensors_that_require_grad_is_differentiable():
    a = lucid.Tensor([1.0, 2.0], requires_grad=True)
    b = lucid.Tensor([3.0, 4.0], requires_grad=True)
    (default_collate([a, b]) * lucid.Tensor([[1.0, 1.0], [2.0, 2.0]])).sum().backward()
    np.testing.assert_array_equal(a.grad, [1.0, 1.0])
    np.testing.assert_array_equal(b.grad, [2.0, 2.0])


def test_collate_errors():
    with pytest.raises(ValueError, match=r"different shapes.*\(2,\).*\(3,\)"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="different lengths"):
        default_collate([(1, 2), (1,)])
    with pytest.raises(TypeError, match="cannot batch"):
        default_collate([object(), object()])


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"batch_size": 2.0}, ValueError, "batch_size"),
    ({"batch_size": True}, ValueError, "batch_size"),
    ({"shuffle": "yes"}, TypeError, "shuffle"),
    ({"collate_fn": 3}, TypeError, "collate_fn"),
])
def test_dataloader_argument_errors(kwargs, exc, match):
    X, y = _xy()
    with pytest.raises(exc, match=match):
        DataLoader(TensorDataset(X, y), **kwargs)


def test_dataloader_rejects_a_non_dataset():
    with pytest.raises(TypeError, match="len"):
        DataLoader(5)


def test_empty_dataset_gives_no_batches():
    ds = TensorDataset(np.zeros((0, 2)))
    assert list(DataLoader(ds, batch_size=3, shuffle=True)) == []


# --------------------------------------------------------------------------------------------
# Subset and random_split


def test_subset_items_and_nested_subsets():
    X, y = _xy(10)
    ds = TensorDataset(X, y)
    sub = Subset(ds, [9, 2, 4])
    assert len(sub) == 3 and sub[0][1].item() == 9
    inner = Subset(sub, [2, 0])
    np.testing.assert_array_equal(inner.gather([0, 1])[1].numpy(), [4, 9])
    with pytest.raises(IndexError):
        Subset(ds, [10])


def test_random_split_with_lengths_is_a_seeded_partition():
    X, y = _xy(20)
    ds = TensorDataset(X, y)
    lucid.random.seed(5)
    parts = random_split(ds, [12, 5, 3])
    assert [len(p) for p in parts] == [12, 5, 3]
    together = np.concatenate([p.indices for p in parts])
    assert sorted(together.tolist()) == list(range(20))
    lucid.random.seed(5)
    again = random_split(ds, [12, 5, 3])
    for p, q in zip(parts, again):
        np.testing.assert_array_equal(p.indices, q.indices)
    lucid.random.seed(5)
    np.testing.assert_array_equal(together, lucid.random.permutation(20).numpy())


def test_random_split_with_fractions_spreads_the_remainder():
    ds = TensorDataset(np.zeros((11, 1)))
    parts = random_split(ds, [0.5, 0.3, 0.2])  # floors 5, 3, 2; one left over -> first part
    assert [len(p) for p in parts] == [6, 3, 2]
    train, val = random_split(ds, [0.8, 0.2])
    assert len(train) + len(val) == 11


@pytest.mark.parametrize("lengths,exc", [
    ([5, 5], ValueError),
    ([12, -1], ValueError),
    ([0.5, 0.6], ValueError),
    ([], ValueError),
    (["a", "b"], TypeError),
])
def test_random_split_errors(lengths, exc):
    with pytest.raises(exc):
        random_split(TensorDataset(np.zeros((11, 1))), lengths)


@pytest.mark.parametrize("device", DEVICES)
def test_subset_follows_its_indices_and_negative_positions(device):
    X, y = _xy(10)
    ds = TensorDataset(X, y).to(device)
    sub = Subset(ds, [9, 2, -1, 4])  # -1: the dataset's last sample, as in a list
    assert len(sub) == 4
    assert [sub[i][1].item() for i in range(4)] == [9, 2, 9, 4]
    assert sub[-1][1].item() == 4  # counts from the end of the subset
    assert sub[0][0].device == device
    np.testing.assert_array_equal(sub[1][0].numpy(), X[2])
    xb, yb = next(iter(DataLoader(sub, batch_size=4)))
    np.testing.assert_array_equal(yb.numpy(), [9, 2, 9, 4])
    np.testing.assert_array_equal(xb.numpy(), X[[9, 2, 9, 4]])


def test_subset_errors_name_the_index_and_the_size():
    ds = TensorDataset(np.zeros((5, 2)))
    with pytest.raises(IndexError, match=r"^Subset: index 5 is out of range for a dataset of 5 "
                                         r"samples$"):
        Subset(ds, [0, 5])
    with pytest.raises(IndexError, match=r"^Subset: index -6 is out of range for a dataset of "
                                         r"5 samples$"):
        Subset(ds, [-6])
    sub = Subset(ds, [1, 3])
    with pytest.raises(IndexError, match=r"^Subset: index 2 is out of range for a dataset of 2 "
                                         r"samples$"):
        sub[2]
    with pytest.raises(IndexError, match=r"index -3 is out of range for a dataset of 2"):
        sub[-3]
    with pytest.raises(TypeError, match=r"^Subset: a sample index must be an int, got float$"):
        sub[1.0]
    with pytest.raises(TypeError, match=r"Subset: indices must be integers, got float64"):
        Subset(ds, [0.0, 1.0])


@pytest.mark.parametrize("device", DEVICES)
def test_concat_dataset_items_cumulative_sizes_and_negative_indices(device):
    a = TensorDataset(np.arange(3.0).reshape(3, 1)).to(device)
    b = TensorDataset(np.arange(10.0, 12.0).reshape(2, 1)).to(device)
    c = TensorDataset(np.arange(20.0, 24.0).reshape(4, 1)).to(device)
    cat = ConcatDataset([a, b, c])
    assert len(cat) == 9 and cat.cumulative_sizes == [3, 5, 9]
    values = [cat[i][0].item() for i in range(9)]
    assert values == [0.0, 1.0, 2.0, 10.0, 11.0, 20.0, 21.0, 22.0, 23.0]
    assert [cat[-i][0].item() for i in range(1, 10)] == values[::-1]
    assert cat[3][0].device == device
    # batches cross the boundaries between datasets; the DataLoader sees one dataset
    batches = [xb.numpy().ravel().tolist() for (xb,) in DataLoader(cat, batch_size=4)]
    assert batches == [values[:4], values[4:8], values[8:]]
    assert repr(cat) == "ConcatDataset(9 samples from 3 datasets: 3, 2, 4)"


def test_concat_dataset_of_lists_empty_parts_and_nesting():
    cat = ConcatDataset([[1, 2], [], ["x"], ConcatDataset([[7], [8, 9]])])
    assert cat.cumulative_sizes == [2, 2, 3, 6]
    assert [cat[i] for i in range(len(cat))] == [1, 2, "x", 7, 8, 9]
    assert cat[2] == "x" and cat[-4] == "x"  # the empty dataset holds no index


def test_concat_dataset_errors():
    cat = ConcatDataset([[1, 2], [3]])
    with pytest.raises(IndexError, match=r"^ConcatDataset of 2 datasets: index 3 is out of "
                                         r"range for a dataset of 3 samples$"):
        cat[3]
    with pytest.raises(IndexError, match=r"^ConcatDataset of 2 datasets: index -4 is out of "
                                         r"range for a dataset of 3 samples$"):
        cat[-4]
    with pytest.raises(TypeError, match=r"a sample index must be an int, got str"):
        cat["0"]
    with pytest.raises(ValueError, match=r"^ConcatDataset: datasets should not be an empty "
                                         r"iterable"):
        ConcatDataset([])
    with pytest.raises(TypeError, match=r"^ConcatDataset: datasets must be a list of datasets, "
                                        r"got TensorDataset; wrap one in a list$"):
        ConcatDataset(TensorDataset(np.zeros((2, 1))))
    with pytest.raises(TypeError, match=r"^ConcatDataset: dataset 1 is of type int, which has no "
                                        r"len\(\) and \[i\]"):
        ConcatDataset([[1], 5])


def test_concat_dataset_and_subset_match_pytorch_when_available():
    torch_data = pytest.importorskip("torch.utils.data")
    parts = [list(range(3)), list(range(10, 12)), [], list(range(20, 24))]
    ours, theirs = ConcatDataset(parts), torch_data.ConcatDataset(parts)
    assert ours.cumulative_sizes == theirs.cumulative_sizes and len(ours) == len(theirs)
    assert [ours[i] for i in range(-9, 9)] == [theirs[i] for i in range(-9, 9)]
    idx = [4, 0, -2, 7]
    assert [Subset(ours, idx)[i] for i in range(4)] == [
        torch_data.Subset(theirs, idx)[i] for i in range(4)]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_tensor_dataset_slices_as_pytorch(device):
    if device == "gpu":
        pytest.importorskip("mlx.core")
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10)
    ds = TensorDataset(X, y).to(device)
    for index in (slice(None, 4), slice(2, 9, 3), slice(None, None, -1), slice(8, 100)):
        xs, ys = ds[index]
        np.testing.assert_array_equal(xs.numpy(), X[index])
        np.testing.assert_array_equal(ys.numpy(), y[index])
        assert xs.device == device
    xs, ys = ds[5:5]
    assert xs.shape == (0, 2) and ys.shape == (0,)
