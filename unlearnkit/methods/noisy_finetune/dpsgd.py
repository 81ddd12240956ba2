"""DP-SGD with group privacy: the transfer-learning baseline of Koloskova et al. (ICML 2025), Sec. 4.2 / Fig. 3.

Train with DP-SGD (per-example clipping, Poisson sampling, Gaussian noise) so that group privacy covers a whole
forget set of ``k`` records; "unlearning" is then free fine-tuning on the retain set. The per-record targets
come from :func:`unlearnkit.methods.noisy_finetune.bounds.dpsgd_group_targets` (Vadhan 2017, Lemma 2.2), the
noise multiplier from an accountant of the subsampled Gaussian: Renyi DP (:func:`unlearnkit.privacy.calibrate`,
the default) or, with ``accountant="pld"``, the upper end of the privacy loss distribution bracket
(:mod:`unlearnkit.privacy.pld`), which is never looser and needs less noise for the same target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import torch

from ..._validate import check_choice, check_epsilon, check_int, check_positive, check_probability, check_range
from ...core import MAX_STEPS, Certificate, Cost, Stopwatch, emit
from ...privacy.calibrate import calibrate_sigma, dpsgd_epsilon
from ...privacy.trace import coupled_uniforms, flow, noisy_release, transcript
from ...privacy.pld import PLD_MIN_DELTA, pld_epsilon
from .bounds import CALIBRATION_MODES, SOURCE, dpsgd_group_targets


#: how the noise multiplier is calibrated: Renyi DP (default) or the PLD's certified (upper) end
DPSGD_ACCOUNTANTS = ("rdp", "pld")


@dataclass(frozen=True, kw_only=True)
class DPSGDConfig:
    """DP-SGD training whose group privacy covers a forget set of ``k`` records (Poisson sampling).

    ``noise_multiplier=None`` calibrates it so that ``steps`` Poisson-subsampled Gaussian steps at rate
    ``q`` are ``(eps1, delta1)``-DP per record (:func:`dpsgd_group_targets`; ``mode`` picks the correct or the
    paper code's delta1). ``sampling_rate`` is ``q``, public, with ``batch_size`` the expected batch the sum
    is divided by; ``None`` takes ``q = batch_size / n`` from the training size ``n``, which the forget set
    changes (the certificate then assumes ``n`` public). A given ``noise_multiplier`` that does not reach the
    per-record target under ``accountant`` gives a certificate of mode ``"none"`` whose note says so.
    """

    epsilon: float = 50.0
    delta: float = 1e-5
    k: int = 1
    steps: int = 100
    lr: float = 0.5
    batch_size: int = 64
    clip: float = 0.5
    noise_multiplier: Optional[float] = None
    mode: str = "sound"
    accountant: str = "rdp"
    pld_grid: float = 1e-3
    sampling_rate: Optional[float] = None

    def __post_init__(self) -> None:
        check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_int("k", self.k, low=1)
        check_int("steps", self.steps, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)
        check_positive("clip", self.clip)
        if self.noise_multiplier is not None:
            check_positive("noise_multiplier", self.noise_multiplier)
        check_choice("mode", self.mode, CALIBRATION_MODES)
        check_choice("accountant", self.accountant, DPSGD_ACCOUNTANTS)
        check_range("pld_grid", self.pld_grid, 1e-6, 1.0)
        if self.sampling_rate is not None:
            check_range("sampling_rate", self.sampling_rate, 0.0, 1.0, low_open=True)


def dpsgd_noise_multiplier(epsilon: float, delta: float, *, q: float, steps: int, accountant: str = "rdp",
                           pld_grid: float = 1e-3) -> float:
    """Smallest noise multiplier with ``steps`` Poisson-subsampled Gaussian steps ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon, delta:
        Per-record target (for group privacy: the ``(eps1, delta1)`` of :func:`.bounds.dpsgd_group_targets`).
    q:
        Poisson sampling rate ``batch_size / n``.
    steps:
        Number of DP-SGD steps composed.
    accountant:
        ``"rdp"`` (Mironov et al. 2019) or ``"pld"`` (the certified upper end of
        :func:`unlearnkit.privacy.pld.pld_epsilon`, Koskela et al. 2020; Doroshenko et al. 2022).
    pld_grid:
        The PLD's loss grid width (``"pld"`` only).

    Returns
    -------
    float
        The noise multiplier ``z`` (noise std ``z * clip``), found by bisection on the chosen accountant of the
        subsampled Gaussian through :func:`unlearnkit.privacy.calibrate.calibrate_sigma`.

    Raises
    ------
    ValueError
        For ``accountant="pld"`` with ``delta`` below :data:`unlearnkit.privacy.pld.PLD_MIN_DELTA` (1e-8).

    References
    ----------
    .. [1] I. Mironov, K. Talwar, L. Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", arXiv
       1908.10530, 2019, Section 3 (the RDP curve, accountant "rdp").
    .. [2] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
       Proposition 12 (the RDP to (epsilon, delta) conversion).
    .. [3] A. Koskela, J. Jalko, A. Honkela, "Computing Tight Differential Privacy Guarantees Using FFT", AISTATS 2020;
       V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, "Connect the Dots: Tighter Discrete Approximations
       of Privacy Loss Distributions", PoPETs 2022 (accountant "pld").
    """
    check_choice("accountant", accountant, DPSGD_ACCOUNTANTS)
    if accountant == "pld":
        if delta < PLD_MIN_DELTA:  # group privacy's per-record delta often is (7e-27 at k = 13, eps 50)
            raise ValueError(f"delta={delta!r} is out of range for accountant='pld': below {PLD_MIN_DELTA:g} the "
                             "PLD's FFT round-off (and below 1e-15 its tail charge) leaves its upper end no "
                             "certificate; expected accountant='rdp' (no such floor) or a larger delta")
        return float(calibrate_sigma(lambda z: pld_epsilon(q, z, steps, delta, grid=pld_grid).upper, epsilon,
                                     sigma_hint=1.0, rtol=1e-4))
    return float(calibrate_sigma(lambda z: dpsgd_epsilon(z, q, steps, delta), epsilon, sigma_hint=1.0))


def _record_epsilon(z: float, d1: float, q: float, config: DPSGDConfig) -> float:
    """The per-record epsilon at ``d1`` that ``config.accountant`` certifies for noise multiplier ``z``."""
    if config.accountant == "pld":
        return pld_epsilon(q, z, config.steps, d1, grid=config.pld_grid).upper if d1 >= PLD_MIN_DELTA else math.inf
    return dpsgd_epsilon(z, q, config.steps, d1)


def dp_sgd_train(flat, dataset, indices, config: DPSGDConfig, *, generator: torch.Generator,
                 init: Optional[torch.Tensor] = None, callback=None):
    """Train with DP-SGD (per-example clipping at ``clip``, Poisson sampling, fresh Gaussian noise each step).

    Parameters
    ----------
    flat:
        The :class:`~unlearnkit.models.FlatParams` model (per-sample gradients on a flat parameter vector).
    dataset, indices:
        The dataset and the training indices DP-SGD runs on.
    config:
        The :class:`DPSGDConfig`.
    generator:
        The only source of randomness (Poisson masks, then one noise draw, per step).
    init:
        Starting parameters (default: ``flat.init()``).
    callback:
        Receives a ``"step"`` event per step with the sampled batch size.

    Returns
    -------
    (params, certificate, cost)
        The certificate is the *group* guarantee for ``k`` records (Koloskova et al. 2025, Sec. 4.2), the one
        that makes DP-SGD an unlearning baseline (nothing to do at deletion time).

    References
    ----------
    .. [1] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep Learning with
       Differential Privacy", CCS 2016, Algorithm 1 (DP-SGD).
    """
    idx = np.asarray(indices, dtype=np.int64)
    x, y = dataset.train_subset(idx)
    n = len(idx)
    public = config.sampling_rate is not None
    q = config.sampling_rate if public else min(config.batch_size / n, 1.0)
    per_batch = config.batch_size if public else q * n
    rows = np.asarray((dataset.info or {}).get("row_ids", np.arange(dataset.n_train)))[idx]  # raw identities
    e1, d1 = dpsgd_group_targets(config.epsilon, config.delta, config.k, mode=config.mode)
    z = config.noise_multiplier or dpsgd_noise_multiplier(e1, d1, q=q, steps=config.steps,
                                                          accountant=config.accountant, pld_grid=config.pld_grid)
    # a given noise multiplier must reach the per-record target, else the certificate is not one (mode "none")
    reached = None if config.noise_multiplier is None else _record_epsilon(z, d1, q, config)
    theta = (flat.init() if init is None else init).to(x.device).clone()
    evals = 0
    with Stopwatch() as sw:
        flow("dp_sgd.steps", int(config.steps))
        flow("dp_sgd.sampling_rate", float(q))
        for t in range(config.steps):
            theta = transcript("dp_sgd.theta", theta)  # each step is computed at the released model
            mask = coupled_uniforms("dp_sgd.rows", rows, generator) < q
            sel = torch.nonzero(mask).reshape(-1).to(x.device)
            total = torch.zeros_like(theta)
            if sel.numel():
                g = flat.per_sample_grads(theta, x[sel], y[sel])
                scale = torch.clamp(config.clip / g.norm(dim=1).clamp_min(1e-12), max=1.0)
                total = (g * scale[:, None]).sum(0)
                evals += int(sel.numel())
            # the k forgotten rows move the clipped sum by at most k clip when the batches are coupled by row
            total = noisy_release(total, z * config.clip, generator, name="dp_sgd.step",
                                  sensitivity=config.k * config.clip)
            theta = theta - config.lr * total / per_batch
            emit(callback, "step", t + 1, batch=float(sel.numel()))
    constants = {"k": config.k, "eps1": e1, "delta1": d1, "noise_multiplier": z, "q": q, "q_public": public}
    if config.accountant == "pld":  # both accountants' per-record epsilon at the noise used; the PLD's upper certifies
        bracket = pld_epsilon(q, z, config.steps, d1, grid=config.pld_grid)
        constants.update(accountant="pld", eps1_pld_upper=bracket.upper, eps1_pld_lower=bracket.lower,
                         eps1_rdp=dpsgd_epsilon(z, q, config.steps, d1), pld_grid=config.pld_grid)
    cert = Certificate(epsilon=config.epsilon, delta=config.delta, sigma=z * config.clip, mode=config.mode,
                       mechanism=f"DP-SGD (Poisson-subsampled Gaussian, {config.accountant.upper()}) + group privacy",
                       source=f"{SOURCE}, Sec. 4.2; Vadhan 2017 Lemma 2.2",
                       constants=constants,
                       note="paper code's per-record delta omits the 1/k of group privacy" if config.mode == "paper"
                       else "per-record (eps/k, delta/(k e^{(k-1) eps/k}))" + (
                           "" if public else f"; q = batch_size/n = {q:.4g} assumes the training size n public"))
    if reached is not None and not reached <= e1:
        cert = replace(cert, mode="none", note=f"not certified: the given noise_multiplier {z:.4g} reaches per-record "
                                               f"epsilon {reached:.4g} ({config.accountant}) at delta {d1:.3g}, above "
                                               f"the target {e1:.4g}; {cert.note}")
    return theta, cert, Cost(grad_evals=evals, seconds=sw.seconds)
