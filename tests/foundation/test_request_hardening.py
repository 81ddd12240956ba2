"""A forget request cannot change after validation, and every method refuses requests it does not certify.

Each test checks that no result (so no certificate) comes back: the method raises a ``ValueError`` instead.
"""

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import data, methods
from unlearnkit.core import Request, TrainedState, check_request_fits
from unlearnkit.decentral.gradient_gossip import GradientGossipConfig, run_gradient_gossip
from unlearnkit.decentral.token import TokenConfig
from unlearnkit.graphs import make_graph
from unlearnkit.graphs.dynamic import ErdosRenyiSchedule
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.methods import pdudt as P
from unlearnkit.methods.newton import GossipRetrain, Newton, NewtonConfig
from unlearnkit.methods.rrdu import RRDU, DDPWalk, DDPWalkConfig, NoisyDDP, NoisyDDPConfig, RRDUConfig
from unlearnkit.models import FlatParams, logreg
from unlearnkit.train import SGDConfig, train_sgd

OP = nf.OutputPerturbationConfig(C0=0.5, finetune=nf.CleanFinetuneConfig(steps=2, lr=0.5, batch_size=8))


def gen():
    return uk.make_generator(0)


@pytest.fixture(scope="module")
def central():
    torch.set_num_threads(1)
    ds = data.load("synthetic", device="cpu", n_train=200, n_test=50, dim=5, seed=3)
    flat = FlatParams(logreg(ds.input_shape, 1, bias=False), loss="logistic")
    cfg = SGDConfig(steps=10, lr=0.5, batch_size=8, weight_decay=0.05, radius=5.0, checkpoint_every=5)
    return train_sgd(flat, ds, None, cfg, generator=gen(), init=torch.zeros(flat.d))


@pytest.fixture(scope="module")
def federated():
    """4 clients of 60 samples (token walk, Newton and gossip states all read ``federation``)."""
    ds = data.load("synthetic", device="cpu", n_train=240, n_test=40, dim=4, seed=1)
    fed = data.partition(ds, 4, seed=0)
    flat = FlatParams(logreg((4,), 1), loss="logistic")
    state = TrainedState(flat=flat, params=torch.zeros(flat.d), dataset=ds, train_indices=np.arange(ds.n_train),
                         federation=fed, network=make_graph("ring", 4))
    return fed, state


def test_indices_are_a_read_only_private_copy():
    raw = np.array([3, 2])
    r = Request("samples", raw)
    raw[0] = -1  # the caller's array is not the request's
    assert r.indices.tolist() == [2, 3]
    with pytest.raises(ValueError, match="read-only"):
        r.indices[:] = [-1, 3]
    with pytest.raises(ValueError, match="read-only"):
        r.indices.sort()
    assert r.indices.tolist() == [2, 3]


SWAPPED = [([-1, 3], r"contains -1, out of range.*\[0, 199\]"),
           ([3, -1], r"contains -1, out of range"),
           ([10**6, 3], r"contains 1000000, out of range.*\[0, 199\]"),
           ([3, 10**6, 4], r"contains 1000000, out of range"),
           ([200, 3], r"contains 200, out of range"),
           ([3, 3], r"1 duplicate entries \(e\.g\. \[3\]\)"),
           ([7, 3, 7], r"duplicate entries")]


def _swapped(indices):
    """A request whose indices were replaced after construction, past the frozen dataclass."""
    r = Request("samples", [2, 3])
    object.__setattr__(r, "indices", np.asarray(indices))
    return r


@pytest.mark.parametrize("indices, match", SWAPPED)
def test_the_validator_checks_the_whole_array(indices, match):
    with pytest.raises(ValueError, match=match):
        check_request_fits(_swapped(indices), n_train=200)


@pytest.mark.parametrize("indices, match", SWAPPED)
def test_a_tampered_request_gets_no_certificate(central, indices, match):
    with pytest.raises(ValueError, match=match):
        nf.OutputPerturbation().unlearn(central, _swapped(indices), OP, generator=gen())


def test_every_method_class_states_its_request_kinds():
    classes = [getattr(methods, n) for n in methods.__all__]
    classes = [c for c in classes if isinstance(c, type) and hasattr(c, "unlearn") and c is not methods.Unlearner]
    assert len(classes) == 17
    for cls in classes:
        kinds = cls.request_kinds
        assert kinds and set(kinds) <= {"samples", "class", "client"}, cls
        assert getattr(cls, "client_scope", None) in (None, "part", "whole"), cls
        assert "Requests:" in (cls.__doc__ or ""), f"{cls.__name__}'s docstring does not say which requests it takes"


@pytest.mark.parametrize("method, config", [(nf.OutputPerturbation(), OP),
                                            (methods.D2D(), methods.D2DConfig(K=2, constants=uk.constants
                                                                              .logistic_constants(lam=0.05,
                                                                                                  radius=5.0))),
                                            (methods.Retrain(), methods.RetrainConfig())])
def test_centralized_methods_refuse_client_requests(central, method, config):
    with pytest.raises(ValueError, match=r"request\.kind='client' is not supported.*'samples', 'class'"):
        method.unlearn(central, Request("client", [0, 1]), config, generator=gen())


def test_client_requests_must_name_an_existing_client(federated):
    fed, state = federated
    own = fed.client_indices[1]
    for method, config in [(NoisyDDP(), NoisyDDPConfig()), (Newton(), NewtonConfig()), (GossipRetrain(), None)]:
        kw = {} if config is None else {"config": config}
        with pytest.raises(ValueError, match=r"request\.client=None is out of range.*\[0, 3\]"):
            method.unlearn(state, Request("client", own), generator=gen(), **kw)
        with pytest.raises(ValueError, match=r"request\.client=99 is out of range.*\[0, 3\]"):
            method.unlearn(state, Request("client", own, client=99), generator=gen(), **kw)
        with pytest.raises(ValueError, match=r"request\.client=99 is out of range"):
            method.unlearn(state, Request("samples", own[:3], client=99), generator=gen(), **kw)
        # a client request names every sample of its client
        with pytest.raises(ValueError, match=r"names 59 of the 60 samples that client 1 holds"):
            method.unlearn(state, Request("client", own[1:], client=1), generator=gen(), **kw)


def test_rrdu_deletes_part_of_one_client(federated):
    fed, state = federated
    cfg = RRDUConfig(T_unlearn=5, clip_L=1.0)
    own = fed.client_indices[2]
    with pytest.raises(ValueError, match=r"request\.kind='client' is not supported"):
        RRDU().unlearn(state, Request("client", own, client=2), cfg, generator=gen())
    with pytest.raises(ValueError, match=r"all 60 samples of client 2.*keep at least one"):
        RRDU().unlearn(state, Request("samples", own, client=2), cfg, generator=gen())
    with pytest.raises(ValueError, match=r"without a client"):
        RRDU().unlearn(state, Request("samples", own[:3]), cfg, generator=gen())
    res = RRDU().unlearn(state, Request("samples", own[:3], client=2), cfg, generator=gen())
    assert res.certificate is not None


def test_walk_baselines_refuse_a_client_leaving(federated):
    fed, state = federated
    cfg = DDPWalkConfig(token=TokenConfig(lr=0.1, batch_size=8), hops=3)
    with pytest.raises(ValueError, match=r"request\.kind='client' is not supported"):
        DDPWalk().unlearn(state, Request("client", fed.client_indices[0], client=0), cfg, generator=gen())


@pytest.fixture(scope="module")
def gossip():
    torch.set_num_threads(1)
    ds = data.load("synthetic", n_train=120, n_test=30, dim=4, seed=0, device="cpu")
    fed = data.partition(ds, 4, "iid", seed=0)
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    cfg = GradientGossipConfig(rounds=4, lr=0.5, batch_size=8, cache="history")
    return fed, run_gradient_gossip(flat, fed, ErdosRenyiSchedule(4, 0.6, seed=1), cfg, generator=gen())


def test_pdudt_refuses_partial_client_requests(gossip):
    fed, state = gossip
    own = fed.client_indices[2]
    cfg = P.PDUDTConfig(sigma=0.0)
    for req in (Request("samples", own[:5], client=2), Request("samples", own[:5])):
        with pytest.raises(ValueError, match=r"names 5 of the 30 samples of client 2.*partial-client request is "
                                             r"refused|without a client"):
            P.PDUDT().unlearn(state, req, cfg, generator=gen())
    with pytest.raises(ValueError, match=r"request\.kind='class' is not supported"):
        P.PDUDT().unlearn(state, Request("class", own[:1], client=2, label=0), cfg, generator=gen())
    # a whole client, as a client request or as every one of its samples
    for req in (Request("client", own, client=2), Request("samples", own, client=2)):
        assert P.PDUDT().unlearn(state, req, cfg, generator=gen()).extras["leaver"] == 2
