"""The settings of Newton/Fisher decentralized unlearning (Wu et al. 2026): :class:`NewtonConfig`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ... import curvature as cv
from ..._validate import check_choice, check_epsilon, check_int, check_positive, check_probability
from ...core import Certificate
from .certify import newton_certificate


@dataclass(frozen=True, kw_only=True)
class NewtonConfig:
    """Settings of Newton/Fisher decentralized unlearning.

    Attributes
    ----------
    epsilon, delta:
        Target guarantee (``epsilon > 0``, ``delta in (0, 1)``).
    mode:
        ``"paper"`` (eq. 10 + classic Gaussian, noise shared ``1/N`` as printed), ``"sound"`` (proved
        sensitivity + analytic Gaussian, noise that survives the ``1/N``) or ``"none"`` (no noise, or
        ``sigma`` if given; no guarantee).
    curvature:
        One of :data:`unlearnkit.curvature.CURVATURES`.
    damping:
        Extra ``rho I`` added to the curvature (Fisher needs it without weight decay; digest P10b).
    scope:
        ``"local"`` (Algorithm 1: the requester's retained curvature) or ``"global"`` (the average of all
        clients' retained curvatures at the network average ``x_bar``; digest 2.5).
    center_gradient:
        Subtract ``m_c grad f_c`` from the forget-set gradient (digest 2.5; exact only at a client optimum
        otherwise).
    clientwise_weight:
        ``"1"`` (default; eq. 6 is already the global step) or ``"1/N"`` (the paper's wording; digest P2).
    finetune_rounds:
        D-PSGD rounds on retained data after the correction (Remark 1; 0 or 1 in the paper).
    grad_tol:
        Public bound ``tau`` on ``||grad f(x_s)||`` after training (``x_s``: the average of the models that are
        released, before the correction), a value stated before seeing the data. Required by
        ``mode="sound"`` (it sets the noise); the run measures the gradient and, above ``grad_tol``, reports
        ``mode="none"`` (the assumption failed; the noise stays calibrated to ``grad_tol``).
    release:
        ``"local"`` (Algorithm 1: every client keeps its own corrected model; a sound certificate covers only
        their average, the local models' differences are released and not covered) or ``"average"`` (every
        client releases the certified average ``x_s + correction + noise``, obtained by flooding every model
        once: the whole released tuple is covered).
    lipschitz, hessian_lipschitz:
        Override the constants ``L`` and ``M`` (default: analytic for logistic regression). A value below the
        analytic one is not a valid bound: the certificate is then ``mode="none"``.
    sigma:
        Message noise std for ``mode="none"`` (e.g. a network: not certified).
    cg_tol, cg_max_iter, chunk_size:
        Conjugate-gradient tolerance and cap; per-sample-gradient chunk size.
    """

    epsilon: float = 1.0
    delta: float = 1e-5
    mode: str = "paper"
    curvature: str = "hessian"
    damping: float = 0.0
    scope: str = "local"
    center_gradient: bool = False
    clientwise_weight: str = "1"
    finetune_rounds: int = 0
    grad_tol: Optional[float] = None
    release: str = "local"
    lipschitz: Optional[float] = None
    hessian_lipschitz: Optional[float] = None
    sigma: Optional[float] = None
    cg_tol: float = 1e-8
    cg_max_iter: Optional[int] = None
    chunk_size: Optional[int] = None
    progress: bool = False

    def __post_init__(self) -> None:
        check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_choice("mode", self.mode, ("paper", "sound", "none"))
        check_choice("curvature", self.curvature, cv.CURVATURES)
        check_positive("damping", self.damping, allow_zero=True)
        check_choice("scope", self.scope, ("local", "global"))
        check_choice("clientwise_weight", self.clientwise_weight, ("1", "1/N"))
        check_int("finetune_rounds", self.finetune_rounds, low=0)
        check_choice("release", self.release, ("local", "average"))
        if self.mode == "sound" and self.grad_tol is None:
            raise ValueError("grad_tol=None with mode='sound': the sound certificate needs a public bound on "
                             "||grad f(x_bar)|| after training; expected grad_tol in [0, inf) (e.g. the tolerance "
                             "training was run to), or mode='paper'/'none'")
        for name in ("grad_tol", "lipschitz", "hessian_lipschitz", "sigma"):
            v = getattr(self, name)
            if v is not None:
                check_positive(name, v, allow_zero=name in ("grad_tol", "sigma", "hessian_lipschitz"))
        check_positive("cg_tol", self.cg_tol)
        if self.cg_max_iter is not None:
            check_int("cg_max_iter", self.cg_max_iter, low=1)
        if self.chunk_size is not None:
            check_int("chunk_size", self.chunk_size, low=1)

    def certificate(self, *, kind: str, fractions: Mapping[int, tuple[int, int]], n_clients: int,
                    constants: Optional[Mapping[str, float]], weight: float, measured_grad: Optional[float] = None,
                    converged: bool = True, clipped: bool = False) -> tuple[dict[int, float], Certificate]:
        """Message noise per requester and the certificate of a step computed with these settings.

        :func:`~unlearnkit.methods.newton.certify.newton_certificate` with this config's ``epsilon``,
        ``delta``, ``mode``, ``sigma``, ``grad_tol`` (the public ``tau``), ``release`` and step settings
        (Wu et al. 2026, eq. (10); digest 001 section 3.7).
        """
        return newton_certificate(epsilon=self.epsilon, delta=self.delta, mode=self.mode, kind=kind,
                                  fractions=fractions, n_clients=n_clients, constants=constants, weight=weight,
                                  tau=self.grad_tol, measured_grad=measured_grad, converged=converged,
                                  clipped=clipped, release=self.release, sigma=self.sigma,
                                  curvature=self.curvature, scope=self.scope, center_gradient=self.center_gradient,
                                  clientwise_weight=self.clientwise_weight, damping=self.damping,
                                  cg_tol=self.cg_tol)
