"""No certificate without its assumptions: a delta above the requested one, or constants nobody verified."""

import math

import torch

import unlearnkit as uk
from unlearnkit import data
from unlearnkit.core import Request
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.methods import pdudt as P
from unlearnkit.models import FlatParams, logreg
from unlearnkit.train import SGDConfig, train_sgd

FT = nf.CleanFinetuneConfig(steps=2, lr=0.5, batch_size=8)


def test_model_clipping_with_a_short_fixed_T_is_not_certified():
    short = nf.ModelClippingConfig(C2=1.0, sigma=1.0, gamma=0.1, T=3, delta=1e-5, finetune=FT)
    cert = short.certificate()
    assert cert.delta > short.delta and not cert.certified and cert.mode == "none"
    assert f"delta={cert.delta:.3g}" in cert.note and "requested delta=1e-05" in cert.note
    calibrated = nf.ModelClippingConfig(C2=1.0, sigma=1.0, gamma=0.1, delta=1e-5, finetune=FT).certificate()
    assert calibrated.certified and calibrated.delta <= 1e-5  # T=None takes enough steps


def test_model_clipping_unlearn_reports_the_uncertified_delta():
    ds = data.load("synthetic", device="cpu", n_train=100, n_test=20, dim=4, seed=0)
    flat = FlatParams(logreg(ds.input_shape, 1, bias=False), loss="logistic")
    state = train_sgd(flat, ds, None, SGDConfig(steps=5, lr=0.5, batch_size=8), generator=uk.make_generator(0),
                      init=torch.zeros(flat.d))
    cfg = nf.ModelClippingConfig(C2=1.0, sigma=1.0, gamma=0.1, T=3, finetune=FT)
    res = nf.ModelClipping().unlearn(state, Request("samples", [0, 1]), cfg, generator=uk.make_generator(0))
    assert not res.certificate.certified and res.certificate.delta > cfg.delta


def test_at_requested_delta_keeps_a_certificate_within_the_request():
    cert = uk.core.Certificate(epsilon=1.0, delta=1e-5 * (1 + 1e-12), mode="sound")
    assert nf.finetune.at_requested_delta(cert, 1e-5) is cert  # round-off is not a broken promise
    assert not nf.finetune.at_requested_delta(cert, 1e-6).certified


def test_pdudt_hand_set_constants_give_no_certificate():
    C = P.certify.GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=2.3, delta_f_tilde=2.3, rho1=0.9, rho2=0.9)
    cert = P.certify.pdudt_certificate(lr=1e-3, t1=100, n=10, constants=C, mode="sound", epsilon=1.0, delta=1e-5)
    assert not cert.certified and cert.mode == "none" and math.isinf(cert.epsilon)
    assert cert.sigma > 0 and "set by hand" in cert.note and cert.constants["epsilon_target"] == 1.0


def test_headline_rows_carry_epsilon_and_delta():
    import copy

    from unlearnkit.experiments import capstone_table as ct

    results = ct.load_measured()["results"]
    rows = {r["method"]: r for r in ct.capstone_rows(results)}
    assert rows["dp_sgd"]["epsilon"] == 50.0 and rows["dp_sgd"]["delta"] == 1e-5
    assert "(50, 1e-05)" in rows["dp_sgd"]["guarantee"] and rows["dp_sgd"]["test_acc"] is not None
    old = copy.deepcopy(results["dp_sgd"])
    del old["guarantee"]  # a file written before the guarantee block: derived from the certificate
    row = ct.method_row("dp_sgd", old)
    assert row["epsilon"] == 50.0 and row["delta"] == 1e-5 and row["certified"]
