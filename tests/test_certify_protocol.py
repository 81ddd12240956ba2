"""The certificate as half of the method protocol: every method class exported by ``unlearnkit.methods`` has

    certify(self, state, request, config) -> Plan

computed before any unlearning work, and its ``unlearn`` issues the same certificate. The classes are discovered
as ``tests/test_calling_shape.py`` discovers them, so a method exported later is checked without editing this
file. The behaviour tests run ``certify`` with every gradient of the model wrapper made to raise (no training),
then ``unlearn``, on small real states.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch

import unlearnkit as uk
import unlearnkit.methods as M
from unlearnkit.core import NoisePoint, Plan, Request
from unlearnkit.models import FlatParams

P = inspect.Parameter


def method_classes() -> dict[str, type]:
    out = {}
    for name in M.__all__:
        obj = getattr(M, name)
        if inspect.isclass(obj) and callable(getattr(obj, "unlearn", None)):
            out[name] = obj
    return out


@pytest.mark.parametrize("name", sorted(method_classes()))
def test_certify_has_the_shared_signature_and_returns_a_plan(name):
    cls = method_classes()[name]
    assert callable(getattr(cls, "certify", None)), f"{name} has no certify(state, request, config) -> Plan"
    sig = inspect.signature(cls.certify, eval_str=True)
    params = list(sig.parameters.values())
    assert [p.name for p in params] == ["self", "state", "request", "config"], f"{name}.certify{sig}"
    assert all(p.kind is P.POSITIONAL_OR_KEYWORD for p in params), f"{name}.certify{sig}: plain positional parameters"
    ret = sig.return_annotation
    if isinstance(ret, str):  # a forward reference written as a string
        ret = vars(inspect.getmodule(cls)).get(ret, ret)
    assert ret is Plan, f"{name}.certify{sig} must be annotated -> Plan"


_GRADIENTS = ("forward", "loss", "sample_losses", "predict", "grad", "value_and_grad", "per_sample_grads", "hvp",
              "hessian", "batched_grad")


def _no_training(monkeypatch):
    """Every evaluation of the model raises: certify must compute its plan without touching the data's losses."""
    def refuse(*args, **kwargs):
        raise AssertionError("certify evaluated the model: it must run before any unlearning work")

    for attr in _GRADIENTS:
        monkeypatch.setattr(FlatParams, attr, refuse)


def _certify_then_unlearn(method, state, request, config, seed=0):
    with pytest.MonkeyPatch.context() as mp:
        _no_training(mp)
        plan = method.certify(state, request, config)
    assert isinstance(plan, Plan) and all(isinstance(p, NoisePoint) for p in plan.noise)
    res = method.unlearn(state, request, config, generator=uk.make_generator(seed))
    return plan, res


# ------------------------------------------------------------------------------------------------------------
# centralized: R2D and output perturbation
# ------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def central():
    from unlearnkit.models import make_model
    from unlearnkit.train import SGDConfig, train_sgd

    torch.set_num_threads(1)
    ds = uk.data.load("synthetic", device="cpu", n_train=300, n_test=100, dim=5, seed=3)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    cfg = SGDConfig(steps=100, lr=0.5, batch_size=8, weight_decay=0.05, radius=5.0, checkpoint_every=25)
    state = train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))
    req = Request("samples", np.nonzero(ds.y_train.numpy() == 1)[0][:40])
    return state, req


def test_r2d_certifies_before_replaying(central):
    from unlearnkit.constants import logistic_constants
    from unlearnkit.methods.descend_rewind import r2d

    state, req = central
    cfg = r2d.R2DConfig(K=50, epsilon=1.0, constants=logistic_constants(lam=0.05, radius=5.0))
    plan, res = _certify_then_unlearn(r2d.R2D(), state, req, cfg)
    assert plan.certificate == res.certificate and plan.certificate.sigma > 0
    assert plan.point("output noise").sigma == pytest.approx(res.extras["sigma"])


def test_output_perturbation_certifies_before_perturbing(central):
    from unlearnkit.methods import noisy_finetune as nf

    state, req = central
    cfg = nf.OutputPerturbationConfig(C0=0.5, finetune=nf.CleanFinetuneConfig(steps=5, lr=0.5, batch_size=8))
    plan, res = _certify_then_unlearn(nf.OutputPerturbation(), state, req, cfg)
    assert plan.certificate == res.certificate
    assert plan.point("output perturbation").sensitivity == pytest.approx(1.0)  # two models clipped to 0.5


# ------------------------------------------------------------------------------------------------------------
# decentralized: Newton, PDUDT, RR-DU
# ------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def newton_world():
    from unlearnkit.experiments.newton.audit import NewtonAuditTask, _setup
    from unlearnkit.methods.newton.training import train_dpsgd

    torch.set_num_threads(1)
    flat, fed, G, cfg, request, _, init = _setup(NewtonAuditTask())
    return train_dpsgd(flat, fed, G, cfg, generator=torch.Generator().manual_seed(0), init=init), request


def test_newton_certifies_before_the_newton_step(newton_world):
    from unlearnkit.methods.newton import Newton, NewtonConfig

    state, request = newton_world
    with pytest.MonkeyPatch.context() as mp:  # the guard bites: the Newton step evaluates the model
        _no_training(mp)
        with pytest.raises(AssertionError, match="certify evaluated the model"):
            Newton().unlearn(state, request, NewtonConfig(mode="paper", scope="global"),
                             generator=uk.make_generator(0))
    plan, res = _certify_then_unlearn(Newton(), state, request, NewtonConfig(mode="paper"))
    assert plan.certificate == res.certificate and plan.certificate.mode == "paper"
    point = plan.point("newton.average")
    weight = res.extras["weight"]
    assert point.sigma == pytest.approx(weight * math.sqrt(sum(s ** 2 for s in res.extras["sigmas"].values())))


def test_newton_sound_plan_is_the_issued_certificate_when_the_run_checks_pass(newton_world):
    from unlearnkit.methods.newton import Newton, NewtonConfig

    state, request = newton_world
    cfg = NewtonConfig(mode="sound", grad_tol=1.0, scope="global", center_gradient=True)
    plan, res = _certify_then_unlearn(Newton(), state, request, cfg)
    cert = res.certificate
    assert cert.certified and not res.extras["clipped"]
    # the issued certificate also records the gradient the run measured; everything else is the plan's
    assert cert.constants["measured_grad"] == pytest.approx(res.extras["grad_norm"])
    assert plan.certificate.constants["measured_grad"] is None
    strip = lambda c: {k: v for k, v in c.constants.items() if k != "measured_grad"}  # noqa: E731
    assert (cert.epsilon, cert.delta, cert.sigma, cert.mode, cert.note) == (
        plan.certificate.epsilon, plan.certificate.delta, plan.certificate.sigma, plan.certificate.mode,
        plan.certificate.note)
    assert strip(cert) == strip(plan.certificate)
    assert plan.point("newton.average").sensitivity == cert.constants["sensitivity"]
    # a run check that fails withdraws it: the measured gradient above a tight grad_tol
    tight = Newton().unlearn(state, request, NewtonConfig(mode="sound", grad_tol=1e-3, scope="global",
                                                          center_gradient=True), generator=uk.make_generator(0))
    assert Newton().certify(state, request, NewtonConfig(mode="sound", grad_tol=1e-3, scope="global",
                                                         center_gradient=True)).certified
    assert not tight.certificate.certified


def test_pdudt_certifies_before_the_correction():
    from unlearnkit.experiments.pdudt import frontier as F
    from unlearnkit.methods import pdudt as PD

    torch.set_num_threads(1)
    w = F.certified_world(F.CertifiedPDUDT(n_clients=5, leaver=4, t1=20, lr=0.2, batch_size=16))
    smooth = PD.sound.GossipSmoothness.softmax_regression(1.0, bias=False)
    for scope in ("clients", "average"):
        cfg = PD.PDUDTConfig(noise="certified", mode="sound", smoothness=smooth, epsilon=1.0, scope=scope)
        plan, res = _certify_then_unlearn(PD.PDUDT(), w["state"], w["request"], cfg)
        assert plan.certificate == res.certificate
        point = plan.noise[0]
        assert point.name == f"pdudt.{scope}"
        root = math.sqrt(4) if scope == "clients" else 1.0
        assert point.sigma == pytest.approx(root * res.certificate.sigma)
        assert point.sensitivity == pytest.approx(root * res.certificate.constants["sensitivity"])


@pytest.fixture(scope="module")
def walk_world():
    from unlearnkit.experiments.rrdu.audit import WalkAuditTask, walk_setup
    from unlearnkit.methods.rrdu.noisy import NoisyWalkConfig, NoisyWalkTraining

    torch.set_num_threads(1)
    flat, fed, req, init, token = walk_setup(WalkAuditTask(train_hops=4, T_unlearn=4))
    noisy = NoisyWalkTraining().train(flat, fed, NoisyWalkConfig(token=token, hops=4, L=1.0, epsilon=1.0),
                                      generator=torch.Generator().manual_seed(0), init=init)
    return noisy, req


def test_rrdu_certifies_before_the_walk(walk_world):
    from unlearnkit.methods.rrdu import RRDU, RRDUConfig
    from unlearnkit.methods.rrdu.accountants import ACCOUNTANTS

    state, req = walk_world
    cfg = RRDUConfig(T_unlearn=4, variant="lightweight", clip_L=1.0, accountant="M", epsilon=3.0)
    plan, res = _certify_then_unlearn(RRDU(), state, req, cfg)
    assert plan.certificate == res.certificate and res.certificate.certified
    assert plan.point("rrdu.u_step").sigma == res.extras["sigma"] > 0
    assert set(ACCOUNTANTS) == {"A", "B", "C", "D", "S", "M"}
    # accountant S reads the realised route: a-priori without one, the issued certificate with a fixed route
    s_cfg = RRDUConfig(T_unlearn=4, variant="lightweight", clip_L=1.0, accountant="S", epsilon=3.0)
    drawn = RRDU().unlearn(state, req, s_cfg, generator=uk.make_generator(1))
    assert "a-priori" in RRDU().certify(state, req, s_cfg).certificate.note
    fixed = RRDU(route=drawn.extras["path"])
    plan, res = _certify_then_unlearn(fixed, state, req, s_cfg, seed=1)
    assert plan.certificate == res.certificate == drawn.certificate
    assert plan.point("rrdu.u_step").count == int(np.sum(np.asarray(drawn.extras["path"]) == drawn.extras["u"]))
