"""Regression: gossip mixes in the parameters' dtype (float64 parameters used to hit a float32 W)."""

import torch

import unlearnkit as uk
from unlearnkit.decentral.gossip import GossipConfig, run_gossip
from unlearnkit.graphs import topology
from unlearnkit.models import FlatParams, logreg


def test_float64_parameters_gossip_in_float64():
    ds = uk.data.load("synthetic", device="cpu", n_train=120, n_test=20, dim=5)
    ds = ds.to("cpu")
    ds64 = ds.__class__(ds.name, ds.x_train.double(), ds.y_train, ds.x_test.double(), ds.y_test, ds.n_classes,
                        ds.input_shape, ds.info)
    fed = uk.data.partition(ds64, 4, "iid", seed=0)
    flat = FlatParams(logreg((5,), 2).double())
    cfg = GossipConfig(rounds=3, lr=0.1, batch_size=8)
    state = run_gossip(flat, fed, topology.ring(4), cfg, generator=uk.make_generator(0))
    assert state.params.dtype == torch.float64 and state.params.shape == (4, flat.d)
