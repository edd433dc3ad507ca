"""The Slack app against a fake workspace: real slack_sdk/Bolt clients, real HTTP."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import pytest
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.ingest.local import read_file
from bot.services import Services, build_services
from bot.slack.app import create_app
from bot.slack.listeners import SlackBot
from config.settings import Settings, load_settings
from tests.conftest import TEST_PAGES
from tests.fake_slack import BOT_USER, FakeSlack
from tests.fakes import HashingEmbedder
from tests.servers import serve
from tests.site import Site

SECRET = "test-signing-secret"
ADMIN, MEMBER = "UADMIN", "UMEMBER"


@dataclass
class Workspace:
    slack: FakeSlack
    app: AsyncApp
    bot: SlackBot
    services: Services

    async def deliver(self, payload: Mapping[str, object], *, form: bool = False) -> int:
        """POST a signed request to the app, as Slack's servers would."""
        body = urlencode({"payload": json.dumps(payload)}) if form else json.dumps(payload)
        if "command" in payload:
            body = urlencode({k: str(v) for k, v in payload.items()})
        timestamp = str(int(time.time()))
        signature = hmac.new(
            SECRET.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256
        ).hexdigest()
        headers: dict[str, str | Sequence[str]] = {
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": f"v0={signature}",
            "content-type": "application/x-www-form-urlencoded"
            if form or "command" in payload
            else "application/json",
        }
        response = await self.app.async_dispatch(AsyncBoltRequest(body=body, headers=headers))
        return response.status

    async def event(self, event: Mapping[str, object]) -> int:
        return await self.deliver(
            {
                "type": "event_callback",
                "team_id": "T1",
                "api_app_id": "A1",
                "event_id": f"Ev{time.monotonic_ns()}",
                "event_time": int(time.time()),
                "event": event,
            }
        )


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    slack = FakeSlack()
    async with serve(slack.app()) as base_url:
        slack.base_url = base_url
        yield slack


def slack_settings(
    settings: Settings, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch, **env: str
) -> Settings:
    values = {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url + "/api/",
        "RAG_ADMIN_USER_IDS": ADMIN,
        "RAG_FETCH_ALLOWED_NETWORKS": "127.0.0.1",
        "RAG_CRAWL_DELAY_SEC": "0",
        "RAG_MAX_PAGE_BYTES": "50000",
        "RAG_PROGRESS_UPDATE_SEC": "0.05",
        **env,
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return load_settings(None, shiori_db_path=settings.shiori_db_path)


OpenWorkspace = Callable[..., Awaitable[Workspace]]


@pytest.fixture
async def open_workspace(
    settings: Settings, fake_slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[OpenWorkspace]:
    """Opens the app on a knowledge base holding the seed's monster table; extra settings
    come as environment variables."""
    opened: list[Workspace] = []

    async def open_(**env: str) -> Workspace:
        services = await build_services(
            slack_settings(settings, fake_slack, monkeypatch, **env), embedder=HashingEmbedder()
        )
        await services.ingestor.ingest(read_file(TEST_PAGES / "table_numeric.html"))
        app, bot = create_app(services)
        opened.append(Workspace(fake_slack, app, bot, services))
        return opened[-1]

    yield open_
    for workspace in opened:
        await workspace.bot.wait_for_crawls()
        workspace.services.close()


@pytest.fixture
async def workspace(open_workspace: OpenWorkspace) -> Workspace:
    return await open_workspace()


def mention(text: str, user: str = MEMBER, ts: str = "100.1", **extra: object) -> dict[str, object]:
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "channel": "C1",
        "ts": ts,
        **extra,
    }


def message(text: str, ts: str, channel: str = "C1", **extra: object) -> dict[str, object]:
    """A plain message event: DMs live in D… channels."""
    channel_type = "im" if channel.startswith("D") else "channel"
    return {
        "type": "message",
        "channel": channel,
        "channel_type": channel_type,
        "user": MEMBER,
        "text": text,
        "ts": ts,
        **extra,
    }


async def test_mention_gets_a_threaded_answer_with_sources(workspace: Workspace) -> None:
    assert await workspace.event(mention("りゅうおうのHPは？")) == 200
    await workspace.slack.wait_for("reactions.remove")
    [post] = workspace.slack.methods("chat.postMessage")
    assert post["channel"] == "C1" and post["thread_ts"] == "100.1"
    blocks = post["blocks"]
    assert "りゅうおう" in blocks[0]["text"]["text"]
    sources = json.dumps(blocks, ensure_ascii=False)
    assert "table_numeric.html|数値テーブル - ゲームステータス>" in sources
    actions = next(b for b in blocks if b["type"] == "actions")["elements"]
    assert [a["action_id"] for a in actions] == ["feedback_up", "feedback_down"]
    assert workspace.slack.methods("reactions.add")[0]["name"] == "eyes"
    assert "reply_broadcast" not in post


async def test_follow_up_in_the_thread_needs_no_mention(workspace: Workspace) -> None:
    await workspace.event(mention("りゅうおうのHPは？"))
    await workspace.slack.wait_for("chat.postMessage")
    workspace.slack.thread_messages["100.1"] = [
        {"ts": "100.1", "user": MEMBER, "text": f"<@{BOT_USER}> りゅうおうのHPは？"},
        {"ts": "100.2", "bot_id": "BBOT", "text": "200です"},
        {"ts": "100.3", "user": MEMBER, "text": "ゾーマは？"},
    ]
    await workspace.event(message("ゾーマは？", "100.3", thread_ts="100.1"))
    await workspace.slack.wait_for("chat.postMessage", 2)
    assert workspace.slack.methods("conversations.replies")[0]["ts"] == "100.1"
    assert workspace.slack.methods("chat.postMessage")[1]["thread_ts"] == "100.1"


async def test_other_threads_and_bot_messages_are_ignored(workspace: Workspace) -> None:
    await workspace.event(message("unrelated", "5.1", thread_ts="4.1"))
    await workspace.event(message("from a bot", "5.2", channel="D1", bot_id="BOTHER"))
    await asyncio.sleep(0.3)
    assert workspace.slack.methods("chat.postMessage") == []


async def test_direct_message_is_answered(workspace: Workspace) -> None:
    await workspace.event(message("ゾーマのMP", "7.1", channel="D1"))
    await workspace.slack.wait_for("chat.postMessage")
    post = workspace.slack.methods("chat.postMessage")[0]
    assert post["channel"] == "D1" and "255" in json.dumps(post["blocks"], ensure_ascii=False)


async def test_status_and_usage_in_thread(workspace: Workspace) -> None:
    await workspace.event(mention("rag status", ts="8.1"))
    await workspace.event(mention("rag frobnicate", ts="8.2"))
    await workspace.slack.wait_for("chat.postMessage", 2)
    texts = {p["thread_ts"]: p["text"] for p in workspace.slack.methods("chat.postMessage")}
    assert "ナレッジベース統計:" in texts["8.1"] and "フィードバック: 👍 0 / 👎 0" in texts["8.1"]
    assert texts["8.2"].startswith("usage: rag add")


async def test_non_admin_is_refused_ephemerally(workspace: Workspace) -> None:
    await workspace.event(mention("rag delete https://example.com/a", ts="9.1"))
    await workspace.slack.wait_for("chat.postEphemeral")
    refusal = workspace.slack.methods("chat.postEphemeral")[0]
    assert refusal["user"] == MEMBER and refusal["text"] == "このコマンドは管理者のみ実行できます。"
    assert workspace.services.kb.stats().sources == 1


async def test_user_group_members_are_admins(
    open_workspace: OpenWorkspace, fake_slack: FakeSlack
) -> None:
    fake_slack.usergroup_members = ["UGROUP"]
    workspace = await open_workspace(RAG_ADMIN_USERGROUP_ID="S123")
    await workspace.event(mention("rag delete https://example.com/a", user="UGROUP", ts="16.1"))
    await workspace.event(mention("rag delete https://example.com/a", user=MEMBER, ts="16.2"))
    await fake_slack.wait_for("chat.postMessage")
    await fake_slack.wait_for("chat.postEphemeral")
    assert fake_slack.methods("chat.postMessage")[0]["text"].startswith(
        "エラー: https://example.com/a"
    )
    assert fake_slack.methods("chat.postEphemeral")[0]["user"] == MEMBER
    assert len(fake_slack.methods("usergroups.users.list")) == 1  # cached


async def test_admin_add_and_delete(workspace: Workspace, site: Site) -> None:
    url = f"{site.base_url}/pages/a.html"
    await workspace.event(mention(f"rag add <{url}>", user=ADMIN, ts="10.1"))
    await workspace.slack.wait_for("chat.postMessage")
    assert (
        workspace.slack.methods("chat.postMessage")[0]["text"]
        == f"ページを取り込みました: {url} (2チャンク)"
    )
    await workspace.event(mention(f"rag delete <{url}>", user=ADMIN, ts="10.2"))
    await workspace.slack.wait_for("chat.postMessage", 2)
    assert (
        workspace.slack.methods("chat.postMessage")[1]["text"] == f"削除しました: {url} (2チャンク)"
    )
    await workspace.event(mention(f"rag add <{site.base_url}/missing>", user=ADMIN, ts="10.3"))
    await workspace.slack.wait_for("chat.postMessage", 3)
    assert "原因: HTTP 404 Not Found" in workspace.slack.methods("chat.postMessage")[2]["text"]


async def test_crawl_progress_lives_in_the_thread(workspace: Workspace, site: Site) -> None:
    index = f"{site.base_url}/index.html"
    await workspace.event(mention(f"rag crawl <{index}>", user=ADMIN, ts="11.1"))
    await workspace.slack.wait_for("chat.postMessage", 2)
    # a second crawl of the same URL while the first runs is refused politely
    await workspace.event(mention(f"rag crawl <{index}>", user=ADMIN, ts="11.2"))
    await workspace.bot.wait_for_crawls()
    await workspace.slack.wait_for("chat.postMessage", 4)
    posts = workspace.slack.methods("chat.postMessage")
    by_thread = [p for p in posts if p["thread_ts"] == "11.1"]
    assert by_thread[0]["text"] == "クロールを開始しました... (リンク収集中)"
    assert by_thread[1]["text"].startswith("進捗: 0/0ページ")
    assert by_thread[-1]["text"].startswith("└─ 完了: 5ページ / 5チャンク / エラー: 5件")
    assert "robots.txt でクロールが禁止されています" in by_thread[-1]["text"]
    refused = [p for p in posts if p["thread_ts"] == "11.2"]
    assert refused and "すでに実行中" in refused[0]["text"]
    updates = workspace.slack.methods("chat.update")
    assert updates and updates[-1]["text"].startswith("進捗: 10/10ページ / 5チャンク / エラー: 5件")
    assert all("reply_broadcast" not in p for p in posts)


async def test_bad_signature_is_rejected(workspace: Workspace) -> None:
    body = json.dumps({"type": "event_callback", "event": mention("hi")})
    headers: dict[str, str | Sequence[str]] = {
        "x-slack-request-timestamp": str(int(time.time())),
        "x-slack-signature": "v0=bad",
        "content-type": "application/json",
    }
    response = await workspace.app.async_dispatch(AsyncBoltRequest(body=body, headers=headers))
    assert response.status == 401
    await asyncio.sleep(0.2)
    assert workspace.slack.methods("chat.postMessage") == []


async def test_question_rate_limit(open_workspace: OpenWorkspace, fake_slack: FakeSlack) -> None:
    workspace = await open_workspace(RAG_USER_QUESTIONS_PER_MINUTE="1")
    await workspace.event(mention("りゅうおう", ts="12.1"))
    await fake_slack.wait_for("chat.postMessage")
    await workspace.event(mention("ゾーマ", ts="12.2"))
    await fake_slack.wait_for("chat.postEphemeral")
    assert "待ってから" in fake_slack.methods("chat.postEphemeral")[0]["text"]
    assert len(fake_slack.methods("chat.postMessage")) == 1


async def test_feedback_click_is_stored(workspace: Workspace) -> None:
    await workspace.event(mention("りゅうおう", ts="13.1"))
    await workspace.slack.wait_for("chat.postMessage")
    answer_id = workspace.slack.methods("chat.postMessage")[0]["blocks"][-1]["elements"][0]["value"]
    click = {
        "type": "block_actions",
        "user": {"id": MEMBER},
        "team": {"id": "T1"},
        "api_app_id": "A1",
        "channel": {"id": "C1"},
        "message": {"ts": "13.5", "thread_ts": "13.1"},
        "actions": [
            {
                "action_id": "feedback_down",
                "block_id": "feedback",
                "value": answer_id,
                "type": "button",
                "action_ts": "1",
            }
        ],
        "trigger_id": "t",
    }
    assert await workspace.deliver(click, form=True) == 200
    await workspace.slack.wait_for("chat.postEphemeral")
    counts = workspace.services.kb.feedback_counts()
    assert (counts.up, counts.down) == (0, 1)
    row = workspace.services.kb._writer.execute("SELECT question, sources FROM answers").fetchall()
    assert row[0][0] == "りゅうおう" and "table_numeric.html" in str(row[0][1])


async def test_slack_api_errors_are_retried_or_survived(workspace: Workspace) -> None:
    workspace.slack.failures["chat.postMessage"] = [(429, {"Retry-After": "1"})]
    workspace.slack.failures["reactions.add"] = [(500, {})] * 5
    await workspace.event(mention("りゅうおう", ts="14.1"))
    await workspace.slack.wait_for("chat.postMessage", 2)
    assert len(workspace.slack.methods("chat.postMessage")) == 2  # 429, then delivered
    assert (
        len(workspace.slack.methods("reactions.add")) == 3
    )  # first try + 2 retries, then given up


async def test_slash_command_checks_admin_and_answers(workspace: Workspace) -> None:
    respond_url = workspace.slack.base_url + "/respond"
    command = {
        "command": "/rag",
        "text": "crawl https://example.com",
        "user_id": MEMBER,
        "channel_id": "C1",
        "team_id": "T1",
        "response_url": respond_url,
        "trigger_id": "t",
    }
    assert await workspace.deliver(command) == 200
    await workspace.slack.wait_for("response_url")
    assert (
        workspace.slack.methods("response_url")[0]["text"]
        == "このコマンドは管理者のみ実行できます。"
    )
    await workspace.deliver({**command, "text": "status"})
    await workspace.slack.wait_for("response_url", 2)
    assert "ナレッジベース統計" in workspace.slack.methods("response_url")[1]["text"]


async def test_socket_mode_delivers_events(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = AsyncSocketModeHandler(workspace.app, "xapp-test")
    await handler.connect_async()  # type: ignore[no-untyped-call]
    try:
        await workspace.slack.socket_envelopes.put(
            {
                "envelope_id": "env-1",
                "type": "events_api",
                "accepts_response_payload": False,
                "payload": {
                    "type": "event_callback",
                    "team_id": "T1",
                    "api_app_id": "A1",
                    "event_id": "EvS1",
                    "event_time": 1,
                    "event": mention("ゾーマのHP", ts="15.1"),
                },
            }
        )
        await workspace.slack.wait_for("chat.postMessage")
        assert "env-1" in workspace.slack.socket_acks
        assert workspace.slack.methods("apps.connections.open")
        post = workspace.slack.methods("chat.postMessage")[0]
        assert post["thread_ts"] == "15.1" and "500" in json.dumps(
            post["blocks"], ensure_ascii=False
        )
    finally:
        await handler.close_async()  # type: ignore[no-untyped-call]
