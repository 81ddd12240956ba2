"""Data: offline datasets, federations of clients, forget requests and backdoors.

>>> import unlearnkit as uk
>>> ds = uk.data.load("digits", device="cpu")
>>> ds.input_shape, ds.n_classes
((1, 8, 8), 10)
"""

from .datasets import DATASETS, Dataset, DatasetUnavailableError, available, data_root, load
from .preprocess import scale_to_unit_ball, unit_ball_map
from .federated import (Backdoor, Federation, add_backdoor, forget_class, forget_client, forget_samples, partition,
                        renumbered, stamp_trigger, without_rows)
from .parsers import DatasetCorruptError, SafeUnpickler, read_cifar10_batch, read_idx

__all__ = ["DATASETS", "Dataset", "DatasetUnavailableError", "DatasetCorruptError", "available", "data_root", "load",
           "read_idx", "read_cifar10_batch", "SafeUnpickler", "scale_to_unit_ball", "unit_ball_map", "Federation", "partition",
           "forget_samples", "forget_class", "forget_client", "Backdoor", "add_backdoor", "stamp_trigger",
           "without_rows", "renumbered"]
