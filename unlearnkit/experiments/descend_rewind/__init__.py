"""Experiments of "Descend or Rewind?" (Mu & Klabjan 2025): D2D/R2D profiles and runners, their frontier, the coupled simulator."""
