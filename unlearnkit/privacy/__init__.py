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

from ..runtime import lazy_exports

__all__ = [
    "Certificate", "MODES", "calibrate_sigma", "analytic_gaussian_sigma", "analytic_gaussian_epsilon",
    "classic_gaussian_sigma", "gaussian_noise", "RDPAccountant", "dpsgd_epsilon", "get_noise_multiplier",
    "gaussian_composition_epsilon", "PLD", "pld_epsilon", "mixture_epsilon", "dp_tradeoff", "last_iterate_epsilon",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "Certificate": "..core", "MODES": "..core", "calibrate_sigma": ".calibrate",
    "analytic_gaussian_sigma": ".gaussian", "analytic_gaussian_epsilon": ".gaussian",
    "classic_gaussian_sigma": ".gaussian", "gaussian_noise": ".noise", "RDPAccountant": ".accountant",
    "dpsgd_epsilon": ".calibrate", "get_noise_multiplier": ".calibrate", "gaussian_composition_epsilon": ".mixture",
    "PLD": ".pld", "pld_epsilon": ".pld", "mixture_epsilon": ".mixture", "dp_tradeoff": ".tradeoff",
    "last_iterate_epsilon": ".last_iterate",
})
