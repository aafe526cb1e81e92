"""The answer benchmark: real questions about real repositories, asked of Live Memory backed by a
real local model in five arms, scored on checkable key facts. Run from the repository root:
`python -m bench.answers run --repo pytest=PATH --repo sphinx=PATH` (docs/LOCAL_MODELS.md)."""
