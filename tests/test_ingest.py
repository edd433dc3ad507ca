import json
from pathlib import Path

import pytest

from bot.errors import IngestError
from bot.ingest.local import read_corpus, read_file, read_path
from bot.ingest.pipeline import Document, EventKind, Ingestor, ProgressEvent
from storage import meta
from storage.knowledge_base import KnowledgeBase
from tests.conftest import TEST_PAGES
from tests.fakes import HashingEmbedder


@pytest.fixture
def ingestor(kb: KnowledgeBase, embedder: HashingEmbedder) -> Ingestor:
    kb.bind_embedding(embedder.name, embedder.dim)
    return Ingestor(kb, embedder, chunk_size=300, chunk_overlap=30, batch_chunks=8)


async def test_unchanged_document_is_not_embedded_again(
    ingestor: Ingestor, embedder: HashingEmbedder, kb: KnowledgeBase
) -> None:
    document = Document("u", "Title", "Some text about dragons.")
    first = await ingestor.ingest(document)
    assert first.kind is EventKind.STORED and first.chunks == 1
    embedded = embedder.documents_embedded
    second = await ingestor.ingest(document)
    assert second.kind is EventKind.UNCHANGED
    assert embedder.documents_embedded == embedded
    changed = await ingestor.ingest(Document("u", "Title", "Now about slimes. " * 40))
    assert changed.kind is EventKind.STORED and changed.chunks > 1
    assert kb.stats().sources == 1
    assert kb.search_keyword("dragons", 5) == []


async def test_many_documents_batch_embeddings_and_report_progress(
    ingestor: Ingestor, embedder: HashingEmbedder
) -> None:
    documents = [Document(f"u{i}", f"T{i}", f"Document {i} text.") for i in range(20)]
    events: list[ProgressEvent] = []
    summary = await ingestor.ingest_many(documents, progress=events.append)
    assert summary.stored == 20 and summary.chunks == 20 and not summary.failures
    assert len(events) == 20
    assert embedder.document_calls < 20  # several documents per embedding call


async def test_an_ingestion_job_ends_by_compacting_the_keyword_index_when_due(
    ingestor: Ingestor, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("storage.keyword.COMPACT_MIN_ROWS", 10)
    await ingestor.ingest_many([Document(f"u{i}", "T", f"Page {i} text.") for i in range(4)])
    assert meta.get(kb._writer, meta.KEYWORD_WRITES_KEY) == "4"  # not due: left for later
    await ingestor.ingest_many([Document(f"v{i}", "T", f"Page {i} text.") for i in range(6)])
    assert meta.get(kb._writer, meta.KEYWORD_WRITES_KEY) == "0"
    assert len(kb.search_keyword("page", 20)) == 10


async def test_a_failing_document_does_not_stop_the_others(ingestor: Ingestor) -> None:
    documents = [
        Document("good", "", "text"),
        Document("empty", "", "   "),
        Document("ok", "", "x"),
    ]
    summary = await ingestor.ingest_many(documents)
    assert summary.stored == 2
    assert {url: str(cause) for url, cause in summary.failures.items()} == {
        "empty": "no text found in empty"
    }


async def test_embedding_failure_is_reported_per_document(kb: KnowledgeBase) -> None:
    class BrokenEmbedder(HashingEmbedder):
        async def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            raise RuntimeError("model crashed")

    broken = BrokenEmbedder()
    kb.bind_embedding(broken.name, broken.dim)
    summary = await Ingestor(kb, broken, chunk_size=300, chunk_overlap=30).ingest_many(
        [Document("a", "", "text")]
    )
    assert str(summary.failures["a"]) == "embedding: model crashed"
    assert kb.stats().chunks == 0


def test_read_html_file_extracts_title_and_tables() -> None:
    document = read_file(TEST_PAGES / "table_numeric.html")
    assert document.url.startswith("file://")
    assert document.title == "数値テーブル - ゲームステータス"
    assert "| りゅうおう | 200 |" in document.text


def test_read_text_in_shift_jis(tmp_path: Path) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes("# 見出し\n日本語のテキストです。".encode("cp932"))
    document = read_file(path)
    assert document.title == "見出し"
    assert "日本語のテキストです" in document.text


def test_unsupported_and_missing_files(tmp_path: Path) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF")
    with pytest.raises(IngestError, match="unsupported file type '.pdf'"):
        read_file(pdf)
    with pytest.raises(IngestError, match="no such file"):
        list(read_path(tmp_path / "missing"))


def test_folder_reads_supported_files_only() -> None:
    documents = list(read_path(TEST_PAGES))
    assert len(documents) == len(list(TEST_PAGES.glob("*.html")))


def test_beir_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "mini" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text(
        json.dumps({"_id": "d1", "title": "T", "text": "body"})
        + "\n\n"
        + json.dumps({"_id": 2, "text": "second"})
        + "\n"
    )
    documents = list(read_path(corpus.parent))
    assert [(d.url, d.title, d.text) for d in documents] == [
        ("beir://mini/d1", "T", "body"),
        ("beir://mini/2", "", "second"),
    ]
    corpus.write_text("not json\n")
    with pytest.raises(IngestError, match="corpus.jsonl:1"):
        list(read_corpus(corpus))
