"""The capstone's comparison table: every registered method in its working regime, with its audit.

Each method of :data:`unlearnkit.experiments.registry.METHODS` runs its shipped ``"quick"`` profile (the regime
its frontier found; the result contract of :mod:`unlearnkit.experiments.contract`), and becomes one row:

- the **setting** (centralized or decentralized) and the **forget task** the profile uses. Profiles differ
  (class forgetting for the baselines, a planted backdoor for most certified methods, one client leaving for
  PDUDT), so rows are grouped by task and each row's reference is the retraining of *its own* run, on the
  same data and request;
- the **guarantee**: ``(epsilon, delta)`` when certified (mode ``"sound"``, finite epsilon), otherwise
  ``not certified (epsilon = inf)`` with what a ``"paper"`` calibration claims;
- the **released** model's test accuracy (the parameters the certificate covers) next to retraining's;
- the **forget metric** (backdoor success when the request is a backdoor, else accuracy on the forgotten
  samples) next to retraining's and the original model's (equal original and retraining values mean the
  request carries no measurable signal);
- the **cost** relative to retraining (per-sample gradient evaluations, the contract's one unit);
- the **advantage** over retraining with the same budget: released test accuracy minus that of retraining
  on the retained data with as many gradient evaluations as the unlearning spent, mean and 95 % t-interval over
  seeds with its label (:mod:`unlearnkit.experiments.budget`, read from ``data/budget_quick.json``);
- the **audit**: joined on ``(method, mode)`` from rows shaped like
  ``unlearnkit.experiments.audits.registry.audit_registry`` returns (``method, mode, observer,
  certified_epsilon, lower_bound, point_estimate, verdict, n_trials, statistic``); "not audited" when none.

Running all fourteen quick profiles takes about 30 s on a 2-core CPU, too slow for a notebook's Run All, so
:func:`load_measured` reads a committed JSON of measured results (``data/capstone_quick.json``, written by
:func:`write_measured`) and :func:`measure` re-runs them live (cached in-process). The audit rows the notebook
shows come from ``data/capstone_audit.json`` (:func:`load_audit_rows`), transcribed from the documented audits.
"""

from __future__ import annotations

import json
import math
import platform
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from .._io import atomic_write_text, json_text
from .._validate import check_choice, check_int
from .contract import RELEASED_KEY, guarantee, json_safe
from .registry import METHODS, get_method
from ..core import MAX_SEED
from .budget import BUDGET_PATH, budget_rows


_DATA = Path(__file__).resolve().parent / "data"
#: the committed measured results of every quick profile (regenerate with :func:`write_measured`)
MEASURED_PATH = _DATA / "capstone_quick.json"
#: the committed audit rows (regenerate from ``audit_registry`` once it lands)
AUDIT_PATH = _DATA / "capstone_audit.json"

#: which network each registered method runs on (the registry does not say; the labs do)
SETTING: dict[str, str] = {
    "retrain": "centralized", "finetune": "centralized", "gradient_ascent": "centralized",
    "d2d": "centralized", "r2d": "centralized", "gradient_clipping": "centralized",
    "model_clipping": "centralized", "output_perturbation": "centralized", "dp_sgd": "centralized",
    "rrdu": "decentralized", "ddp": "decentralized", "dp_sgd_walk": "decentralized",
    "newton": "decentralized", "pdudt": "decentralized",
}

#: "forgets": the released forget metric within this of retraining's (backdoor success or forget accuracy; a
#: tenth, since the quick profiles' forget sets have 1 to 137 samples and one sample of 13 moves it by 0.077)
FORGET_TOL = 0.1
#: "useful": the released test accuracy at most this far below retraining's (the frontiers' 5-point rule)
UTILITY_TOL = 0.05

_CACHE: dict[tuple[str, str, int], dict] = {}


def _run(name: str, profile: str, seed: int) -> dict:
    """One method's result (plain JSON, the released record stripped), cached for this process."""
    key = (name, profile, seed)
    if key not in _CACHE:
        t0 = time.perf_counter()
        res = get_method(name).run(profile, seed=seed, progress=False)
        res.pop(RELEASED_KEY, None)
        res = json_safe(res)
        res["wall_seconds"] = time.perf_counter() - t0
        _CACHE[key] = res
    return _CACHE[key]


def measure(methods: Optional[Sequence[str]] = None, *, profile: str = "quick", seed: int = 0) -> dict[str, Any]:
    """Run each method's ``profile`` live (cached in-process): ``{"meta": {...}, "results": {name: result}}``.

    ``methods`` defaults to every registered one. About 30 s for all fourteen quick profiles on a 2-core CPU.
    """
    names = tuple(s.name for s in METHODS) if methods is None else tuple(methods)
    for n in names:
        check_choice("methods", n, tuple(s.name for s in METHODS))
    check_int("seed", seed, low=0, high=MAX_SEED)
    t0 = time.perf_counter()
    results = {n: _run(n, profile, seed) for n in names}
    meta = {"profile": profile, "seed": seed, "seconds": time.perf_counter() - t0, "live": True,
            "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
            "measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    return {"meta": meta, "results": results}


def single_draw_label(seed: int) -> str:
    """What a capstone file of one seed is: a single draw per method, a diagnostic beside the seeded advantage."""
    return (f"seed {seed}, single draw per method (a diagnostic of each shipped profile); the means over seeds "
            "with intervals are in data/budget_quick.json")


def write_measured(path: str | Path = MEASURED_PATH, *, seed: int = 0, note: str = "") -> Path:
    """Measure every quick profile and write the committed JSON the notebook loads (indent 1, sorted)."""
    data = measure(seed=seed)
    data["meta"].update(live=False, note=note or "measured by unlearnkit.experiments.capstone_table.write_measured",
                        draws=single_draw_label(seed))
    return atomic_write_text(path, json_text(data, indent=1, ensure_ascii=False) + "\n")


def load_measured(path: str | Path = MEASURED_PATH) -> dict[str, Any]:
    """The committed measured results (``{"meta", "results"}``); ``FileNotFoundError`` names the way out."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path={str(p)!r}: no measured capstone results; run "
                                "unlearnkit.experiments.capstone_table.write_measured() or measure()")
    return json.loads(p.read_text(encoding="utf-8"))


def load_audit_rows(path: str | Path | None = AUDIT_PATH) -> list[dict]:
    """The committed audit rows, or ``[]`` (every method then reads "not audited") when the file is missing."""
    if path is None or not Path(path).is_file():
        return []
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return list(data["rows"] if isinstance(data, Mapping) else data)


def _num(v: Any) -> Optional[float]:
    """A number from a JSON value (``"inf"`` reads back as infinity); None for missing or non-numeric."""
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def audit_cell(method: str, mode: str, audit_rows: Optional[Iterable[Mapping[str, Any]]]) -> tuple[str, Optional[dict]]:
    """The audit column for ``(method, mode)``: its text and the joined row (None: "not audited").

    Several rows for one key (different observers or statistics): the highest lower bound is shown, since
    one refutation is enough to reject a certificate.
    """
    hits = [dict(r) for r in (audit_rows or ()) if r.get("method") == method and r.get("mode") == mode]
    if not hits:
        return "not audited", None
    row = max(hits, key=lambda r: _num(r.get("lower_bound")) or 0.0)
    lb = _num(row.get("lower_bound"))
    verdict = str(row.get("verdict") or "-")
    observer = row.get("observer") or "-"
    lb_txt = "-" if lb is None else f"{lb:.3g}"
    return f"lower bound {lb_txt} ({verdict}, observer: {observer})", row


def _forget(metrics: Mapping[str, Any]) -> tuple[str, Optional[float], Optional[float], Optional[float]]:
    """(name, released, retraining's, the original's) of the forget metric: backdoor success when present."""
    key = "backdoor_asr" if metrics.get("backdoor_asr") is not None else "forget_acc"
    name = "backdoor success" if key == "backdoor_asr" else "forget accuracy"
    return name, _num(metrics.get(key)), _num(metrics.get(f"retrain_{key}")), _num(metrics.get(f"original_{key}"))


def _guarantee_text(g: Mapping[str, Any]) -> str:
    if g.get("certified"):
        return f"({_num(g['epsilon']):.3g}, {_num(g.get('delta')) or 0:.2g}), sound"
    claim = _num(g.get("claimed_epsilon"))
    extra = (f"; {g.get('mode')} mode claims {claim:.3g}" if claim is not None and math.isfinite(claim) else "")
    return f"not certified (epsilon = inf{extra})"


def _reading(method: str, certified: bool, epsilon: float, useful: Optional[bool], forgets: Optional[bool],
             signal: Optional[bool]) -> str:
    """One phrase: what the row shows about forgetting under a sound certificate."""
    if method == "retrain":
        return "exact: the reference"
    if useful is None or forgets is None:
        return "metrics missing"
    use = "useful" if useful else "NOT useful"
    head = f"certified at epsilon = {epsilon:g}" if certified else "no certificate"
    if signal is False:  # nothing to forget that the metric can see: say so rather than claim "forgets"
        return f"{head}, {use}; forgetting not measurable here (the original scores no higher than retraining)"
    if certified and forgets and useful:
        return f"works under its sound certificate at epsilon = {epsilon:g}: forgets, useful"
    return f"{head}: {'forgets' if forgets else 'does NOT forget'}, {use}"


def advantage_cell(budget: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The advantage columns of a row from one summary row of :func:`unlearnkit.experiments.budget.summarize`
    (None: "not measured"): ``advantage`` (mean over seeds), ``advantage_low``/``advantage_high`` (its 95 %
    t-interval), ``advantage_label`` (``better``, ``same``, ``worse``), ``advantage_text``,
    ``advantage_n_seeds``, ``budget_test_acc`` (equal-budget retraining's mean test accuracy) and
    ``seeded_test_acc`` (the released test accuracy's ``{"mean", "low", "high"}`` over the same seeds)."""
    if not budget or "advantage" not in budget:
        return {"advantage": None, "advantage_low": None, "advantage_high": None, "advantage_label": "not measured",
                "advantage_text": "not measured", "advantage_n_seeds": 0, "budget_test_acc": None,
                "seeded_test_acc": None}
    adv = budget["advantage"]
    lab = budget.get("label", "same")
    words = {"better": "better than", "same": "no better than", "worse": "worse than"}.get(lab, lab)
    return {"advantage": adv["mean"], "advantage_low": adv["low"], "advantage_high": adv["high"],
            "advantage_label": lab, "advantage_n_seeds": int(budget.get("n_seeds", 0)),
            "advantage_text": f"{adv['mean']:+.3f} [{adv['low']:+.3f}, {adv['high']:+.3f}]: {words} equal-budget "
                              f"retraining ({budget.get('n_seeds', 0)} seeds)",
            "budget_test_acc": (budget.get("budget_test_acc") or {}).get("mean"),
            "seeded_test_acc": budget.get("test_acc")}


def method_row(name: str, result: Mapping[str, Any], audit_rows: Optional[Iterable[Mapping[str, Any]]] = None,
               budget: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """One row of the table from one runner result (the released model's metrics, the contract's guarantee).

    Every row carries the certificate's ``epsilon`` and ``delta`` beside its accuracy; a result without a
    ``"guarantee"`` block (an older JSON file) gets one derived from its ``"certificate"`` block. ``budget``:
    the method's summary row of :func:`unlearnkit.experiments.budget.summarize` (the advantage columns,
    :func:`advantage_cell`; None: "not measured").
    """
    m = result["metrics"]
    g = result.get("guarantee") or guarantee(result.get("certificate"))
    fname, forget, r_forget, o_forget = _forget(m)
    test, r_test = _num(m.get("test_acc")), _num(m.get("retrain_test_acc"))
    cost = result.get("cost") or {}
    ge, rge = _num(cost.get("grad_evals")), _num(cost.get("retrain_grad_evals"))
    certified = bool(g.get("certified"))
    useful = None if test is None or r_test is None else test >= r_test - UTILITY_TOL
    forgets = None if forget is None or r_forget is None else abs(forget - r_forget) <= FORGET_TOL
    # the request carries a signal when the original model remembers it (scores higher than retraining)
    signal = None if o_forget is None or r_forget is None else o_forget - r_forget > FORGET_TOL
    mode = g.get("mode") or "none"
    audit_text, audit = audit_cell(name, mode, audit_rows)
    eps = _num(g.get("epsilon"))
    return {
        "method": name, "setting": SETTING.get(name, "centralized"), "dataset": result.get("dataset", "-"),
        "task": str(result.get("request", "-")), "mode": mode, "certified": certified,
        "epsilon": math.inf if eps is None else eps, "delta": _num(g.get("delta")),
        "claimed_epsilon": _num(g.get("claimed_epsilon")), "guarantee": _guarantee_text(g),
        "test_acc": test, "retrain_test_acc": r_test, "forget_metric": fname, "forget": forget,
        "retrain_forget": r_forget, "original_forget": o_forget,
        "cost_ratio": None if ge is None or not rge else ge / rge, "useful": useful, "forgets": forgets,
        "forget_signal": signal,
        "reading": _reading(name, certified, math.inf if eps is None else eps, useful, forgets, signal),
        "audit": audit_text, "audit_row": audit, "wall_seconds": _num(result.get("wall_seconds")),
        **advantage_cell(budget),
    }


def capstone_rows(results: Optional[Mapping[str, Mapping[str, Any]]] = None, *,
                  audit_rows: Optional[Iterable[Mapping[str, Any]]] = None, live: bool = False,
                  seed: int = 0, budget: Optional[Mapping[str, Mapping[str, Any]]] = None) -> list[dict[str, Any]]:
    """Every registered method's row, grouped by setting and forget task (registry order inside a group).

    ``results``: ``{name: result}`` (a :func:`measure` or :func:`load_measured` ``"results"`` block); None
    reads the committed measurements, or runs them when ``live``. ``audit_rows``: rows shaped like
    ``audit_registry``'s (None: every method "not audited"). Each row carries ``group``, a label of its
    setting and task; a method missing from ``results`` raises ``KeyError`` naming it. ``budget``: summary rows
    by method (:func:`unlearnkit.experiments.budget.budget_rows`); None reads the committed
    ``data/budget_quick.json`` (every row "not measured" when it is missing).
    """
    if results is None:
        results = measure(seed=seed)["results"] if live else load_measured()["results"]
    audit_rows = list(audit_rows or ())
    order = [s.name for s in METHODS]
    missing = [n for n in order if n not in results]
    if missing:
        raise KeyError(f"results has no run of {missing}: expected every registered method {order}")
    if budget is None:
        budget = budget_rows() if BUDGET_PATH.is_file() else {}
    rows = [method_row(n, results[n], audit_rows, budget.get(n)) for n in order]
    groups: dict[tuple[str, str, str], int] = {}
    for r in rows:
        groups.setdefault((r["setting"], r["dataset"], r["task"]), len(groups))
    for r in rows:
        r["group"] = f"{r['setting']} · {r['dataset']} · {r['task']}"
        r["group_index"] = groups[(r["setting"], r["dataset"], r["task"])]
    # centralized groups first, then decentralized; inside a setting, the registry's order
    rows.sort(key=lambda r: (r["setting"] != "centralized", r["group_index"]))
    return rows
