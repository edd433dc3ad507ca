"""FTS5 keyword search: SQL is built by `*_sql()` functions and run by `search_keyword()`.

FTS5's built-in `bm25()` is C and fast but fixes k1=1.2 and b=0.75. When settings ask for other
values, `shiori_bm25` (registered on every connection) computes the same formula in Python
with the requested constants: slower per matching row, so the built-in is used whenever the
defaults are kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import apsw
import apsw.fts5aux

from storage.records import ScoredId
from storage.tokenizer import phrases, tokenize

FTS5_DEFAULT_K1 = 1.2
FTS5_DEFAULT_B = 0.75


@dataclass(frozen=True, slots=True)
class Bm25Params:
    k1: float = FTS5_DEFAULT_K1
    b: float = FTS5_DEFAULT_B
    # Query tokens found in more than this share of chunks are dropped (1.0: keep all).
    max_df: float = 1.0

    @property
    def builtin(self) -> bool:
        return math.isclose(self.k1, FTS5_DEFAULT_K1) and math.isclose(self.b, FTS5_DEFAULT_B)


@dataclass(slots=True)
class _QueryStats:
    idf: list[float]
    average_length: float


def shiori_bm25(api: apsw.FTS5ExtensionApi, *args: apsw.SQLiteValue) -> float:
    """BM25 with k1 and b passed as SQL arguments; higher is better."""
    k1 = float(args[0]) if args else FTS5_DEFAULT_K1  # type: ignore[arg-type]
    b = float(args[1]) if len(args) > 1 else FTS5_DEFAULT_B  # type: ignore[arg-type]
    stats = api.aux_data
    if stats is None:
        stats = _QueryStats(
            idf=apsw.fts5aux.inverse_document_frequency(api),
            average_length=api.column_total_size(-1) / max(api.row_count, 1),
        )
        api.aux_data = stats
    length = api.column_size(-1)
    norm = k1 * (1 - b + b * length / max(stats.average_length, 1e-9))
    score = 0.0
    for phrase, idf in enumerate(stats.idf):
        frequency = sum(len(offsets) for offsets in api.phrase_locations(phrase))
        score += idf * frequency * (k1 + 1.0) / (frequency + norm)
    return score


def register(connection: apsw.Connection) -> None:
    connection.register_fts5_function("shiori_bm25", shiori_bm25)


def quote_fts(terms: list[str]) -> str:
    """An FTS5 query that ORs `terms` as quoted strings.

    Quoting makes every user word a literal: `NEAR`, `*`, `"`, `-` and `:` never become
    query syntax, so no input is a syntax error.
    """
    unique = dict.fromkeys(term for term in terms if term.strip())
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in unique)


def token_sql(params: Bm25Params) -> str:
    if params.builtin:
        return (
            "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY rank LIMIT ?"
        )
    return (
        "SELECT rowid, shiori_bm25(chunks_fts, ?, ?) AS score FROM chunks_fts "
        "WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?"
    )


PHRASE_SQL = (
    "SELECT rowid, -bm25(chunks_trigram) FROM chunks_trigram WHERE chunks_trigram MATCH ? "
    "ORDER BY rank LIMIT ?"
)


DEFAULT_BM25 = Bm25Params()


def prune_common(db: apsw.Connection, tokens: list[str], max_df: float) -> list[str]:
    """Drop query tokens that occur in more than `max_df` of all chunks.

    FTS5 scores every row a query matches; a word found in a third of the corpus makes that
    a third of 100k rows while adding little to BM25 (its IDF is near zero). The rarest
    token is always kept, so a query never loses all its words.
    """
    unique = list(dict.fromkeys(tokens))
    if max_df >= 1.0 or not unique:
        return tokens
    total = int(str(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0]))
    placeholders = ",".join("?" * len(unique))
    frequency = {
        str(term): int(str(docs))
        for term, docs in db.execute(
            f"SELECT term, doc FROM chunks_fts_vocab WHERE term IN ({placeholders})", unique
        )
    }
    limit = max_df * total
    kept = {term for term in unique if frequency.get(term, 0) <= limit}
    if not kept:
        kept = {min(unique, key=lambda term: frequency.get(term, 0))}
    return [token for token in tokens if token in kept]


def search_keyword(
    db: apsw.Connection, query: str, limit: int, params: Bm25Params = DEFAULT_BM25
) -> list[ScoredId]:
    """Chunks ranked by BM25 over MeCab tokens plus BM25 over exact phrases.

    The phrase score is added to the token score, so a chunk that holds a whole name the
    tokenizer split apart rises above chunks that share only its pieces.
    """
    scores: dict[int, float] = {}
    token_query = quote_fts(prune_common(db, tokenize(query), params.max_df))
    if token_query:
        if params.builtin:
            rows = db.execute(token_sql(params), (token_query, limit))
        else:
            rows = db.execute(token_sql(params), (params.k1, params.b, token_query, limit))
        for rowid, score in rows:
            scores[rowid] = float(score)
    phrase_query = quote_fts(phrases(query))
    if phrase_query:
        for rowid, score in db.execute(PHRASE_SQL, (phrase_query, limit)):
            scores[rowid] = scores.get(rowid, 0.0) + float(score)
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:limit]
    return [ScoredId(chunk_id, score) for chunk_id, score in ranked]
