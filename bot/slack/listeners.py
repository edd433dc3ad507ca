"""Bolt listeners: acknowledge, then work; no SQL and no ranking here.

Mentions, DMs and follow-ups in threads the bot answered in become questions or `rag`
commands; answers and crawl progress always go in the thread (never a channel broadcast).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.answer import Turn
from bot.assistant import Assistant
from bot.commands import Ask, Command, Crawl, clean_slack_text, parse
from bot.errors import CommandError, IngestError, ShioriError
from bot.ingest.urls import normalize_url
from bot.services import Services
from bot.slack.blocks import (
    FEEDBACK_DOWN,
    FEEDBACK_UP,
    answer_blocks,
    chunk_blocks,
    fallback_text,
)
from bot.slack.guard import AdminDirectory, ConcurrencyCap, RateLimiter, needs_admin
from bot.slack.progress import CrawlProgress

logger = logging.getLogger(__name__)

THINKING_REACTION = "eyes"
HISTORY_MESSAGES = 6
Event = dict[str, Any]


class SlackBot:
    def __init__(self, services: Services) -> None:
        settings = services.settings
        self._services = services
        self._assistant = Assistant(services, allow_local_files=False)
        self._locale = settings.locale
        self._admins = AdminDirectory(settings.admin_user_ids, settings.rag_admin_usergroup_id)
        self._progress_interval = settings.rag_progress_update_sec
        self._rate = RateLimiter(settings.rag_user_questions_per_minute)
        self._cap = ConcurrencyCap(settings.rag_max_concurrent_answers)
        self._crawls: dict[str, asyncio.Task[None]] = {}

    def _text(self, key: str, **values: object) -> str:
        return messages.text(self._locale, key, **values)

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)
        app.command("/rag")(self.on_slash_command)
        app.action(FEEDBACK_UP)(self.on_feedback)
        app.action(FEEDBACK_DOWN)(self.on_feedback)
        app.error(self.on_error)

    # -- entry points ------------------------------------------------------------------

    async def on_mention(self, event: Event, client: AsyncWebClient) -> None:
        await self._guarded(client, event, self._handle_message(event, client))

    async def on_message(self, event: Event, client: AsyncWebClient, context: Any) -> None:
        """DMs, and thread follow-ups where shiori already answered (no mention needed)."""
        if event.get("subtype") or event.get("bot_id"):
            return
        bot_user = getattr(context, "bot_user_id", None) or context.get("bot_user_id")
        if bot_user and f"<@{bot_user}>" in event.get("text", ""):
            return  # app_mention answers it
        thread_ts = event.get("thread_ts")
        direct = event.get("channel_type") == "im"
        if not direct:
            if not thread_ts:
                return
            known = await asyncio.to_thread(
                self._services.kb.is_bot_thread, event["channel"], thread_ts
            )
            if not known:
                return
        await self._guarded(client, event, self._handle_message(event, client))

    async def on_slash_command(
        self, ack: Callable[..., Awaitable[Any]], command: dict[str, Any], client: AsyncWebClient,
        respond: Callable[..., Awaitable[Any]],
    ) -> None:  # fmt: skip
        await ack()
        user, channel = command.get("user_id", ""), command.get("channel_id", "")
        try:
            parsed = parse("rag " + command.get("text", ""))
        except CommandError as exc:
            await respond(str(exc))
            return
        if needs_admin(parsed) and not await self._admins.is_admin(user, client):
            await respond(self._text("not_admin"))
            return
        if isinstance(parsed, Crawl):
            # A visible parent message gives the crawl a thread for its progress.
            parent = await client.chat_postMessage(
                channel=channel, text=f"<@{user}> rag crawl {parsed.url} {parsed.pattern}".strip()
            )
            await self._start_crawl(client, channel, str(parent["ts"]), parsed)
            return
        await respond(await self._assistant.handle(parsed))

    async def on_feedback(
        self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        action = body["actions"][0]
        vote = 1 if action["action_id"] == FEEDBACK_UP else -1
        user = body["user"]["id"]
        recorded = await asyncio.to_thread(
            self._services.kb.record_feedback, int(action["value"]), user, vote
        )
        channel = body.get("channel", {}).get("id")
        if recorded and channel:
            thread_ts = body.get("message", {}).get("thread_ts")
            await client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, text=self._text("feedback_thanks")
            )

    async def on_error(self, error: Exception, body: dict[str, Any]) -> None:
        logger.error("unhandled error for %s", body.get("type"), exc_info=error)

    # -- work --------------------------------------------------------------------------

    async def _guarded(self, client: AsyncWebClient, event: Event, work: Awaitable[None]) -> None:
        """Run `work`; users see a message, never a stack trace, whatever goes wrong."""
        thread_ts = event.get("thread_ts") or event["ts"]
        try:
            await work
        except ShioriError as exc:
            await self._say(client, event["channel"], thread_ts, self._text("error", cause=exc))
        except Exception:
            logger.exception("failed to handle message %s", event.get("ts"))
            with contextlib.suppress(SlackApiError):
                await self._say(client, event["channel"], thread_ts, self._text("unexpected"))

    async def _say(self, client: AsyncWebClient, channel: str, thread_ts: str, text: str) -> None:
        await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)

    async def _handle_message(self, event: Event, client: AsyncWebClient) -> None:
        channel, user = event["channel"], event.get("user", "")
        thread_ts = event.get("thread_ts") or event["ts"]
        try:
            command: Command = parse(event.get("text", ""))
        except CommandError as exc:
            await self._say(client, channel, thread_ts, str(exc))
            return
        if needs_admin(command) and not await self._admins.is_admin(user, client):
            await client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, text=self._text("not_admin")
            )
            return
        if isinstance(command, Ask):
            await self._answer(client, event, command.question)
        elif isinstance(command, Crawl):
            await self._start_crawl(client, channel, thread_ts, command)
        else:
            reply = await self._assistant.handle(command)
            await self._services_remember(channel, thread_ts)
            await self._say(client, channel, thread_ts, reply)

    async def _services_remember(self, channel: str, thread_ts: str) -> None:
        await asyncio.to_thread(self._services.kb.remember_thread, channel, thread_ts)

    async def _answer(self, client: AsyncWebClient, event: Event, question: str) -> None:
        channel, user, ts = event["channel"], event.get("user", ""), event["ts"]
        thread_ts = event.get("thread_ts") or ts
        wait = self._rate.retry_after(user)
        if wait > 0:
            await client.chat_postEphemeral(
                channel=channel,
                user=user,
                thread_ts=thread_ts,
                text=self._text("rate_limited", seconds=max(1, round(wait))),
            )
            return
        if not self._cap.try_enter():
            await self._say(client, channel, thread_ts, self._text("busy"))
            return
        try:
            await self._react(client.reactions_add, channel, ts)
            history = await self._history(client, event) if event.get("thread_ts") else []
            answer = await self._assistant.answer(question, history)
            answer_id = await asyncio.to_thread(
                self._services.kb.record_answer,
                channel=channel,
                thread_ts=thread_ts,
                question=question,
                answer=answer.text,
                sources=[citation.url for citation in answer.citations],
            )
            fallback = fallback_text(messages.answer(self._locale, answer))
            for blocks in chunk_blocks(answer_blocks(self._locale, answer, answer_id)):
                await client.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=fallback, blocks=blocks
                )
        finally:
            self._cap.leave()
            await self._react(client.reactions_remove, channel, ts)

    async def _react(self, call: Callable[..., Awaitable[Any]], channel: str, ts: str) -> None:
        """The 👀 acknowledgement is a courtesy: failing to set it never stops an answer."""
        try:
            await call(channel=channel, timestamp=ts, name=THINKING_REACTION)
        except SlackApiError as exc:
            logger.info("reaction %s failed: %s", call.__name__, exc.response.get("error"))

    async def _history(self, client: AsyncWebClient, event: Event) -> list[Turn]:
        """Earlier messages of the thread, oldest first, as conversation context."""
        try:
            replies = await client.conversations_replies(
                channel=event["channel"], ts=event["thread_ts"], limit=50
            )
        except SlackApiError as exc:
            logger.info("thread history unavailable: %s", exc.response.get("error"))
            return []
        thread: list[dict[str, Any]] = replies.get("messages", [])
        turns = [
            Turn(
                "assistant" if message.get("bot_id") else "user", clean_slack_text(message["text"])
            )
            for message in thread
            if message.get("ts") != event["ts"] and message.get("text")
        ]
        return turns[-HISTORY_MESSAGES:]

    async def _start_crawl(
        self, client: AsyncWebClient, channel: str, thread_ts: str, command: Crawl
    ) -> None:
        """Start a crawl in the background; the bot keeps answering meanwhile."""
        try:
            key = normalize_url(command.url)
        except IngestError:
            key = command.url
        running = self._crawls.get(key)
        if running is not None and not running.done():
            await self._say(client, channel, thread_ts, self._text("crawl_running", url=key))
            return
        await self._services_remember(channel, thread_ts)
        await self._say(client, channel, thread_ts, self._text("crawl_started"))
        progress = CrawlProgress(
            client,
            channel=channel,
            thread_ts=thread_ts,
            locale=self._locale,
            interval=self._progress_interval,
        )
        await progress.start()
        task = asyncio.create_task(self._crawl(progress, command))
        self._crawls[key] = task
        task.add_done_callback(lambda _: self._crawls.pop(key, None))

    async def _crawl(self, progress: CrawlProgress, command: Crawl) -> None:
        try:
            summary = await self._assistant.crawl(command.url, command.pattern, progress.on_event)
        except Exception:
            logger.exception("crawl of %s failed", command.url)
            summary = self._text("unexpected")
        try:
            await progress.finish(summary)
        except SlackApiError:
            logger.exception("could not post the summary of the crawl of %s", command.url)

    async def wait_for_crawls(self) -> None:
        """For tests and shutdown: let running crawls finish."""
        if self._crawls:
            await asyncio.gather(*self._crawls.values(), return_exceptions=True)
