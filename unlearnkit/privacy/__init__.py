"""Privacy accounting and noise calibration shared by every certified method.

The public names other modules rely on are imported here eagerly (numpy and scipy only; no jupyter):

- Gaussian mechanism (:mod:`.gaussian`): :func:`classic_gaussian_sigma`, :func:`analytic_gaussian_sigma`,
  :func:`analytic_gaussian_epsilon`, :func:`gaussian_delta`, :func:`theta_epsilon`,
  :func:`relaxed_gaussian_sigma`;
- Renyi DP (:mod:`.rdp`): :data:`DEFAULT_ORDERS`, :func:`gaussian_rdp`, :func:`subsampled_gaussian_rdp`,
  :func:`linear_rdp`, :func:`compose_rdp`, :func:`rdp_to_dp`, :func:`rdp_to_delta`;
- accounting (:mod:`.accountant`): :class:`RDPAccountant` with per-observer ledgers and its events;
- calibration (:mod:`.calibrate`): :func:`calibrate_sigma`, :func:`get_noise_multiplier` (Opacus semantics);
- amplification (:mod:`.amplification`): by iteration (:func:`optimal_shift_schedule`,
  :func:`iteration_rdp`, :func:`gradient_clipping_rho`), by contraction (:func:`model_clipping_delta`,
  :func:`model_clipping_steps`), by random walks (:func:`expected_inverse_delay`, ...);
- exact Gaussian composition and the random-length mixture bound (:mod:`.mixture`):
  :func:`gaussian_composition_epsilon`, :func:`mixture_delta`, :func:`mixture_epsilon`, :func:`mixture_sigma`;
- privacy loss distributions (:mod:`.pld`, grid arithmetic in :mod:`.pld_grid`): :class:`PLD`,
  :func:`pld_epsilon`, :func:`pld_delta` and their two-sided :class:`EpsilonBracket`, :class:`DeltaBracket`;
  a random, data-independent number of steps as a mixture of PLDs (:mod:`.pld_mixture`):
  :func:`pld_mixture_epsilon`, :func:`pld_mixture_delta`;
- trade-off functions (:mod:`.tradeoff`): :func:`gdp_tradeoff`, :func:`dp_tradeoff`, :func:`pld_tradeoff`,
  :func:`gaussian_certificate_mu`,
  and an audit's operating points with joint boxes, :func:`tradeoff_operating_points`;
- the last-iterate heuristic for DP-SGD (:mod:`.last_iterate`, a heuristic, not a bound):
  :func:`last_iterate_epsilon`, :func:`last_iterate_delta`;
- :class:`Certificate` (:mod:`.certificate`).
"""

from .accountant import (
    CENTRAL,
    CurveEvent,
    GaussianEvent,
    LinearEvent,
    RDPAccountant,
    SubsampledGaussianEvent,
)
from .amplification import (
    ShiftSchedule,
    expected_inverse_delay,
    first_observation_delay_pmf,
    first_observation_rate,
    gradient_clipping_rho,
    iteration_rdp,
    model_clipping_delta,
    model_clipping_sigma_paper,
    model_clipping_steps,
    optimal_shift_schedule,
    sample_first_observation_delay,
    visit_count_bound,
)
from .calibrate import OPACUS_ORDERS, calibrate_sigma, dpsgd_epsilon, get_noise_multiplier
from ..core import MODES, Certificate
from .gaussian import (
    ClassicGaussianRangeWarning,
    RelaxedGaussian,
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    relaxed_gaussian_sigma,
    theta_epsilon,
    zcdp_gaussian_sigma,
)
from .linear_rdp import LINEAR_METHODS, linear_rdp_epsilon, linear_rdp_slope
from .mixture import (
    capped_delta,
    capped_epsilon,
    composition_saving_table,
    gaussian_composition_delta,
    gaussian_composition_epsilon,
    gaussian_composition_mu,
    mixture_delta,
    mixture_epsilon,
    mixture_sigma,
)
from .pld import PLD, PLD_DIRECTIONS, PLD_ESTIMATES, PLD_RELATIONS, DeltaBracket, EpsilonBracket, pld_delta, pld_epsilon
from .pld_mixture import pld_mixture_delta, pld_mixture_epsilon
from .tradeoff import (OperatingPoints, dp_tradeoff, gaussian_certificate_mu, gdp_tradeoff, pld_tradeoff,
                       tradeoff_operating_points)
from .last_iterate import last_iterate_delta, last_iterate_epsilon
from .rdp import (
    CONVERSIONS,
    DEFAULT_ORDERS,
    OrderGridWarning,
    compose_rdp,
    epsilons_per_order,
    gaussian_rdp,
    linear_rdp,
    rdp_to_delta,
    rdp_to_dp,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_rdp,
    subsampled_gaussian_rdp_mpmath,
)

__all__ = [
    "LINEAR_METHODS",
    "linear_rdp_epsilon",
    "linear_rdp_slope",
    "capped_delta",
    "capped_epsilon",
    "composition_saving_table",
    "gaussian_composition_delta",
    "gaussian_composition_epsilon",
    "gaussian_composition_mu",
    "mixture_delta",
    "mixture_epsilon",
    "mixture_sigma",
    "gaussian_noise",
    "CENTRAL",
    "CurveEvent",
    "GaussianEvent",
    "LinearEvent",
    "RDPAccountant",
    "SubsampledGaussianEvent",
    "ShiftSchedule",
    "expected_inverse_delay",
    "first_observation_delay_pmf",
    "first_observation_rate",
    "gradient_clipping_rho",
    "iteration_rdp",
    "model_clipping_delta",
    "model_clipping_sigma_paper",
    "model_clipping_steps",
    "optimal_shift_schedule",
    "sample_first_observation_delay",
    "visit_count_bound",
    "OPACUS_ORDERS",
    "calibrate_sigma",
    "dpsgd_epsilon",
    "get_noise_multiplier",
    "Certificate",
    "MODES",
    "ClassicGaussianRangeWarning",
    "RelaxedGaussian",
    "analytic_gaussian_epsilon",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_delta",
    "relaxed_gaussian_sigma",
    "theta_epsilon",
    "zcdp_gaussian_sigma",
    "PLD",
    "PLD_DIRECTIONS",
    "PLD_RELATIONS",
    "PLD_ESTIMATES",
    "DeltaBracket",
    "EpsilonBracket",
    "pld_delta",
    "pld_epsilon",
    "pld_mixture_delta",
    "pld_mixture_epsilon",
    "gaussian_certificate_mu",
    "gdp_tradeoff",
    "dp_tradeoff",
    "pld_tradeoff",
    "OperatingPoints",
    "tradeoff_operating_points",
    "last_iterate_epsilon",
    "last_iterate_delta",
    "CONVERSIONS",
    "DEFAULT_ORDERS",
    "OrderGridWarning",
    "compose_rdp",
    "epsilons_per_order",
    "gaussian_rdp",
    "linear_rdp",
    "rdp_to_delta",
    "rdp_to_dp",
    "subsampled_gaussian_epsilon",
    "subsampled_gaussian_rdp",
    "subsampled_gaussian_rdp_mpmath",
]


def __getattr__(name: str):
    # the noise draw needs torch; the accountants must import without it (Binder's first cell, the CLI)
    if name == "gaussian_noise":
        from .noise import gaussian_noise

        return gaussian_noise
    raise AttributeError(f"module 'unlearnkit.privacy' has no attribute {name!r}")
