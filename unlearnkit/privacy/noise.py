"""The one Gaussian noise draw every noisy mechanism in unlearnkit uses.

Randomness is explicit: the draw comes from the ``torch.Generator`` passed in, on that generator's device, in
the dtype of the target, and is then moved to the target's device. So the same seed gives the same noise
whether the model lives on the CPU or a GPU, and every call draws afresh.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch
from torch import Tensor

from .._validate import check_positive


def gaussian_noise(like: Tensor, sigma: float, generator: torch.Generator, *,
                   shape: Optional[Sequence[int]] = None) -> Tensor:
    """``sigma * z`` with ``z ~ N(0, I)``: shaped like ``like`` (or ``shape``), in its dtype, on its device.

    The draw consumes ``generator`` even when ``sigma == 0`` (so a run's later draws do not depend on it).

    Parameters
    ----------
    like : Tensor
        Gives the shape (unless ``shape`` is given), the dtype and the device of the result.
    sigma : float
        Noise standard deviation, ``>= 0``.
    generator : torch.Generator
        The generator the draw comes from (``TypeError`` otherwise); the draw happens on its device.
    shape : sequence of int, optional
        Shape of the draw instead of ``like.shape``.

    Returns
    -------
    Tensor
        ``sigma * z``, ``z ~ N(0, I)``, in ``like``'s dtype, moved to ``like``'s device.

    References
    ----------
    .. [1] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", Found. Trends Theor. Comput. Sci.
       2014, Section 3.5.3 and Theorem A.1 (the Gaussian mechanism whose noise this draws).
    """
    check_positive("sigma", sigma, allow_zero=True)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator={generator!r} is not a torch.Generator: pass unlearnkit.make_generator(seed) "
                        "(unlearnkit never draws from torch's global random state)")
    z = torch.randn(tuple(like.shape) if shape is None else tuple(shape), generator=generator,
                    device=generator.device, dtype=like.dtype)
    return (sigma * z).to(like.device)
