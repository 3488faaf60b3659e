"""From normalised instructions to Python source: CFG, expressions, structuring, emission."""
