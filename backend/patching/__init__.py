"""Model patching (WiSE-FT / CLOVe): `interpolation.py` holds the definition on state dicts (no model loading),
`sweep.py` the sweep over alpha, the recommendation, the export and the `sweep` job kind; `config.py` its config
and default axes; `figure.py` and `exports.py` the trade-off figure (SVG, PNG) and the results table (CSV)."""
