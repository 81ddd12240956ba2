import gzip
import io
import pickle
import struct
import tarfile

import numpy as np
import dataclasses

import pytest
import torch

from unlearnkit import data as D


def test_digits_offline_shapes_and_split(digits):
    assert digits.input_shape == (1, 8, 8) and digits.n_classes == 10
    assert digits.n_train + digits.n_test == 1797
    assert digits.x_train.dtype == torch.float32 and digits.y_train.dtype == torch.int64
    assert 0.0 <= float(digits.x_train.min()) and float(digits.x_train.max()) <= 1.0
    # stratified: every class in both splits, test share close to 25% per class
    for c in range(10):
        n_tr = int((digits.y_train == c).sum())
        n_te = int((digits.y_test == c).sum())
        assert abs(n_te / (n_tr + n_te) - 0.25) < 0.02


def test_digits_split_is_deterministic_and_seeded():
    a, b = D.load("digits", device="cpu", seed=1), D.load("digits", device="cpu", seed=1)
    c = D.load("digits", device="cpu", seed=2)
    assert torch.equal(a.y_train, b.y_train) and torch.equal(a.x_train, b.x_train)
    assert not torch.equal(a.x_train, c.x_train)


def test_synthetic_rows_in_unit_ball(synthetic):
    assert float(synthetic.x_train.norm(dim=1).max()) <= 1.0 + 1e-6
    assert float(synthetic.x_test.norm(dim=1).max()) <= 1.0 + 1e-6
    assert set(synthetic.y_train.unique().tolist()) == {0, 1}
    assert synthetic.info["lipschitz_logistic"] == 1.0 and synthetic.info["smoothness_logistic"] == 0.25


@pytest.mark.parametrize("center", [False, True])
def test_scale_to_unit_ball_is_a_public_map(digits, center):
    s = D.preprocess.scale_to_unit_ball(digits, center=center)
    assert float(s.x_train.reshape(s.n_train, -1).norm(dim=1).max()) <= 1.0 + 1e-5
    assert float(s.x_test.reshape(s.n_test, -1).norm(dim=1).max()) <= 1.0 + 1e-5
    # the bound is the largest norm of any image in [0, 1]^64 (centred: [-1/2, 1/2]^64), not of a training row
    assert s.info["unit_ball_scale"] == (4.0 if center else 8.0)
    assert s.info["unit_ball_center"] == (0.5 if center else 0.0)
    # removing rows (the largest-norm one included) before the map changes no other row: a forget request
    # cannot move the preprocessing
    norms = digits.x_train.reshape(digits.n_train, -1).norm(dim=1)
    keep = torch.ones(digits.n_train, dtype=torch.bool)
    keep[int(norms.argmax())] = False
    smaller = dataclasses.replace(digits, x_train=digits.x_train[keep], y_train=digits.y_train[keep])
    s2 = D.preprocess.scale_to_unit_ball(smaller, center=center)
    assert torch.equal(s2.x_train, s.x_train[keep]) and torch.equal(s2.x_test, s.x_test)


def test_synthetic_scaling_is_per_row():
    """The synthetic loader scales each row by a public constant and clips it alone: the same rows whatever
    other rows are drawn (n_train changes only how many rows there are)."""
    a = D.load("synthetic", device="cpu", seed=3, n_train=50, n_test=10)
    assert float(a.x_train.norm(dim=1).max()) <= 1.0 + 1e-6
    assert D.preprocess.unit_ball_map(a) == (0.0, 1.0)


def test_unit_ball_map_needs_a_public_range(digits):
    no_range = dataclasses.replace(digits, info={k: v for k, v in digits.info.items() if k != "feature_range"})
    with pytest.raises(ValueError, match="feature_range"):
        D.preprocess.scale_to_unit_ball(no_range)


def test_mnist_offline_raises_with_fix(tmp_path):
    with pytest.raises(D.DatasetUnavailableError) as err:
        D.load("mnist", root=tmp_path, device="cpu")
    msg = str(err.value)
    assert "download=True" in msg and "train-images-idx3-ubyte.gz" in msg and str(tmp_path) in msg
    with pytest.raises(D.DatasetUnavailableError, match="download=True"):
        D.load("cifar10", root=tmp_path, device="cpu")


def _write_idx(path, array, code):
    header = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + array.astype(array.dtype.newbyteorder(">")).tobytes())


def test_mnist_parser_on_fabricated_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    folder = tmp_path / "mnist"
    folder.mkdir()
    xs = {"train": rng.integers(0, 256, (12, 28, 28), dtype=np.uint8), "t10k": rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)}
    ys = {"train": rng.integers(0, 10, 12, dtype=np.uint8), "t10k": rng.integers(0, 10, 5, dtype=np.uint8)}
    for split in ("train", "t10k"):
        _write_idx(folder / f"{split}-images-idx3-ubyte.gz", xs[split], 0x08)
        _write_idx(folder / f"{split}-labels-idx1-ubyte.gz", ys[split], 0x08)
    assert D.available(tmp_path)["mnist"]
    ds = D.load("mnist", root=tmp_path, device="cpu")
    assert ds.input_shape == (1, 28, 28) and ds.n_train == 12 and ds.n_test == 5
    np.testing.assert_allclose(ds.x_train[:, 0].numpy() * 255.0, xs["train"], atol=1e-3)
    assert ds.y_test.tolist() == ys["t10k"].tolist()


def test_read_idx_rejects_bad_magic_and_truncation(tmp_path):
    bad = tmp_path / "bad.idx"
    bad.write_bytes(b"\x01\x02\x08\x01" + struct.pack(">I", 3) + b"abc")
    with pytest.raises(ValueError, match="magic"):
        D.parsers.read_idx(bad)
    short = tmp_path / "short.idx"
    short.write_bytes(b"\x00\x00\x08\x01" + struct.pack(">I", 5) + b"ab")
    with pytest.raises(ValueError, match="header says"):
        D.parsers.read_idx(short)
    ints = tmp_path / "ints.idx"
    arr = np.arange(6, dtype=">i4").reshape(2, 3)
    ints.write_bytes(b"\x00\x00\x0c\x02" + struct.pack(">2I", 2, 3) + arr.tobytes())
    assert D.parsers.read_idx(ints).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_cifar10_parser_on_fabricated_archive(tmp_path):
    rng = np.random.default_rng(0)
    folder = tmp_path / "cifar10"
    folder.mkdir()
    labels = {}
    with tarfile.open(folder / "cifar-10-python.tar.gz", "w:gz") as tar:
        for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            data = rng.integers(0, 256, (4, 3072), dtype=np.uint8)
            labels[name] = rng.integers(0, 10, 4).tolist()
            blob = pickle.dumps({b"data": data, b"labels": labels[name]}, protocol=4)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    ds = D.load("cifar10", root=tmp_path, device="cpu")
    assert ds.input_shape == (3, 32, 32) and ds.n_train == 20 and ds.n_test == 4
    assert ds.y_test.tolist() == labels["test_batch"]
    # standardised per channel on the training split
    assert abs(float(ds.x_train.mean())) < 1e-4


@pytest.mark.parametrize("scheme", ["iid", "dirichlet", "shards"])
def test_partition_is_a_disjoint_cover(digits, scheme):
    fed = D.partition(digits, 7, scheme, alpha=0.3, seed=3)
    allidx = np.concatenate(fed.client_indices)
    assert len(allidx) == digits.n_train and len(np.unique(allidx)) == digits.n_train
    assert fed.n_clients == 7 and fed.sizes.min() >= 1
    assert fed.label_histogram().sum() == digits.n_train


def test_dirichlet_small_alpha_is_more_skewed(digits):
    def skew(alpha):
        h = D.partition(digits, 10, "dirichlet", alpha=alpha, seed=0).label_histogram().astype(float)
        p = h / h.sum(axis=1, keepdims=True)
        return float((p.max(axis=1)).mean())

    assert skew(0.05) > skew(100.0) + 0.3


def test_forget_requests(digits):
    fed = D.partition(digits, 5, "iid", seed=0)
    r = D.forget_samples(fed, 2, fraction=0.1, seed=1)
    assert r.kind == "samples" and r.client == 2 and np.isin(r.indices, fed.client_indices[2]).all()
    assert r.m == round(0.1 * fed.sizes[2])
    c = D.forget_class(digits, 4)
    assert (digits.y_train[torch.as_tensor(c.indices)] == 4).all() and c.m == int((digits.y_train == 4).sum())
    k = D.forget_client(fed, 1)
    assert np.array_equal(k.indices, fed.client_indices[1])
    assert len(fed.without(k).client_indices[1]) == 0
    with pytest.raises(ValueError, match="client"):
        D.forget_samples(fed, 9, m=1)
    with pytest.raises(ValueError, match="exactly one"):
        D.forget_samples(fed, 0)
    with pytest.raises(ValueError, match="label"):
        D.forget_class(digits, 10)


def test_backdoor_stamps_and_relabels(digits):
    fed = D.partition(digits, 4, "iid", seed=0)
    poisoned = fed.client_indices[0][:15]
    bd = D.federated.add_backdoor(digits, poisoned, target=0, patch=2)
    x = bd.dataset.x_train[torch.as_tensor(poisoned)]
    assert (x[..., -2:, -2:] == 1.0).all() and (bd.dataset.y_train[torch.as_tensor(poisoned)] == 0).all()
    clean = np.setdiff1d(np.arange(digits.n_train), poisoned)
    assert torch.equal(bd.dataset.x_train[torch.as_tensor(clean)], digits.x_train[torch.as_tensor(clean)])
    assert bd.x_test_triggered.shape[0] == int((digits.y_test != 0).sum())
    assert (bd.y_test_triggered == 0).all()
    assert np.array_equal(bd.request(client=0).indices, np.sort(poisoned))
    with pytest.raises(ValueError, match="patch"):
        D.federated.add_backdoor(digits, poisoned, patch=20)


def test_bad_dataset_name():
    with pytest.raises(ValueError, match="name='imagenet'"):
        D.load("imagenet")


def test_without_rows_keeps_every_other_row_at_its_client():
    """D minus D_f from raw data: the rows left keep their order, identity and client."""
    import numpy as np

    from unlearnkit.data import load, partition
    from unlearnkit.data.federated import renumbered, without_rows

    ds = load("digits", seed=0)
    fed = partition(ds, 4, "iid", seed=0)
    gone = np.array([3, fed.client_indices[2][0], ds.n_train - 1])
    small = without_rows(ds, gone)
    clients = renumbered(fed.client_indices, gone, ds.n_train)
    assert small.n_train == ds.n_train - 3 and sum(len(c) for c in clients) == small.n_train
    for before, after in zip(fed.client_indices, clients):
        kept = np.setdiff1d(before, gone)
        assert np.array_equal(small.info["row_ids"][after], kept)
        assert torch.equal(small.x_train[torch.as_tensor(after)], ds.x_train[torch.as_tensor(kept)])
