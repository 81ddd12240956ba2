"""Data: offline datasets, federations of clients, forget requests and backdoors.

>>> import unlearnkit as uk
>>> ds = uk.data.load("digits", device="cpu")
>>> ds.input_shape, ds.n_classes
((1, 8, 8), 10)
"""

from ..runtime import lazy_exports

__all__ = [
    "load", "available", "partition", "Federation", "forget_samples", "forget_class", "forget_client",
    "DatasetUnavailableError",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "load": ".datasets", "available": ".datasets", "partition": ".federated", "Federation": ".federated",
    "forget_samples": ".federated", "forget_class": ".federated", "forget_client": ".federated",
    "DatasetUnavailableError": ".datasets",
})
