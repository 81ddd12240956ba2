"""Hostile data files (issue 18, findings 1 and 6): no code runs, every malformed file gets one clear error."""

import gzip
import io
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from unlearnkit import data as D
from unlearnkit.data import datasets as DS

BATCHES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]


_KEEP = object()


def _batch(n=4, seed=0, data=_KEEP, labels=_KEEP):
    rng = np.random.default_rng(seed)
    b = {b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), b"labels": rng.integers(0, 10, n).tolist()}
    if data is not _KEEP:
        b[b"data"] = data
    if labels is not _KEEP:
        b[b"labels"] = labels
    return b


def _archive(folder, blobs):
    """A cifar-10-python.tar.gz in ``folder/cifar10`` with the given member name -> bytes."""
    (folder / "cifar10").mkdir(exist_ok=True)
    path = folder / "cifar10" / "cifar-10-python.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, blob in blobs.items():
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return path


def _good_blobs(**replace):
    blobs = {n: pickle.dumps(_batch(seed=i), protocol=4) for i, n in enumerate(BATCHES)}
    blobs.update(replace)
    return blobs


class _Evil:
    def __init__(self, marker, how):
        self.marker, self.how = marker, how

    def __reduce__(self):
        if self.how == "eval":
            import builtins

            return builtins.eval, (f"open({str(self.marker)!r}, 'w').close()",)
        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("how", ["system", "eval"])
def test_malicious_cifar_archive_runs_no_code(tmp_path, how):
    marker = tmp_path / "pwned"
    evil = pickle.dumps({b"data": _Evil(marker, how), b"labels": [0]}, protocol=4)
    archive = _archive(tmp_path, _good_blobs(data_batch_1=evil))
    global_name = "posix.system" if how == "system" else "builtins.eval"
    with pytest.raises(D.parsers.DatasetCorruptError) as err:
        D.load("cifar10", root=tmp_path, device="cpu")
    assert not marker.exists()
    msg = str(err.value)
    assert str(archive) in msg and "data_batch_1" in msg and "refused" in msg
    assert global_name.split(".")[1] in msg


def test_safe_unpickler_admits_only_numpy_arrays():
    arr = np.arange(6, dtype=np.uint8).reshape(2, 3)
    out = D.parsers.SafeUnpickler(io.BytesIO(pickle.dumps(arr, protocol=4)), source="x").load()
    assert np.array_equal(out, arr)
    for obj in (io.BytesIO, np.load, __import__("collections").OrderedDict(), pickle.loads):
        with pytest.raises(D.parsers.DatasetCorruptError, match="x: refused to load the global"):
            D.parsers.SafeUnpickler(io.BytesIO(pickle.dumps(obj, protocol=4)), source="x").load()


def test_corrupt_error_is_a_value_error():
    assert issubclass(D.parsers.DatasetCorruptError, ValueError)


@pytest.mark.parametrize("case, match", [
    ("random", "not a readable tar.gz"),
    ("truncated", "truncated"),
    ("not_pickle", "not a readable CIFAR-10 batch"),
    ("list", "expected a dict"),
    ("no_keys", "no 'data' and 'labels'"),
    ("data_str", "'data' must be a uint8 array, got str"),
    ("data_float", "'data' must be a uint8 array, got an array of float64"),
    ("data_shape", r"shape \(n, 3072\)"),
    ("labels_str", "'labels' must be a list of integers"),
    ("labels_range", "labels must lie in 0..9"),
    ("labels_count", "3 labels for 4 images"),
    ("missing_batch", r"lacks the batches \['test_batch'\]"),
    ("folder", "is a folder"),
])
def test_corrupt_cifar_files(tmp_path, case, match):
    folder = tmp_path / "cifar10"
    folder.mkdir()
    archive = folder / "cifar-10-python.tar.gz"
    bad = {
        "not_pickle": b"this is plain text, not a pickle",
        "list": pickle.dumps([1, 2, 3], protocol=4),
        "no_keys": pickle.dumps({b"x": 1}, protocol=4),
        "data_str": pickle.dumps(_batch(data="abc"), protocol=4),
        "data_float": pickle.dumps(_batch(data=np.zeros((4, 3072))), protocol=4),
        "data_shape": pickle.dumps(_batch(data=np.zeros((4, 100), np.uint8)), protocol=4),
        "labels_str": pickle.dumps(_batch(labels=["a", "b", "c", "d"]), protocol=4),
        "labels_range": pickle.dumps(_batch(labels=[0, 1, 42, 3]), protocol=4),
        "labels_count": pickle.dumps(_batch(labels=[0, 1, 2]), protocol=4),
    }
    if case == "random":
        archive.write_bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    elif case == "truncated":
        _archive(tmp_path, _good_blobs())
        archive.write_bytes(archive.read_bytes()[:4000])
    elif case == "missing_batch":
        blobs = _good_blobs()
        del blobs["test_batch"]
        _archive(tmp_path, blobs)
    elif case == "folder":
        archive.mkdir()
    else:
        _archive(tmp_path, _good_blobs(data_batch_3=bad[case]))
    with pytest.raises(D.parsers.DatasetCorruptError, match=match) as err:
        D.load("cifar10", root=tmp_path, device="cpu")
    assert str(archive) in str(err.value) and "\n" not in str(err.value)


def test_unpacked_cifar_folder_with_a_folder_for_a_batch(tmp_path):
    unpacked = tmp_path / "cifar10" / "cifar-10-batches-py"
    unpacked.mkdir(parents=True)
    for i, n in enumerate(BATCHES):
        (unpacked / n).write_bytes(pickle.dumps(_batch(seed=i), protocol=4))
    assert D.load("cifar10", root=tmp_path, device="cpu").n_train == 20
    (unpacked / "test_batch").unlink()
    (unpacked / "test_batch").mkdir()
    with pytest.raises(D.parsers.DatasetCorruptError, match="test_batch is a folder"):
        D.load("cifar10", root=tmp_path, device="cpu")


def test_constant_channel_does_not_make_features_nan(tmp_path):
    blobs = {}
    for i, n in enumerate(BATCHES):
        b = _batch(seed=i)
        b[b"data"][:, :1024] = 7  # the red channel is constant everywhere
        blobs[n] = pickle.dumps(b, protocol=4)
    _archive(tmp_path, blobs)
    ds = D.load("cifar10", root=tmp_path, device="cpu")
    assert ds.x_train.isfinite().all() and ds.x_test.isfinite().all()
    assert float(ds.x_train[:, 0].abs().max()) < 1e-6


@given(st.binary(max_size=300))
def test_random_bytes_as_a_batch_give_a_corrupt_error(blob):
    try:
        D.parsers.read_cifar10_batch(io.BytesIO(blob), source="fuzz")
    except D.parsers.DatasetCorruptError as exc:
        assert "fuzz" in str(exc)


# ---- MNIST ---------------------------------------------------------------------------------------------

def _idx(array, code=0x08):
    return struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape) + \
        array.astype(array.dtype.newbyteorder(">")).tobytes()


def _mnist(tmp_path, **replace):
    rng = np.random.default_rng(0)
    folder = tmp_path / "mnist"
    folder.mkdir(exist_ok=True)
    files = {"train-images-idx3-ubyte.gz": _idx(rng.integers(0, 256, (6, 28, 28), dtype=np.uint8)),
             "train-labels-idx1-ubyte.gz": _idx(rng.integers(0, 10, 6, dtype=np.uint8)),
             "t10k-images-idx3-ubyte.gz": _idx(rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)),
             "t10k-labels-idx1-ubyte.gz": _idx(rng.integers(0, 10, 3, dtype=np.uint8))}
    for name, raw in files.items():
        if name in replace:
            continue
        with gzip.open(folder / name, "wb") as fh:
            fh.write(raw)
    for name, how in replace.items():
        path = folder / name
        if how == "folder":
            path.mkdir()
        elif how == "plain":
            path.write_bytes(files[name])
        elif how == "truncated_gz":
            path.write_bytes(gzip.compress(files[name])[:40])
        else:
            with gzip.open(path, "wb") as fh:
                fh.write(how)
    return folder


@pytest.mark.parametrize("name, how, match", [
    ("train-images-idx3-ubyte.gz", "plain", "not a gzip file"),
    ("train-images-idx3-ubyte.gz", "truncated_gz", "truncated"),
    ("train-images-idx3-ubyte.gz", "folder", "is a folder"),
    ("train-images-idx3-ubyte.gz", b"\x00\x00\x08\x03\x00", "truncated header"),
    ("train-images-idx3-ubyte.gz", b"\x00\x00\x42\x01", "unknown IDX type code 0x42"),
    ("train-images-idx3-ubyte.gz", b"\x07\x00\x08\x01", "bad magic"),
    ("train-images-idx3-ubyte.gz", _idx(np.zeros((6, 27, 28), np.uint8)), r"shape \(n >= 1, 28, 28\)"),
    ("train-images-idx3-ubyte.gz", _idx(np.zeros((6, 28, 28), ">i4"), 0x0C), "uint8 images"),
    ("train-labels-idx1-ubyte.gz", _idx(np.full(6, 12, np.uint8)), "labels must lie in 0..9"),
    ("train-labels-idx1-ubyte.gz", _idx(np.zeros(5, np.uint8)), "5 labels for 6 images"),
    ("t10k-labels-idx1-ubyte.gz", _idx(np.zeros((3, 2), np.uint8)), "1-D array of integers"),
])
def test_corrupt_mnist_files(tmp_path, name, how, match):
    folder = _mnist(tmp_path, **{name: how})
    with pytest.raises(D.parsers.DatasetCorruptError, match=match) as err:
        D.load("mnist", root=tmp_path, device="cpu")
    assert name in str(err.value) and str(folder) in str(err.value)


def test_good_fabricated_mnist_still_loads(tmp_path):
    _mnist(tmp_path)
    assert D.load("mnist", root=tmp_path, device="cpu").n_train == 6


@pytest.mark.parametrize("fraction, side", [(0.999, "training"), (0.001, "test")])
def test_digits_split_that_empties_a_class_is_refused(fraction, side):
    with pytest.raises(ValueError, match=f"test_fraction={fraction}.*no {side} rows"):
        D.load("digits", test_fraction=fraction, device="cpu")


# ---- downloads -----------------------------------------------------------------------------------------

def test_download_with_a_wrong_checksum_is_deleted(tmp_path, monkeypatch):
    def fake_fetch(url, dest):
        dest.write_bytes(b"not the real file")

    monkeypatch.setattr(DS, "_fetch_url", fake_fetch)
    with pytest.raises(D.parsers.DatasetCorruptError) as err:
        D.load("mnist", root=tmp_path, device="cpu", download=True)
    msg = str(err.value)
    assert "f68b3c2dcbeaaa9fbdd348bbdeb94873" in msg
    import hashlib

    assert hashlib.md5(b"not the real file").hexdigest() in msg
    assert list((tmp_path / "mnist").iterdir()) == []  # nothing left behind, not even the .part file
    with pytest.raises(D.parsers.DatasetCorruptError, match="c58f30108f718f92721af3b95e74349a"):
        D.load("cifar10", root=tmp_path, device="cpu", download=True)
    assert list((tmp_path / "cifar10").iterdir()) == []


def test_download_with_the_right_checksum_is_kept(tmp_path, monkeypatch):
    payload = b"pretend archive"
    import hashlib

    monkeypatch.setitem(DS._MD5, "cifar-10-python.tar.gz", hashlib.md5(payload).hexdigest())
    monkeypatch.setattr(DS, "_fetch_url", lambda url, dest: dest.write_bytes(payload))
    with pytest.raises(D.parsers.DatasetCorruptError, match="not a readable tar.gz"):  # kept, then parsed
        D.load("cifar10", root=tmp_path, device="cpu", download=True)
    assert (tmp_path / "cifar10" / "cifar-10-python.tar.gz").read_bytes() == payload
