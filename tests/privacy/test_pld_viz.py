"""The PLD and trade-off figures."""

import pytest

pytest.importorskip("plotly")

from unlearnkit.privacy import PLD  # noqa: E402
from unlearnkit.viz._style import style_problems  # noqa: E402
from unlearnkit.viz.pld import gdp_tradeoff_figure, pld_pmf_figure  # noqa: E402


def test_figures():
    fig = gdp_tradeoff_figure({"sigma 10, 100 steps": 1.0, "sigma 5, 100 steps": 2.0})
    assert len(fig.data) == 3 and fig.data[1].name.startswith("sigma 10")
    pld = PLD.subsampled_gaussian(0.04, 1.5, grid=1e-2).self_compose(50)
    f2 = pld_pmf_figure(pld)
    assert len(f2.data) == 2 and "epsilon at delta=1e-05" in f2.layout.title.text
    assert not style_problems(fig) and not style_problems(f2)
    with pytest.raises(ValueError, match="direction="):
        pld_pmf_figure(pld, direction="both")
