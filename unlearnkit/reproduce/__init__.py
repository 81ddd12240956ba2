"""Reproduction against the papers' tables: ``python -m unlearnkit reproduce PAPER --profile quick|paper --out DIR``.

>>> from unlearnkit.reproduce import PAPERS, references
>>> sorted(PAPERS)
['d2d_r2d', 'newton', 'noisy_finetune', 'pdudt', 'rrdu']
>>> references("pdudt")[0].table, references("pdudt")[0].page
('Table 2', 8)
"""

from .reference import ANALOG, EXTRACTORS, PAPERS, REFERENCES, PaperInfo, RefValue, references
from .runner import REPRODUCE_PROFILES, compare, format_rows, methods_for_paper, run_reproduction

__all__ = ["PAPERS", "REFERENCES", "ANALOG", "EXTRACTORS", "PaperInfo", "RefValue", "references", "REPRODUCE_PROFILES",
           "methods_for_paper", "compare", "format_rows", "run_reproduction"]
