"""The Benchmarks tab's chart: per benchmark, each model's headline metric (the paper's main metric) as a bar with
its 95% interval, its value written on it, and the benchmark's chance level drawn across, all without hovering.

Altair (Vega-Lite, which Gradio's plot component renders) rather than `gr.BarPlot`: that draws bars only, with no
error bars, rules or labels. Version 5: Gradio bundles Vega-Lite 5. Rendered as SVG, so what a person sees is in
the page (and a test can read it).
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from backend.benchmarks import get_benchmark
from backend.benchmarks.results import results, row_label
from backend.core.store import Store

CHART_COLUMNS = ["benchmark", "metric", "group", "model", "value (%)", "low (%)", "high (%)", "chance (%)"]
HEIGHT = 320
MAX_WIDTH = 1100


def headline_metric(benchmark: str, metrics: Mapping) -> str:
    """The metric a one-number summary uses: the benchmark's declared headline (its paper's main metric), else
    `overall`, else its first."""
    try:
        declared = [m for m in get_benchmark(benchmark).headline if m in metrics]
    except ValueError:  # a result of a benchmark no longer registered still has numbers to show
        declared = []
    return (declared or [m for m in ("overall",) if m in metrics] or list(metrics))[0]


def column_title(key: str) -> str:
    """How the page heads a ``<benchmark>/<metric>`` key (table column, chart group): spaced slashes, so a narrow
    column breaks the name between its parts, not inside a word (the CSV keeps the key)."""
    return " / ".join(key.split("/"))


def chance_of(benchmark: str, metric: str) -> float | None:
    try:
        return get_benchmark(benchmark).chance.get(metric)
    except ValueError:
        return None


def percent(value) -> float | None:
    return round(100 * value, 1) if isinstance(value, (int, float)) else None


def chart_frame(store: Store, benchmarks: list[str] | None = None,
                names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A bar per (benchmark, leaderboard row): the headline metric, its interval and chance, in %."""
    stored = sorted(results(store, benchmarks or ()), key=lambda row: (row["benchmark"], row["id"]))
    bars = []
    for row in stored:
        metric = headline_metric(row["benchmark"], row["metrics"])
        low, high = (row.get("intervals") or {}).get(metric) or (None, None)
        bars.append({"benchmark": row["benchmark"], "metric": metric,
                     "group": column_title(f"{row['benchmark']}/{metric}"), "model": row_label(row, names),
                     "value (%)": percent(row["metrics"][metric]), "low (%)": percent(low), "high (%)": percent(high),
                     "chance (%)": percent(chance_of(row["benchmark"], metric))})
    return pd.DataFrame(bars, columns=CHART_COLUMNS)


def width(frame: pd.DataFrame) -> int:
    """Pixels for the plot: room for every bar and its label, at most what a 1400 px window shows (Gradio sizes
    Altair charts as their spec says)."""
    return min(MAX_WIDTH, max(360, 44 * len(frame) + 28 * frame["group"].nunique()))


def chart(frame: pd.DataFrame):
    """Grouped bars (a group per benchmark and metric, a colour per model), error bars, value labels and a black
    chance line across each group; None when there is nothing to draw."""
    if frame.empty:
        return None
    import altair as alt

    x = alt.X("group:N", title=None, sort=None, axis=alt.Axis(labelAngle=-15, labelLimit=260))
    offset = alt.XOffset("model:N", sort=None)
    y = alt.Y("value (%):Q", title="headline metric (%)", scale=alt.Scale(domain=[0, 100]))
    color = alt.Color("model:N", sort=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=900,
                                                              title="model (leaderboard row)"))
    tooltip = ["model", "benchmark", "metric", "value (%)", "low (%)", "high (%)", "chance (%)"]
    base = alt.Chart(frame)
    bars = base.mark_bar().encode(x=x, xOffset=offset, y=y, color=color, tooltip=tooltip)
    errors = base.mark_rule(color="#333", strokeWidth=1.5).encode(x=x, xOffset=offset, y="low (%):Q",
                                                                  y2="high (%):Q")
    labels = base.mark_text(dy=-7, fontSize=11, color="#111").encode(
        x=x, xOffset=offset, y=alt.Y("label_y:Q"), text=alt.Text("value (%):Q", format=".1f")
    ).transform_calculate(label_y="isValid(datum['high (%)']) ? datum['high (%)'] : datum['value (%)']")
    with_chance = base.transform_filter("isValid(datum['chance (%)'])")
    chance = with_chance.mark_rule(color="black", strokeWidth=2.5).encode(
        x=alt.X("group:N", sort=None, bandPosition=0.04), x2=alt.X2("group:N", bandPosition=0.96), y="chance (%):Q")
    chance_label = with_chance.mark_text(align="left", dx=2, dy=-6, fontSize=10, color="black").encode(
        x=alt.X("group:N", sort=None, bandPosition=0), y="chance (%):Q", text="chance_text:N"
    ).transform_calculate(chance_text="'chance ' + format(datum['chance (%)'], '.1f')")
    layered = alt.layer(bars, errors, labels, chance, chance_label).properties(
        height=HEIGHT, width=width(frame),
        title=alt.Title("Headline metric per benchmark (%): bar = value, whisker = 95% interval, black line = chance",
                        anchor="start", fontSize=13))
    return layered.properties(usermeta={"embedOptions": {"renderer": "svg"}})
