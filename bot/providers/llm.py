"""Chat completion through any OpenAI-compatible server (OpenAI, LM Studio, Ollama, vLLM)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from openai import APIError, AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from bot.errors import ProviderError


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


def _message_param(message: ChatMessage) -> ChatCompletionMessageParam:
    if message.role == "system":
        return {"role": "system", "content": message.content}
    if message.role == "assistant":
        return {"role": "assistant", "content": message.content}
    return {"role": "user", "content": message.content}


class LLM(Protocol):
    async def complete(self, messages: list[ChatMessage]) -> str: ...


class OpenAICompatibleLLM:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float = 0.0,
    ) -> None:
        self._model = model
        self._temperature = temperature
        self._client = AsyncOpenAI(
            base_url=base_url or None,
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    async def complete(self, messages: list[ChatMessage]) -> str:
        try:
            response = await self._client.chat.completions.create(
                model=self._model,
                messages=[_message_param(m) for m in messages],
                temperature=self._temperature,
            )
        except APIError as exc:
            raise ProviderError(f"LLM server error: {exc}") from exc
        content = response.choices[0].message.content if response.choices else None
        if not content:
            raise ProviderError("the LLM returned an empty answer")
        return content.strip()
