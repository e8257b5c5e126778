"""Model patching (WiSE-FT / CLOVe): `interpolation.py` holds the definition on state dicts (no model loading),
`sweep.py` the sweep over alpha, the recommendation, the export and the `sweep` job kind."""
