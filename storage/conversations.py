"""Slack-side memory in the same file: answers, feedback votes, threads the bot is in."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

import apsw


@dataclass(frozen=True, slots=True)
class FeedbackCounts:
    up: int = 0
    down: int = 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_answer(
    db: apsw.Connection,
    *,
    channel: str,
    thread_ts: str,
    question: str,
    answer: str,
    sources: list[str],
    grade: str = "",
) -> int:
    db.execute(
        "INSERT INTO answers(channel, thread_ts, question, answer, sources, grade, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (channel, thread_ts, question, answer, json.dumps(sources), grade, _now()),
    )
    return int(db.last_insert_rowid())


def record_feedback(db: apsw.Connection, answer_id: int, user_id: str, vote: int) -> bool:
    """One vote per user and answer (a second click changes it); False: unknown answer."""
    if not db.execute("SELECT 1 FROM answers WHERE id = ?", (answer_id,)).fetchall():
        return False
    db.execute(
        "INSERT INTO feedback(answer_id, user_id, vote, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(answer_id, user_id) DO UPDATE SET vote = excluded.vote, "
        "created_at = excluded.created_at",
        (answer_id, user_id, 1 if vote > 0 else -1, _now()),
    )
    return True


def feedback_counts(db: apsw.Connection) -> FeedbackCounts:
    votes = {
        int(str(vote)): int(str(count))
        for vote, count in db.execute("SELECT vote, count(*) FROM feedback GROUP BY vote")
    }
    return FeedbackCounts(up=votes.get(1, 0), down=votes.get(-1, 0))


def remember_thread(db: apsw.Connection, channel: str, thread_ts: str) -> None:
    db.execute(
        "INSERT OR IGNORE INTO bot_threads(channel, thread_ts) VALUES (?, ?)", (channel, thread_ts)
    )


def is_bot_thread(db: apsw.Connection, channel: str, thread_ts: str) -> bool:
    rows = db.execute(
        "SELECT 1 FROM bot_threads WHERE channel = ? AND thread_ts = ?", (channel, thread_ts)
    ).fetchall()
    return bool(rows)
