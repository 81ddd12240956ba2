"""Privacy accounting and noise calibration shared by every certified method.

The public names other modules rely on are imported here eagerly (numpy and scipy only; no jupyter):

- Gaussian mechanism (:mod:`.gaussian`): :func:`classic_gaussian_sigma`, :func:`analytic_gaussian_sigma`,
  :func:`analytic_gaussian_epsilon`, :func:`gaussian_delta`, :func:`theta_epsilon`,
  :func:`relaxed_gaussian_sigma`;
- Renyi DP (:mod:`.rdp`): :data:`DEFAULT_ORDERS`, :func:`gaussian_rdp`, :func:`subsampled_gaussian_rdp`,
  :func:`linear_rdp`, :func:`compose_rdp`, :func:`rdp_to_dp`, :func:`rdp_to_delta`;
- :class:`Certificate` (:mod:`.certificate`).
"""

from .certificate import MODES, Certificate
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
from .rdp import (
    CONVERSIONS,
    DEFAULT_ORDERS,
    OrderGridWarning,
    compose_rdp,
    gaussian_rdp,
    linear_rdp,
    rdp_to_delta,
    rdp_to_dp,
    subsampled_gaussian_rdp,
)

__all__ = [
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
    "CONVERSIONS",
    "DEFAULT_ORDERS",
    "OrderGridWarning",
    "compose_rdp",
    "gaussian_rdp",
    "linear_rdp",
    "rdp_to_delta",
    "rdp_to_dp",
    "subsampled_gaussian_rdp",
]
