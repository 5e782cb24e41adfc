"""kernel-body-missing-arch: compiled for the target, a kernel (or device function) a sibling arch
gets the real body of compiles to an empty body, a `__trap()`, or an `#error` / failing
`static_assert` (the preprocessor gates around its body leave the target out).

Judged by `capgap.native.judge` (preprocessor gates evaluated as nvcc does for sm_XY, sm_XYa and
sm_XYf). Medium: the body needs nothing the target lacks. Low (expected): it needs tcgen05, wgmma,
multimem or another instruction set the target lacks (named with where it was read); low too in
tests, benchmarks, examples and vendored libraries (those are reported only with --all).
"""

from __future__ import annotations

RULE_ID = "kernel-body-missing-arch"
