"""The app's forms as their endpoints take them, for tests that call those endpoints through gradio_client: each
form's arguments in order, with small valid values (`form`: the Train tab's /launch; `create`: a call of the
Campaigns tab's /create_campaign)."""
from __future__ import annotations


def form(**overrides):
    """The launch endpoint's arguments in order, with small valid values."""
    values = {"name": "", "base_model": "toyworld", "data": "toyworld-finetune", "manifest": "", "loss": "ce_clip",
              "alpha": 0.2, "beta": 0.4, "imc": "contrastive",
              "aux_types": ["relation", "attribute", "action", "object"], "w_hn": 1.0, "w_hp": 1.0,
              "families": ["negclip_swap"], "hard_negative_images": False, "steps": 5, "batch_size": 8, "lr": 1e-4,
              "warmup_steps": 1, "grad_accum": 1, "seed": 0, "eval_every": 5, "eval_benchmarks": [], "recipe": None,
              "target": "local", "nproc": 1, "flavor": "a10g-small", "nodes": 1, "gpus_per_node": 1}
    values.update(overrides)
    return list(values.values())


def create(client, name, n_items=6, **overrides):
    """/create_campaign with the form's arguments in order (a toyworld campaign unless overridden)."""
    values = {"name": name, "source": "toyworld", "n_items": n_items, "seed": 0, "path": "", "images_dir": "",
              "probe_image": "", "overlap": 2, "rule": "third", "gold_rate": 0.1, "gold_from": "",
              "tasks_per_session": 50,
              "min_seconds": 0, "human_baseline": False, "preset": "toyworld"}
    values.update(overrides)
    return client.predict(*values.values(), api_name="/create_campaign")
