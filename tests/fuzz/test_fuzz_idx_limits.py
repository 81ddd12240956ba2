"""Hostile IDX files: a pipe or device is never read, a header that declares more than the limit is refused
before reading, and a gzip bomb is decompressed only one byte past what its header declares (refused fast,
in little memory)."""

from __future__ import annotations

import gzip
import os
import struct
import time
import tracemalloc

import numpy as np
import pytest
from fuzzkit import time_limit
from hypothesis import given
from hypothesis import strategies as st

from unlearnkit.data.parsers import DatasetCorruptError, read_idx
from unlearnkit.data.parsers import IDX_MAX_BYTES

MB = 1024 ** 2


def _header(*dims, code=0x08):
    return bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims)


def _bomb(path, header, members=1500):
    """A multi-member gzip file: the header, then ``members`` copies of one 1 MiB block of zeros (each member
    compresses to about 1 kB, so 1500 members are about 1.5 MB on disk and 1.5 GB decompressed)."""
    zeros = gzip.compress(b"\0" * MB, compresslevel=9)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(header))
        for _ in range(members):
            fh.write(zeros)
    return path


def test_a_gzip_bomb_is_refused_fast_in_little_memory(tmp_path):
    path = _bomb(tmp_path / "train-images-idx3-ubyte.gz", _header(100, 28, 28))
    assert 1.3 * MB < path.stat().st_size < 1.8 * MB
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(DatasetCorruptError, match="more data than that") as err, time_limit(5.0):
            read_idx(path)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(path) in str(err.value)
    assert seconds < 1.0 and peak < 20 * MB, (seconds, peak / MB)


def test_a_bomb_whose_header_declares_too_much_is_refused_before_reading(tmp_path):
    path = _bomb(tmp_path / "x.gz", _header(200000, 28, 28), members=20)
    with pytest.raises(DatasetCorruptError, match=f"over the limit of {IDX_MAX_BYTES} bytes"), time_limit(1.0):
        read_idx(path)


def test_an_uncompressed_file_larger_than_its_header_is_refused_before_reading(tmp_path):
    path = tmp_path / "x.idx"
    with open(path, "wb") as fh:
        fh.write(_header(2, 2))
        fh.truncate(64 * MB)                   # sparse: a large size, nothing to read
    with pytest.raises(DatasetCorruptError, match="header says"), time_limit(1.0):
        read_idx(path)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_pipe_or_device_is_refused_without_blocking(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "train-images-idx3-ubyte"
        os.mkfifo(path)
    else:
        path = "/dev/zero"
    with pytest.raises(DatasetCorruptError, match="not a regular file") as err, time_limit(2.0):
        read_idx(path)
    assert str(path) in str(err.value)


@given(dims=st.lists(st.integers(0, 2**32 - 1), min_size=0, max_size=4), extra=st.integers(-3, 3),
       gz=st.booleans())
def test_any_declared_shape_is_read_exactly_or_refused(tmp_path_factory, dims, extra, gz):
    n = int(np.prod(dims, dtype=object)) if dims else 1
    body = b"\x07" * max(0, min(n, 4096) + extra)
    path = tmp_path_factory.mktemp("idx") / ("f.idx.gz" if gz else "f.idx")
    data = _header(*dims) + body
    path.write_bytes(gzip.compress(data) if gz else data)
    with time_limit(2.0):
        try:
            arr = read_idx(path)
        except DatasetCorruptError as exc:
            assert str(path) in str(exc)
            return
    assert arr.shape == tuple(dims) and arr.size == len(body)


def test_a_bomb_declaring_just_under_the_limit_reads_at_most_the_limit(tmp_path):
    rows = IDX_MAX_BYTES // (28 * 28)
    path = _bomb(tmp_path / "x.gz", _header(rows, 28, 28), members=IDX_MAX_BYTES // MB + 2)
    with pytest.raises(DatasetCorruptError, match="more data than that"), time_limit(2.0):
        read_idx(path)
