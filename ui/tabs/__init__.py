"""One module per tab (`probe`, `benchmarks`, `annotate`, `campaigns`, `train`, `sweep`); a tab too long for one
module keeps its parts beside it under the tab's prefix (`benchmarks_failures`, `campaigns_items`,
`campaigns_export`)."""
