"""Reproduction against the papers' tables: ``python -m unlearnkit reproduce PAPER --profile quick|paper --out DIR``.

>>> from unlearnkit.reproduce import PAPERS, references
>>> sorted(PAPERS)
['d2d_r2d', 'newton', 'noisy_finetune', 'pdudt', 'rrdu']
>>> references("pdudt")[0].table, references("pdudt")[0].page
('Table 2', 8)
"""

from ..runtime import lazy_exports

__all__ = [
    "run_reproduction", "PAPERS",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "run_reproduction": ".runner", "PAPERS": ".reference",
})
