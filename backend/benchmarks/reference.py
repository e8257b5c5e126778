"""Published numbers shown beside the leaderboard's own rows, each labelled with its source; and chance rows.

Values are fractions, keyed like the evaluator's metrics (``<benchmark>/<metric>``),
copied from the papers (cited in docs/REFERENCE.md; table and row named in
``source``). They are only comparable with a row of this tool when the model,
its activation and the benchmark's data version match: the leaderboard shows
them as "published", never as results of this installation.
"""
from __future__ import annotations

from backend.benchmarks import load_all
from backend.benchmarks.evaluator import BENCHMARKS

_BIVLC_TABLE3 = "Miranda et al. 2024 (BiVLC), Table 3 (SugarCrepe: all 7,511 items pooled)"
_CLOVE_TABLE6 = "Castro et al. 2024 (CLOVe), Table 6"
_CLOVE_TABLE1 = "Castro et al. 2024 (CLOVe), Table 1"
_SPEC_NOTEBOOK = ("Peng et al. 2024 (SPEC): the authors' run in notebooks/evaluate_example_local.ipynb of "
                  "wjpoom/SPEC@ad982a4 (open_clip ViT-B-32, pretrained='openai'), section 4.1 output")
_SPEC_CLIP = {"absolute-size": (0.4427, 0.3627), "relative-size": (0.3407, 0.3247),
              "absolute-spatial": (0.1264, 0.1220), "relative-spatial": (0.2710, 0.2675),
              "existence": (0.5700, 0.5200), "count": (0.2527, 0.2362)}  # subset: (I2T, T2I) accuracy

PUBLISHED: tuple[dict, ...] = (
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": f"{_BIVLC_TABLE3}, row CLIP",
     "sugarcrepe/micro": 0.7656, "bivlc/i2t": 0.7583, "bivlc/t2i": 0.5240, "bivlc/group": 0.4906,
     "bivlc/ipos2t": 0.8432, "bivlc/ineg2t": 0.8950, "bivlc/tpos2i": 0.6921, "bivlc/tneg2i": 0.8282},
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": f"{_CLOVE_TABLE6}, row pre-trained",
     "sugarcrepe/replace_obj": 0.908, "sugarcrepe/replace_att": 0.802, "sugarcrepe/replace_rel": 0.691,
     "sugarcrepe/swap_obj": 0.610, "sugarcrepe/swap_att": 0.638, "sugarcrepe/add_obj": 0.771,
     "sugarcrepe/add_att": 0.685, "sugarcrepe/macro/replace": 0.801, "sugarcrepe/macro/swap": 0.623,
     "sugarcrepe/macro/add": 0.728},
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": f"{_CLOVE_TABLE1}, row pre-trained",
     "aro-vg-attribution/macro": 0.635, "aro-vg-relation/macro": 0.598,
     "aro-coco-order/accuracy": 0.477, "aro-flickr30k-order/accuracy": 0.599},
    {"model": "Human (published)", "source": "Miranda et al. 2024 (BiVLC), Table 2, row Human",
     "sugarcrepe/micro": 0.9893, "bivlc/i2t": 0.9040, "bivlc/t2i": 0.9300, "bivlc/group": 0.8680},
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": _SPEC_NOTEBOOK,
     **{f"spec-{subset}-{direction}/accuracy": pair[n] for subset, pair in _SPEC_CLIP.items()
        for n, direction in enumerate(("i2t", "t2i"))}},
)


def chance_rows() -> list[dict]:
    """One row, "Chance", with every registered benchmark's chance level per metric."""
    row: dict[str, str | float] = {"model": "Chance", "source": "docs/REFERENCE.md, Metrics"}
    load_all()
    for name, benchmark in BENCHMARKS.items():
        row.update({f"{name}/{metric}": value for metric, value in benchmark.chance.items()})
    return [row]


def reference_rows() -> list[dict]:
    """Chance, then the published rows (the leaderboard keeps those that share a column with its results)."""
    return [*chance_rows(), *PUBLISHED]
