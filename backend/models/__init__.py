"""Models: from a spec string to a loaded CLIP-like model, and what the app offers.

| module | role |
|---|---|
| `spec.py` | parse and confine a spec (`ViT-B-32:openai`, `hf-hub:`, `local-dir:`, `catalog:`); no torch |
| `loading.py` | `load_model`, `LoadedModel`, the locked `ModelRegistry` |
| `checkpoint_files.py` | downloads, SHA-256, weights-only reading, the one checkpoint-folder writer |
| `catalog.py` + `catalog.json` | the papers' released checkpoints, as data |
| `choices.py` | what the model dropdowns offer, and the default model |
| `encoder.py` | the probe's batched encoder and its locked embedding cache |
"""
