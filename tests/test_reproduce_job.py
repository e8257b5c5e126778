"""`reproduce --job`: each checkpoint runs as an `evaluate` job (a subprocess of the local target), and the table
printed after the job settles carries the job's stored numbers, the same as an in-process run."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from backend.benchmarks import evaluate_many
from backend.models.loading import load_model

pytestmark = pytest.mark.system

LIMIT = 6


def test_reproduce_as_jobs_prints_the_jobs_numbers(tmp_path):
    table = tmp_path / "table.json"
    table.write_text(json.dumps([{"model": "Toy (published)", "source": "Planted, Table 1", "paper": "planted",
                                  "checkpoint": "toyworld", "toy-sugarcrepe/overall": 0.5,
                                  "toy-zeroshot-shape/top1": 0.75}]))
    workspace = tmp_path / "ws"
    env = {**os.environ, "COMPLAB_WORKSPACE": str(workspace), "COMPLAB_DB": str(workspace / "lab.db"),
           "COMPLAB_RUNS_DIR": str(workspace / "runs"), "COMPLAB_DOWNLOADS_DIR": str(workspace)}
    done = subprocess.run([sys.executable, "-m", "backend", "reproduce", "planted", "--table", str(table), "--job",
                           "--limit", str(LIMIT), "--workers", "0", "--device", "cpu"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "job 1: toyworld on toy-sugarcrepe, toy-zeroshot-shape" in done.stderr
    ours = evaluate_many(["toy-sugarcrepe", "toy-zeroshot-shape"], load_model("toyworld", device="cpu"), limit=LIMIT)
    rows = {row[1]: row for row in csv.reader(io.StringIO(done.stdout), dialect="excel-tab") if len(row) == 8}
    for metric, published in (("toy-sugarcrepe/overall", 0.5), ("toy-zeroshot-shape/top1", 0.75)):
        assert rows[metric][3] == f"{100 * ours[metric]:.2f}"
        assert rows[metric][5] == f"{100 * (ours[metric] - published):+.2f}"
