import json
from pathlib import Path

import pytest

from bot.errors import ShioriError
from bot.evaluation.dataset import load_dataset
from bot.evaluation.runner import documents_ranked
from main import main

CORPUS = [
    {"_id": "nara", "title": "東大寺", "text": "東大寺の大仏は奈良にある。高さは約15メートル。"},
    {"_id": "kyoto", "title": "金閣寺", "text": "金閣寺は京都にある寺で、金箔で覆われている。"},
    {"_id": "fuji", "title": "富士山", "text": "富士山は日本で一番高い山で、標高は3776メートル。"},
    {"_id": "tea", "title": "Green tea", "text": "Green tea is made from unoxidized leaves."},
]
QUERIES = [
    {"_id": "q1", "text": "奈良の大仏の高さは？"},
    {"_id": "q2", "text": "日本で一番高い山は？"},
    {"_id": "q3", "text": "How is green tea made?"},
    {"_id": "q4", "text": "unjudged question"},
]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "mini"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in CORPUS))
    (root / "queries.jsonl").write_text(
        "\n".join(json.dumps(q, ensure_ascii=False) for q in QUERIES)
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\tnara\t1\nq2\tfuji\t1\nq3\ttea\t1\nq3\tkyoto\t0\n"
    )
    return root


def test_dataset_keeps_judged_queries_only(dataset: Path) -> None:
    loaded = load_dataset(dataset)
    assert [q.id for q in loaded.queries] == ["q1", "q2", "q3"]
    assert loaded.qrels["q3"] == {"tea": 1}
    with pytest.raises(ShioriError, match="train.tsv is missing"):
        load_dataset(dataset, "train")


def test_documents_ranked_collapses_chunks() -> None:
    urls = ["beir://d/a", "beir://d/b", "beir://d/a", "beir://other/x", "beir://d/c"]
    assert documents_ranked(urls, "beir://d/") == ["a", "b", "c"]


def test_eval_command_reports_every_mode_and_reuses_its_database(
    dataset: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("RAG_SEARCH_MODE", "EMBEDDING_PROVIDER", "RAG_VECTOR_WEIGHT"):
        monkeypatch.delenv(name, raising=False)
    report = tmp_path / "report.json"
    args = ["--env-file", "none", "eval", "--dataset", str(dataset), "--output", str(report)]
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "stored 4 documents" in printed.err
    results = json.loads(report.read_text())["results"]
    assert [r["mode"] for r in results] == ["keyword", "vector", "hybrid", "hybrid"]
    assert [r["fusion"] for r in results] == ["-", "-", "cc", "rrf"]
    for result in results:
        assert result["queries"] == 3
        assert result["ndcg_at_10"] > 0.9, result  # three easy questions, four documents
        assert result["search_p95_ms"] >= result["search_p50_ms"] > 0
        if result["mode"] == "keyword":
            assert result["embed_p50_ms"] == 0.0  # keyword search embeds nothing
        else:
            assert result["embed_p95_ms"] >= result["embed_p50_ms"] > 0
    # A second run finds every document stored and embeds nothing.
    assert main([*args, "--mode", "hybrid-cc", "--vector-weight", "0.3"]) == 0
    printed = capsys.readouterr()
    assert "stored" not in printed.err
    assert "α=0.3" in printed.out


def test_eval_of_a_missing_dataset_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--env-file", "none", "eval", "--dataset", str(tmp_path / "nope")]) == 2
    assert "not a BEIR dataset" in capsys.readouterr().err
