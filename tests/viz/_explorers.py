"""Every explorer the course notebooks show, built small: ``(label, class name, builder(digits))``.

Notebook 01's dashboard needs a trained model and is left to ``tests/foundation/test_viz_dashboard.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("UNLEARNKIT_QUICK", "1")

POINTS = [
    {"method": "retrain", "epsilon": 0.0, "test_acc": 0.9, "forget_acc": 0.8, "mia_auc": 0.5, "dist_to_retrain": 0.0,
     "grad_evals": 1000, "retrain_grad_evals": 1000},
    *[{"method": m, "epsilon": e, "test_acc": 0.5 + 0.05 * e, "forget_acc": 0.5, "mia_auc": 0.5,
       "dist_to_retrain": 10 / e, "grad_evals": 500, "retrain_grad_evals": 1000}
      for m in ("d2d", "output_perturbation") for e in (0.5, 1.0, 4.0)],
]


def _pdudt_noise(digits):
    from unlearnkit.methods import pdudt as P
    from unlearnkit.models import FlatParams, make_model
    from unlearnkit.viz.pdudt import PDUDTNoiseExplorer

    flat = FlatParams(make_model("logreg", digits.input_shape, digits.n_classes))
    corrected = flat.init().unsqueeze(0).repeat(3, 1)
    C = P.certify.GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=2.3, delta_f_tilde=2.3, rho1=0.9, rho2=0.9)
    return PDUDTNoiseExplorer(flat, corrected, digits, lr=1e-3, t1=6, constants=C, sigma=1e-4)


def _catalogue():
    from unlearnkit.viz import audit as va, capstone as vc, dashboard as vdb, descend_rewind as vd
    from unlearnkit.viz import networks as vnw, newton as vn, noisy_finetune as vf, pdudt as vp
    from unlearnkit.viz import pld as vpld, privacy as vpr, rrdu as vr, scale_explorer as vsc

    yield "00-partition", "PartitionExplorer", lambda ds: vdb.PartitionExplorer(ds, n_clients=5)
    yield "02-gaussian", "GaussianExplorer", lambda ds: vpr.GaussianExplorer(epsilon=1.0, log10_delta=-5)
    yield "02-renyi", "RenyiExplorer", lambda ds: vpr.RenyiExplorer(q=0.04, sigma=1.5, steps=100, log10_delta=-5)
    yield "02-calibrator", "CalibratorExplorer", lambda ds: vpr.CalibratorExplorer(
        epsilon=1.0, log10_delta=-5, q=0.01, steps=1000, n_grid=6)
    yield "02-pld_bracket", "PLDBracketExplorer", lambda ds: vpld.PLDBracketExplorer(
        q=1.0, sigma=10.0, steps=100, log10_delta=-5, log10_grid=-2)
    yield "03-trajectory", "TrajectoryExplorer", lambda ds: vd.TrajectoryExplorer(trials=4)
    yield "03-sigma", "SigmaExplorer", lambda ds: vd.SigmaExplorer()
    yield "04-calibration", "CalibrationExplorer", lambda ds: vf.CalibrationExplorer(d=2410)
    yield "05-network", "NetworkExplorer", lambda ds: vnw.NetworkExplorer(
        topology="two_clusters", n=8, initial="halves", rounds=40)
    yield "05-walk", "WalkExplorer", lambda ds: vnw.WalkExplorer(topology="ring", n=10, routing="rrdu", p=0.1, u=0,
                                                                  hops=200)
    yield "05-dynamic", "DynamicExplorer", lambda ds: vnw.DynamicExplorer(
        schedule="edge_churn", n=8, rate=0.2, base="ring", rounds=40)
    yield "05-scale", "ScaleExplorer", lambda ds: vsc.ScaleExplorer(topology="torus", n=100, d=1, rounds=20,
                                                                     device="cpu")
    yield "06-rrdu", "RRDUExplorer", lambda ds: vr.RRDUExplorer(None, n_clients=6, seed=0)
    yield "07-influence", "InfluenceExplorer", lambda ds: vn.InfluenceExplorer(n=8, k=5)
    yield "07-curvature", "CurvatureExplorer", lambda ds: vn.CurvatureExplorer(alpha=1.0)
    yield "07-newton_noise", "NewtonNoiseExplorer", lambda ds: vn.NewtonNoiseExplorer(epsilon=1.0, weight_decay=1.0)
    yield "08-topology", "TopologyExplorer", lambda ds: vp.TopologyExplorer(n=6, leaver=5, rounds=30, churn=0.3,
                                                                            seed=0)
    yield "08-noise", "PDUDTNoiseExplorer", _pdudt_noise
    yield "09-capstone", "CapstoneExplorer", lambda ds: vc.CapstoneExplorer(POINTS, retrain={"test_acc": 0.9})
    yield "09-ceiling", "AuditCeilingExplorer", lambda ds: va.AuditCeilingExplorer(
        certified_epsilon=1.0, n_trials=100, delta=1e-5)


EXPLORERS = list(_catalogue())
