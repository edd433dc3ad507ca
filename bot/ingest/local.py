"""Local documents for the console: files, folders and BEIR `corpus.jsonl` files.

Only the console reaches this module: Slack users must never make the bot read its disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from bs4.dammit import UnicodeDammit

from bot.errors import IngestError
from bot.ingest.extract import extract_html
from bot.ingest.pipeline import Document

HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text"})
CORPUS_FILE = "corpus.jsonl"


def _decode(raw: bytes) -> str:
    """UTF-8 when it is, else the detected encoding (Shift_JIS and EUC-JP files exist)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        decoded = UnicodeDammit(raw, ["utf-8", "cp932", "euc-jp"]).unicode_markup
        if decoded is None:
            raise IngestError("could not detect the text encoding") from None
        return str(decoded)


def read_file(path: Path) -> Document:
    """One HTML, Markdown or text file as a document whose URL is its `file://` URI."""
    suffix = path.suffix.lower()
    url = path.resolve().as_uri()
    raw = path.read_bytes()
    if suffix in HTML_SUFFIXES:
        page = extract_html(raw)
        return Document(url=url, title=page.title or path.stem, text=page.text)
    if suffix in TEXT_SUFFIXES:
        text = _decode(raw)
        title = next(
            (line.lstrip("#").strip() for line in text.splitlines() if line.startswith("# ")),
            path.stem,
        )
        return Document(url=url, title=title, text=text)
    raise IngestError(f"unsupported file type '{suffix}' ({path}): use .html, .md or .txt")


def read_corpus(path: Path, dataset: str | None = None) -> Iterator[Document]:
    """Entries of a BEIR `corpus.jsonl` (`_id`, `title`, `text`) as documents.

    Their URLs are `beir://<dataset>/<_id>`, so evaluation maps hits back to corpus ids.
    """
    name = dataset or path.parent.name
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                doc_id = str(entry["_id"])
            except (json.JSONDecodeError, KeyError) as exc:
                raise IngestError(f"{path}:{number}: not a BEIR corpus line ({exc})") from exc
            yield Document(
                url=corpus_url(name, doc_id),
                title=str(entry.get("title") or ""),
                text=str(entry.get("text") or ""),
            )


def corpus_url(dataset: str, doc_id: str) -> str:
    return f"beir://{dataset}/{doc_id}"


def read_path(path: Path) -> Iterator[Document]:
    """Documents under `path`: a file, a BEIR corpus, or a folder of supported files."""
    if not path.exists():
        raise IngestError(f"no such file or folder: {path}")
    if path.is_file():
        if path.name == CORPUS_FILE or path.suffix == ".jsonl":
            yield from read_corpus(path)
        else:
            yield read_file(path)
        return
    corpus = path / CORPUS_FILE
    if corpus.is_file():
        yield from read_corpus(corpus)
        return
    for file in sorted(path.rglob("*")):
        if file.is_file() and file.suffix.lower() in HTML_SUFFIXES | TEXT_SUFFIXES:
            yield read_file(file)
