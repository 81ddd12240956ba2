"""DP-SGD's per-record epsilon read by three accountants, as the rows of notebook 04's section (e).

The composed epsilon by Renyi DP (a certificate at any delta), by the privacy loss distribution (PLD, a bracket
whose upper end certifies only at ``delta >= PLD_MIN_DELTA``), and the last-iterate heuristic (no bound at all).
Group privacy asks each record for a tiny delta (about 7e-27 for 13 records at (50, 1e-5)), far below the PLD's
floor: there its FFT round-off can put the "certified" upper end below the true epsilon
(docs/frontiers/accountants.md, section 9), so the PLD row says that it does not certify and why, and the bracket
is shown for the same mechanism at the smallest delta where it is valid, beside RDP's value at that delta.
"""

from __future__ import annotations

from typing import Any

from ...privacy.calibrate import dpsgd_epsilon
from ...privacy.last_iterate import last_iterate_epsilon
from ...privacy.pld import PLD_MIN_DELTA, pld_epsilon

#: why the PLD's upper end is no certificate below its floor, said in the row that refuses
PLD_FLOOR_REASON = ("below the PLD floor {floor:g}: FFT round-off (about 1e-14 absolute in the composed pmf) can "
                    "put the upper end below the true epsilon (docs/frontiers/accountants.md, section 9)")


def dpsgd_epsilon_rows(q: float, z: float, steps: int, delta: float, *, pld_delta: float = PLD_MIN_DELTA,
                       grid: float = 1e-3) -> list[dict[str, Any]]:
    """Per-record epsilon of ``steps`` Poisson-subsampled Gaussian steps, one row per accountant.

    Parameters
    ----------
    q : float in (0, 1]
        Poisson sampling rate.
    z : float > 0
        Noise multiplier.
    steps : int >= 1
        Number of DP-SGD steps composed.
    delta : float in (0, 1)
        The per-record delta asked for (group privacy's ``delta1``).
    pld_delta : float, default :data:`~unlearnkit.privacy.pld.PLD_MIN_DELTA`
        Where ``delta`` is below the PLD's floor, the larger delta at which the PLD bracket of the same
        mechanism is shown instead (with RDP's epsilon at that delta beside it); at least the floor.
    grid : float
        The PLD's loss grid width.

    Returns
    -------
    list of dict
        Rows with ``per-record epsilon`` (what the row is), ``delta`` (where it is read), ``value`` (a float, a
        ``"[lower, upper]"`` bracket or ``"not certified"``) and ``note``: RDP at ``delta``; the PLD at ``delta``
        (its bracket, or ``"not certified"`` with the reason below the floor, followed by the PLD bracket and
        RDP's epsilon at ``pld_delta``, labelled as not the asked delta); the last-iterate heuristic at
        ``delta``.

    References
    ----------
    Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", 2019 (RDP).
    Koskela, Jalko & Honkela, AISTATS 2020; Doroshenko et al., PoPETs 2022 (the PLD bracket).
    Steinke et al., ICLR 2025, section 4 (the last-iterate heuristic).
    """
    if not PLD_MIN_DELTA <= pld_delta < 1.0:
        raise ValueError(f"pld_delta={pld_delta!r} is out of range: expected [{PLD_MIN_DELTA:g}, 1), where the "
                         "PLD's upper end certifies")

    def bracket(d: float) -> str:
        b = pld_epsilon(q, z, steps, d, grid=grid)
        return f"[{b.lower:.3f}, {b.upper:.3f}]"

    rows = [{"per-record epsilon": "composed, RDP (certifies)", "delta": delta,
             "value": dpsgd_epsilon(z, q, steps, delta), "note": ""}]
    if delta >= PLD_MIN_DELTA:
        rows.append({"per-record epsilon": "composed, PLD [lower, upper] (upper certifies)", "delta": delta,
                     "value": bracket(delta), "note": ""})
    else:
        rows += [{"per-record epsilon": "composed, PLD", "delta": delta, "value": "not certified",
                  "note": f"delta {delta:.2g} is " + PLD_FLOOR_REASON.format(floor=PLD_MIN_DELTA)},
                 {"per-record epsilon": "composed, PLD [lower, upper] at a larger delta", "delta": pld_delta,
                  "value": bracket(pld_delta),
                  "note": "the same mechanism at a delta where the PLD is valid: not the delta asked for"},
                 {"per-record epsilon": "composed, RDP at that larger delta", "delta": pld_delta,
                  "value": dpsgd_epsilon(z, q, steps, pld_delta), "note": "beside the PLD bracket above"}]
    rows.append({"per-record epsilon": "last iterate only: a HEURISTIC, not a bound", "delta": delta,
                 "value": last_iterate_epsilon(q, z, steps, delta), "note": "certifies nothing"})
    return rows
