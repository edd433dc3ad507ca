"""Finding chunks: keyword, vector and fused searches with per-stage timings."""
