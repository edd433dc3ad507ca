"""FTS5 keyword search: SQL is built by `*_sql()` functions and run by `search_keyword()`.

FTS5's built-in `bm25()` is C and fast but fixes k1=1.2 and b=0.75. When settings ask for other
values, `shiori_bm25` (registered on every connection) computes the same formula in Python
with the requested constants: slower per matching row, so the built-in is used whenever the
defaults are kept.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import apsw
import apsw.fts5aux

from storage import meta
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
    # Tokens found in more than this many chunks score only the chunks rarer tokens found
    # (0: every token brings its own candidates). See `plan_terms`.
    candidate_max_chunks: int = 0

    @property
    def builtin(self) -> bool:
        return math.isclose(self.k1, FTS5_DEFAULT_K1) and math.isclose(self.b, FTS5_DEFAULT_B)


@dataclass(frozen=True, slots=True)
class TermPlan:
    """Which query tokens find candidates (`seeds`) and which only add to their scores."""

    seeds: list[str]
    boosters: list[str]


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


FTS_TABLES = ("chunks_fts", "chunks_trigram")
COMPACT_PAGES = 200  # pages merged per step: ~0.2-0.4 s at 100k chunks on 2 cores
COMPACT_MIN_ROWS = 500
COMPACT_ROWS_SHARE = 0.01


def compaction_due(changed_rows: int, chunks: int) -> bool:
    """Small writes that delete chunks leave FTS5 slower until its segments are merged.

    At 100k chunks, 150 pages stored and removed again made chunk-count look-ups 5× and
    token BM25 1.4× slower; merging everything back takes ~20 s there (README), so it waits
    for 1% of the rows to have been written.
    """
    return changed_rows >= max(COMPACT_MIN_ROWS, COMPACT_ROWS_SHARE * chunks)


def compact_step(db: apsw.Connection, table: str, first: bool) -> bool:
    """One bounded step of FTS5's incremental optimize; False once there is nothing left.

    A negative page count starts the optimize, positive ones continue it; the command did
    no work when the change counter moved by less than two (FTS5 documentation).
    """
    before = db.total_changes()
    pages = -COMPACT_PAGES if first else COMPACT_PAGES
    db.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', ?)", (pages,))
    return db.total_changes() - before > 1


class ChunkFrequencies:
    """How many chunks hold each term, remembered until the chunks change.

    FTS5's vocabulary table counts a term's chunks by walking its whole posting list (0.3 ms
    for a word in 8k of 100k chunks); the common words that cost most recur in most questions.
    Any write to the knowledge base (`meta.generation`) empties the memory.
    """

    def __init__(self, max_terms: int = 50_000) -> None:
        self._lock = threading.Lock()
        self._max_terms = max_terms
        self._generation = -1
        self._known: dict[str, int] = {}

    def lookup(self, db: apsw.Connection, terms: list[str]) -> dict[str, int]:
        generation = meta.generation(db)
        with self._lock:
            if generation != self._generation or len(self._known) > self._max_terms:
                self._known = {}
                self._generation = generation
            known = {term: self._known[term] for term in terms if term in self._known}
        missing = [term for term in terms if term not in known]
        if missing:
            counted = dict.fromkeys(missing, 0) | _count_chunks(db, missing)
            with self._lock:
                if generation == self._generation:
                    self._known.update(counted)
            known |= counted
        return known


def _count_chunks(db: apsw.Connection, terms: list[str]) -> dict[str, int]:
    placeholders = ",".join("?" * len(terms))
    return {
        str(term): int(str(docs))
        for term, docs in db.execute(
            f"SELECT term, doc FROM chunks_fts_vocab WHERE term IN ({placeholders})", terms
        )
    }


def plan_terms(
    tokens: list[str], params: Bm25Params, frequency: dict[str, int], total: int
) -> TermPlan:
    """Drop the commonest query tokens and pick the ones that find candidates.

    FTS5 scores every row a query matches, at about 2 µs a row: a word found in a third of
    100k chunks costs tens of milliseconds while adding little to BM25 (its IDF is near
    zero). Tokens in more than `max_df` of all chunks are dropped; the rarest token always
    stays, so a query never loses all its words. Of the rest, tokens in more than
    `candidate_max_chunks` chunks become boosters: they add their BM25 share to chunks that
    the rarer seed tokens found, but a chunk holding boosters only is not fetched. At 100k
    chunks this halves keyword time; keyword MRR@10 there went 0.801 → 0.804 (README).
    """
    unique = list(dict.fromkeys(term for term in tokens if term.strip()))
    if not unique:
        return TermPlan([], [])
    if params.max_df < 1.0:
        kept = [term for term in unique if frequency.get(term, 0) <= params.max_df * total]
        unique = kept or [min(unique, key=lambda term: frequency.get(term, 0))]
    if params.candidate_max_chunks <= 0:
        return TermPlan(unique, [])
    seeds = [term for term in unique if frequency.get(term, 0) <= params.candidate_max_chunks]
    boosters = [term for term in unique if term not in seeds]
    return TermPlan(seeds, boosters) if seeds else TermPlan(boosters, [])


def _ranked(
    db: apsw.Connection, match: str, limit: int, params: Bm25Params
) -> Iterator[tuple[int, float]]:
    if params.builtin:
        rows = db.execute(token_sql(params), (match, limit))
    else:
        rows = db.execute(token_sql(params), (params.k1, params.b, match, limit))
    for rowid, score in rows:
        yield int(rowid), float(score)


def token_hits(
    db: apsw.Connection,
    query: str,
    limit: int,
    params: Bm25Params = DEFAULT_BM25,
    frequencies: ChunkFrequencies | None = None,
) -> list[ScoredId]:
    """Chunks ranked by BM25 over the query's MeCab tokens.

    With boosters, two queries run: seeds alone, and `(seeds) AND (boosters)`, whose BM25
    counts every token. Each list's top `limit` holds every chunk that belongs in the
    overall top `limit` (scores only grow with boosters), so merging them by best score is
    exact among the chunks seeds find.
    """
    terms = list(dict.fromkeys(tokenize(query)))
    frequency: dict[str, int] = {}
    total = 0
    if terms and (params.max_df < 1.0 or params.candidate_max_chunks > 0):
        frequency = (frequencies or ChunkFrequencies()).lookup(db, terms)
        total = int(str(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0]))
    plan = plan_terms(terms, params, frequency, total)
    if not plan.seeds:
        return []
    seeds = quote_fts(plan.seeds)
    scores = dict(_ranked(db, seeds, limit, params))
    if plan.boosters:
        both = f"({seeds}) AND ({quote_fts(plan.boosters)})"
        for chunk_id, score in _ranked(db, both, limit, params):
            scores[chunk_id] = max(score, scores.get(chunk_id, score))
    return _top(scores, limit)


def phrase_hits(
    db: apsw.Connection,
    query: str,
    limit: int,
    params: Bm25Params = DEFAULT_BM25,
    frequencies: ChunkFrequencies | None = None,
) -> list[ScoredId]:
    """Chunks ranked by BM25 over the query's phrases in the trigram index.

    A phrase that is one common word (in more than `candidate_max_chunks` chunks) is left
    to the token search: in the trigram index アメリカ matches 8k of 100k chunks and costs
    20 ms for a bonus with an IDF near zero. Phrases of several words, where MeCab's cuts
    can differ between question and page, are always looked up.
    """
    found = phrases(query)
    if params.candidate_max_chunks > 0 and found:
        words = {phrase: tokenize(phrase) for phrase in found}
        single = [ws[0] for ws in words.values() if len(ws) == 1]
        frequency = (frequencies or ChunkFrequencies()).lookup(db, single) if single else {}
        found = [
            phrase
            for phrase, ws in words.items()
            if len(ws) != 1 or frequency.get(ws[0], 0) <= params.candidate_max_chunks
        ]
    phrase_query = quote_fts(found)
    if not phrase_query:
        return []
    return _top(dict(db.execute(PHRASE_SQL, (phrase_query, limit))), limit)


def merge_hits(token: list[ScoredId], phrase: list[ScoredId], limit: int) -> list[ScoredId]:
    """Token and phrase scores added up.

    A chunk that holds a whole name the tokenizer split apart rises above chunks that
    share only its pieces.
    """
    scores = {hit.chunk_id: hit.score for hit in token}
    for hit in phrase:
        scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + hit.score
    return _top(scores, limit)


def _top(scores: dict[int, float], limit: int) -> list[ScoredId]:
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:limit]
    return [ScoredId(int(chunk_id), float(score)) for chunk_id, score in ranked]


def search_keyword(
    db: apsw.Connection,
    query: str,
    limit: int,
    params: Bm25Params = DEFAULT_BM25,
    frequencies: ChunkFrequencies | None = None,
) -> list[ScoredId]:
    """Token BM25 plus phrase BM25 in one call (the engine runs the two in parallel)."""
    tokens = token_hits(db, query, limit, params, frequencies)
    return merge_hits(tokens, phrase_hits(db, query, limit, params, frequencies), limit)
