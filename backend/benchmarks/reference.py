"""Published numbers shown beside the leaderboard's own rows, each labelled with its source; and chance rows.

Values are fractions, keyed like the evaluator's metrics (``<benchmark>/<metric>``),
copied from the papers (cited in docs/REFERENCE.md; table and row named in
``source``). They are only comparable with a row of this tool when the model,
its activation and the benchmark's data version match: the leaderboard shows
them as "published", never as results of this installation.

A row that measures a released checkpoint names it (``checkpoint``: the spec the model lists offer) and the paper
whose model it is (``paper``): `backend.benchmarks.reproduce` runs those rows' checkpoints on those rows'
benchmarks and prints ours beside them (``python -m backend reproduce PAPER``).
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
_VL_COMPO = "Oh et al. 2024 (vl_compo, arXiv 2406.09388), individual_results.csv"
_OPENAI_B32 = "ViT-B-32-quickgelu:openai"


def _baseline(paper: str) -> dict:
    """A paper's row of its baseline, OpenAI CLIP ViT-B/32."""
    return {"paper": paper, "checkpoint": _OPENAI_B32}


# vl_compo's per-checkpoint table (github.com/ytaek-oh/vl_compo, commit 43e2eae), in percent, columns as below: ARO
# (VG-R and VG-A macro, the orders), SugarCrepe's seven subsets, Winoground, COCO and Flickr30k retrieval (Karpathy
# test, R@1/5/10 both ways). Its CLoVe is the released (patched) model.
_VL_COMPO_COLUMNS = (
    "aro-vg-relation/macro", "aro-vg-attribution/macro", "aro-coco-order/accuracy", "aro-flickr30k-order/accuracy",
    *(f"sugarcrepe/{s}" for s in ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj",
                                  "add_att")),
    "winoground/text", "winoground/image", "winoground/group",
    *(f"{d}-retrieval/{q}_R@{k}" for d in ("coco", "flickr30k") for q in ("i2t", "t2i") for k in (1, 5, 10)))
_VL_COMPO_ROWS = (  # (row in the csv, paper, checkpoint, values)
    ("ViT-B-32,openai", "clip", _OPENAI_B32, (
        59.90, 63.20, 47.56, 59.56, 90.92, 80.08, 69.20, 61.22, 63.96, 77.21, 68.79, 31.25, 11.00, 8.75,
        50.12, 75.00, 83.54, 30.45, 55.97, 66.86, 78.80, 94.90, 98.20, 58.76, 83.50, 90.04)),
    ("NegCLIP,coco-ft", "aro", "catalog:negclip", (
        81.76, 72.07, 82.56, 87.14, 93.83, 87.94, 74.40, 75.92, 77.03, 90.06, 85.12, 30.25, 11.00, 8.00,
        59.34, 82.80, 89.44, 45.15, 72.06, 81.72, 85.70, 96.40, 98.80, 71.58, 91.80, 95.68)),
    ("CE-CLIP,coco-ft", "ce-clip", "catalog:ce-clip", (
        81.20, 75.67, 72.41, 75.80, 94.25, 90.36, 81.15, 74.69, 76.58, 92.39, 91.91, 19.50, 12.00, 5.25,
        56.04, 81.72, 89.02, 47.09, 74.11, 83.08, 75.30, 93.20, 96.90, 68.94, 89.58, 94.14)),
    ("CLoVe,laioncoco600m-ft", "clove", "catalog:clove", (
        77.43, 69.05, 91.63, 93.74, 93.10, 91.12, 81.65, 74.69, 77.63, 85.98, 94.65, 22.00, 9.50, 6.50,
        48.20, 73.98, 82.86, 42.72, 68.70, 78.24, 69.50, 90.40, 95.60, 68.66, 89.98, 94.44)),
    ("DAC-LLM,cc3m-ft", "dac", "catalog:dac-llm", (
        81.29, 73.92, 94.42, 95.94, 94.43, 89.34, 84.42, 75.10, 74.17, 89.62, 97.69, 22.50, 10.50, 4.75,
        29.92, 54.52, 65.60, 37.33, 63.50, 73.80, 53.00, 79.80, 87.90, 64.60, 87.96, 92.94)),
    ("DAC-SAM,cc3m-ft", "dac", "catalog:dac-sam", (
        77.17, 70.54, 91.51, 94.16, 91.22, 85.91, 83.93, 71.84, 75.38, 87.49, 95.52, 21.25, 12.75, 8.50,
        33.12, 57.84, 68.80, 33.94, 59.72, 70.04, 59.70, 82.70, 89.00, 61.70, 85.70, 91.24)),
    ("TSVLC-Negs_RB_LLM,cc3m-ft", "tsvlc", "catalog:tsvlc-rb-llm", (
        80.65, 73.05, 85.33, 91.64, 88.14, 76.78, 62.59, 64.08, 66.67, 75.80, 81.07, 28.00, 8.25, 5.75,
        46.40, 71.84, 80.86, 36.63, 62.24, 72.66, 74.90, 92.60, 96.80, 65.10, 87.56, 92.72)),
)


def _vl_compo_rows() -> tuple[dict, ...]:
    return tuple({"model": f"{row.split(',')[0]} (published)", "source": f"{_VL_COMPO}, row {row}", "paper": paper,
                  "checkpoint": checkpoint,
                  **{c: round(v / 100, 4) for c, v in zip(_VL_COMPO_COLUMNS, values, strict=True)}}
                 for row, paper, checkpoint, values in _VL_COMPO_ROWS)


PUBLISHED: tuple[dict, ...] = (
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": f"{_BIVLC_TABLE3}, row CLIP", **_baseline("bivlc"),
     "sugarcrepe/micro": 0.7656, "bivlc/i2t": 0.7583, "bivlc/t2i": 0.5240, "bivlc/group": 0.4906,
     "bivlc/ipos2t": 0.8432, "bivlc/ineg2t": 0.8950, "bivlc/tpos2i": 0.6921, "bivlc/tneg2i": 0.8282},
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": f"{_CLOVE_TABLE6}, row pre-trained", **_baseline("clove"),
     "sugarcrepe/replace_obj": 0.908, "sugarcrepe/replace_att": 0.802, "sugarcrepe/replace_rel": 0.691,
     "sugarcrepe/swap_obj": 0.610, "sugarcrepe/swap_att": 0.638, "sugarcrepe/add_obj": 0.771,
     "sugarcrepe/add_att": 0.685, "sugarcrepe/macro/replace": 0.801, "sugarcrepe/macro/swap": 0.623,
     "sugarcrepe/macro/add": 0.728},
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": f"{_CLOVE_TABLE1}, row pre-trained", **_baseline("clove"),
     "aro-vg-attribution/macro": 0.635, "aro-vg-relation/macro": 0.598,
     "aro-coco-order/accuracy": 0.477, "aro-flickr30k-order/accuracy": 0.599},
    {"model": "Human (published)", "source": "Miranda et al. 2024 (BiVLC), Table 2, row Human",
     "sugarcrepe/micro": 0.9893, "bivlc/i2t": 0.9040, "bivlc/t2i": 0.9300, "bivlc/group": 0.8680},
    {"model": "OpenAI CLIP ViT-B/32 (published)", "source": _SPEC_NOTEBOOK, **_baseline("spec"),
     **{f"spec-{subset}-{direction}/accuracy": pair[n] for subset, pair in _SPEC_CLIP.items()
        for n, direction in enumerate(("i2t", "t2i"))}},
    *_vl_compo_rows(),
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
