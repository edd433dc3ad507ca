"""The seed project's evaluation set as a quality gate: real model, real tokenizer."""

import json
from pathlib import Path

import pytest

from bot.evaluation.seed import SeedReport, regressions
from main import main
from tests.conftest import SEED_FIXTURES

BASELINE = Path(__file__).parents[1] / "benchmarks" / "seed-baseline.json"


def test_no_regression_against_the_committed_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # evaluation database in a temporary folder
    for name in ("EMBEDDING_PROVIDER", "RAG_VECTOR_WEIGHT", "RAG_SEARCH_MODE"):
        monkeypatch.delenv(name, raising=False)
    args = ["--env-file", "none", "eval-seed", "--dataset", str(SEED_FIXTURES)]
    code = main([*args, "--baseline", str(BASELINE), "--fail-on-regression"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "R 1.000" in output and "REGRESSION" not in output


def test_regression_detection() -> None:
    baseline = json.loads(BASELINE.read_text())
    worse = SeedReport(8, 5, precision=0.2, recall=0.5, f1=0.3, ndcg=0.6, mrr=0.5, negative_hits=5)
    found = regressions(worse, baseline, threshold=0.1)
    assert [line.split(":")[0] for line in found] == ["f1", "ndcg", "mrr"]
    same = SeedReport(**baseline)
    assert regressions(same, baseline, threshold=0.1) == []


def test_fail_on_regression_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    impossible = tmp_path / "baseline.json"
    impossible.write_text(json.dumps({"f1": 2.0, "ndcg": 2.0, "mrr": 2.0}))
    args = ["--env-file", "none", "eval-seed", "--dataset", str(SEED_FIXTURES)]
    assert main([*args, "--baseline", str(impossible), "--fail-on-regression"]) == 1
    assert main([*args, "--baseline", str(impossible)]) == 0  # reported, not failed
