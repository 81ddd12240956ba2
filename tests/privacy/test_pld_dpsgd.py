"""DP-SGD with ``accountant="pld"``: less noise for the same target, both accountants reported."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import data
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.models import FlatParams, make_model
from unlearnkit.privacy import dpsgd_epsilon, pld_epsilon


def test_pld_noise_multiplier_is_smaller_and_certified():
    eps, delta, q, steps = 2.0, 1e-5, 0.02, 500
    z_rdp = nf.dpsgd.dpsgd_noise_multiplier(eps, delta, q=q, steps=steps)
    z_pld = nf.dpsgd.dpsgd_noise_multiplier(eps, delta, q=q, steps=steps, accountant="pld")
    assert z_pld < z_rdp
    assert pld_epsilon(q, z_pld, steps, delta).upper <= eps
    assert dpsgd_epsilon(z_pld, q, steps, delta) > eps  # RDP alone could not certify this noise
    with pytest.raises(ValueError, match="accountant="):
        nf.dpsgd.dpsgd_noise_multiplier(eps, delta, q=q, steps=steps, accountant="prv")


def test_dp_sgd_train_reports_both_accountants():
    torch.set_num_threads(1)
    ds = data.load("synthetic", device="cpu", n_train=200, n_test=50, dim=5, seed=3)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    idx = np.arange(ds.n_train)
    runs = {}
    for acc in ("rdp", "pld"):
        conf = nf.DPSGDConfig(epsilon=10, k=2, steps=20, batch_size=32, accountant=acc)
        runs[acc] = nf.dpsgd.dp_sgd_train(flat, ds, idx, conf, generator=uk.make_generator(0), init=torch.zeros(flat.d))[1]
    rdp, pld = runs["rdp"], runs["pld"]
    assert "accountant" not in rdp.constants and "RDP" in rdp.mechanism  # the default is unchanged
    assert "PLD" in pld.mechanism and pld.sigma < rdp.sigma
    c = pld.constants
    assert c["eps1_pld_lower"] <= c["eps1_pld_upper"] <= c["eps1"] < c["eps1_rdp"]
    with pytest.raises(ValueError, match="accountant="):
        nf.DPSGDConfig(accountant="exact")
