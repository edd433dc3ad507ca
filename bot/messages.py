"""Every user-facing string, Japanese (default) and English, in the seed's wording."""

from __future__ import annotations

from bot.answer import Answer
from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.pipeline import IngestSummary
from storage.conversations import FeedbackCounts
from storage.records import Stats

Locale = str

_TEXT: dict[str, dict[str, str]] = {
    "ja": {
        "added": "ページを取り込みました: {url} ({chunks}チャンク)",
        "unchanged": "変更はありません: {url} (取り込み済み)",
        "ingest_failed": (
            "エラー: ページの取り込みに失敗しました。\n     URL: {url}\n     原因: {cause}"
        ),
        "folder_done": "└─ 完了: {pages}ページ / {chunks}チャンク / エラー: {errors}件",
        "failed_item": "     ✗ {url}\n       原因: {cause}",
        "status": "ナレッジベース統計:\n     総チャンク数: {chunks}\n     ソースURL数: {sources}",
        "status_detail": (
            "     内訳: {kinds}\n     DBサイズ: {size}\n     埋め込みモデル: {model} ({dim}次元)"
        ),
        "deleted": "削除しました: {url} ({chunks}チャンク)",
        "not_stored": "エラー: {url} はナレッジベースにありません。",
        "not_found": "ナレッジベースに該当する情報が見つかりませんでした。",
        "sources": "参照元:",
        "llm_unavailable": "(LLM に接続できなかったため、該当箇所の抜粋を表示しています)",
        "error": "エラー: {cause}",
        "crawl_started": "クロールを開始しました... (リンク収集中)",
        "crawl_failed": "エラー: クロールに失敗しました。\n     URL: {url}\n     原因: {cause}",
        "help": "使い方: {usage}\nそれ以外の入力は質問として扱います。",
        "feedback_counts": "     フィードバック: 👍 {up} / 👎 {down}",
        "not_admin": "このコマンドは管理者のみ実行できます。",
        "rate_limited": "質問の間隔が短すぎます。{seconds}秒ほど待ってからもう一度お試しください。",
        "busy": "ただいま混み合っています。少し待ってからもう一度お試しください。",
        "crawl_running": "このURLのクロールはすでに実行中です: {url}",
        "crawl_progress": (
            "進捗: {done}/{total}ページ / {chunks}チャンク / エラー: {errors}件\n     処理中: {url}"
        ),
        "feedback_thanks": "フィードバックありがとうございます。",
        "unexpected": "エラー: 予期しない問題が発生しました。管理者に連絡してください。",
    },
    "en": {
        "added": "Added page: {url} ({chunks} chunks)",
        "unchanged": "No change: {url} (already stored)",
        "ingest_failed": "Error: could not add the page.\n     URL: {url}\n     Cause: {cause}",
        "folder_done": "└─ Done: {pages} pages / {chunks} chunks / errors: {errors}",
        "failed_item": "     ✗ {url}\n       Cause: {cause}",
        "status": "Knowledge base:\n     Chunks: {chunks}\n     Source URLs: {sources}",
        "status_detail": (
            "     By kind: {kinds}\n     Database size: {size}\n"
            "     Embedding model: {model} ({dim} dimensions)"
        ),
        "deleted": "Deleted: {url} ({chunks} chunks)",
        "not_stored": "Error: {url} is not in the knowledge base.",
        "not_found": "Nothing in the knowledge base answers this.",
        "sources": "Sources:",
        "llm_unavailable": "(The LLM could not be reached; showing the relevant passages instead.)",
        "error": "Error: {cause}",
        "crawl_started": "Crawl started... (collecting links)",
        "crawl_failed": "Error: the crawl failed.\n     URL: {url}\n     Cause: {cause}",
        "help": "Usage: {usage}\nAnything else is taken as a question.",
        "feedback_counts": "     Feedback: 👍 {up} / 👎 {down}",
        "not_admin": "Only administrators can run this command.",
        "rate_limited": "Too many questions in a short time. Please wait about {seconds} s.",
        "busy": "shiori is busy right now. Please try again in a moment.",
        "crawl_running": "A crawl of this URL is already running: {url}",
        "crawl_progress": (
            "Progress: {done}/{total} pages / {chunks} chunks / errors: {errors}\n"
            "     Working on: {url}"
        ),
        "feedback_thanks": "Thanks for the feedback.",
        "unexpected": "Error: something unexpected went wrong. Please tell an administrator.",
    },
}


_CAUSES: dict[str, dict[FetchFailure, str]] = {
    "ja": {
        FetchFailure.INVALID_URL: "URLが正しくありません ({detail})",
        FetchFailure.SCHEME: "http/https 以外のURLは取り込めません ({detail})",
        FetchFailure.BLOCKED: "アクセスが許可されていないアドレスです ({detail})",
        FetchFailure.DNS: "ホスト名を解決できません ({detail})",
        FetchFailure.CONNECTION: "接続に失敗しました ({detail})",
        FetchFailure.TIMEOUT: "接続がタイムアウトしました ({detail}秒)",
        FetchFailure.HTTP_STATUS: "HTTP {detail}",
        FetchFailure.TOO_LARGE: "ページが大きすぎます ({detail} バイト)",
        FetchFailure.UNSUPPORTED_TYPE: "対応していないコンテンツタイプです ({detail})",
        FetchFailure.REDIRECT_LIMIT: "リダイレクトが多すぎます (最大 {detail} 回)",
        FetchFailure.REDIRECT_OFF: "リダイレクトを追従しない設定です (転送先: {detail})",
        FetchFailure.ROBOTS: "robots.txt でクロールが禁止されています",
        FetchFailure.UNSAFE: "安全でないURLと判定されました ({detail})",
        FetchFailure.EMPTY: "本文が見つかりません",
    },
    "en": {
        FetchFailure.INVALID_URL: "invalid URL ({detail})",
        FetchFailure.SCHEME: "only http and https URLs can be added ({detail})",
        FetchFailure.BLOCKED: "address not allowed ({detail})",
        FetchFailure.DNS: "host name could not be resolved ({detail})",
        FetchFailure.CONNECTION: "connection failed ({detail})",
        FetchFailure.TIMEOUT: "the connection timed out ({detail} s)",
        FetchFailure.HTTP_STATUS: "HTTP {detail}",
        FetchFailure.TOO_LARGE: "page too large ({detail} bytes)",
        FetchFailure.UNSUPPORTED_TYPE: "unsupported content type ({detail})",
        FetchFailure.REDIRECT_LIMIT: "too many redirects (at most {detail})",
        FetchFailure.REDIRECT_OFF: "redirects are not followed (to: {detail})",
        FetchFailure.ROBOTS: "robots.txt disallows crawling this page",
        FetchFailure.UNSAFE: "flagged as unsafe ({detail})",
        FetchFailure.EMPTY: "no text found on the page",
    },
}


def failure_cause(locale: Locale, failure: Exception) -> str:
    """A failure's cause in the user's language (fetch failures by code, others as said)."""
    if isinstance(failure, FetchError):
        template = _CAUSES.get(locale, _CAUSES["ja"])[failure.code]
        return template.format(detail=failure.detail).replace(" ()", "")
    return str(failure)


def text(locale: Locale, key: str, **values: object) -> str:
    table = _TEXT.get(locale, _TEXT["ja"])
    return table[key].format(**values)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def status(locale: Locale, stats: Stats, feedback: FeedbackCounts | None = None) -> str:
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(stats.chunks_by_kind.items()))
    lines = [
        text(locale, "status", chunks=stats.chunks, sources=stats.sources),
        text(
            locale,
            "status_detail",
            kinds=kinds or "-",
            size=human_size(stats.db_bytes),
            model=stats.embedding_model or "-",
            dim=stats.embedding_dim,
        ),
    ]
    if feedback is not None:
        lines.append(text(locale, "feedback_counts", up=feedback.up, down=feedback.down))
    return "\n".join(lines)


def ingest_summary(locale: Locale, summary: IngestSummary) -> str:
    lines = [
        text(
            locale,
            "folder_done",
            pages=summary.stored + summary.unchanged,
            chunks=summary.chunks,
            errors=len(summary.failures),
        )
    ]
    lines.extend(
        text(locale, "failed_item", url=url, cause=failure_cause(locale, failure))
        for url, failure in summary.failures.items()
    )
    return "\n".join(lines)


def answer(locale: Locale, result: Answer) -> str:
    if not result.found:
        return text(locale, "not_found")
    parts = [result.text]
    if result.note:
        parts.append(text(locale, result.note))
    if result.citations:
        parts.append(text(locale, "sources"))
        parts.extend(
            f"[{c.number}] {c.title} — {c.url}" if c.title else f"[{c.number}] {c.url}"
            for c in result.citations
        )
    return "\n".join(parts)
