"""Kernel registries (issue 14, point 4): kernels registered per op with the CUDA archs each
declares (`CapabilityRequirement.cuda(min_sm=..., max_sm=...)`), judged per op."""

from __future__ import annotations

from pathlib import Path

from capgap.findings import Finding
from capgap.judging import kernel_specs

from .test_decisions import _brief, _scan

_SPEC = """
from eng.spec import CapabilityRequirement, KernelBackend, KernelSpec, register_kernel

CUDA_ONLY = frozenset({CapabilityRequirement.CUDA})
_SM10X = frozenset({CapabilityRequirement.cuda(min_sm=(10, 0), max_sm=(10, 9))})
"""


def _registry(*entries: str) -> str:
    return _SPEC + "\n".join(f"register_kernel(KernelSpec({e}))" for e in entries) + "\n"


def _scan_registry(
    tmp_path: Path, entries: list[str], modules: dict[str, str] | None = None
) -> list[Finding]:
    """Scan a tree whose `eng/ops/__init__.py` registers `entries`, beside the kernel `modules`."""
    return _scan(tmp_path, {"eng/ops/__init__.py": _registry(*entries), **(modules or {})})


def test_windows_are_read_through_constants_sets_and_generators() -> None:
    text = _registry(
        'op="a.x", backend=KernelBackend.CUTE_DSL, target="eng.k:x", capabilities=_SM10X',
        'op="a.y", backend=KernelBackend.JIT, capabilities=frozenset('
        "CapabilityRequirement.cuda(min_sm=sm, max_sm=sm) for sm in ((9, 0), (10, 3)))",
        'op="a.z", backend=KernelBackend.TRITON,\n'
        "    capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(9, 0))})",
        'op="a.w", backend=KernelBackend.TRITON, capabilities=CUDA_ONLY',  # any CUDA device
        'op="a.v", backend=KernelBackend.AITER, capabilities=frozenset({CapabilityRequirement.HIP})',
    )
    entries = kernel_specs.read(text)
    assert [(e.op, e.backend, e.target, e.windows) for e in entries] == [
        ("a.x", "CUTE_DSL", "eng.k.x", (((10, 0), (10, 9)),)),
        ("a.y", "JIT", "", (((9, 0), (9, 0)), ((10, 3), (10, 3)))),
        ("a.z", "TRITON", "", (((9, 0), None),)),
        ("a.w", "TRITON", "", ((None, None),)),
        ("a.v", "AITER", "", ()),  # another kind of device's kernel: no CUDA arch
    ]
    assert kernel_specs.admits(entries[2], 12, 0) and not kernel_specs.admits(entries[0], 12, 0)


def test_an_unreadable_window_registers_nothing() -> None:
    assert kernel_specs.read(_registry('op="a.x", capabilities=frozenset({R.cuda(min_sm=SOME_ARCH)})')) == []


def test_a_kernel_for_sibling_archs_only_is_a_medium_gap_when_it_looks_portable(tmp_path: Path) -> None:
    found = _scan_registry(
        tmp_path,
        [
            'op="norm.fanout", backend=KernelBackend.CUTE_DSL, target="eng.ops.fanout:fanout",\n'
            "    capabilities=_SM10X"
        ],
        {
            "eng/ops/fanout.py": """
        import cutlass.cute as cute

        @cute.kernel
        def fanout_kernel(x):
            pass

        def fanout(x):
            return fanout_kernel(x)
    """,
        },
    )
    assert _brief(found) == [("registry-excludes-arch", "medium", "eng/ops/__init__.py", 6)]
    assert found[0].message == (
        "norm.fanout registers its CUTE_DSL kernel for 10.0, 10.3 but not 12.0: no kernel of the op "
        "declares 12.0 (a dispatch that checks the windows finds none)"
    )


def test_a_registry_outside_runtime_code_is_low_as_for_every_rule(tmp_path: Path) -> None:
    """A registry in a vendored library or a test is rated as every rule rates such code."""
    entry = 'op="norm.x", backend=KernelBackend.TRITON, capabilities=_SM10X'
    for path in ("eng/cutlass/ops/__init__.py", "eng/tests/ops/__init__.py"):
        found = _scan(tmp_path / path.split("/")[1], {path: _registry(entry)})
        assert [(f.severity, f.extra["where"]) for f in found] == [
            ("low", "vendored" if "cutlass" in path else "test")
        ]


def test_a_kernel_that_needs_tcgen05_is_expected(tmp_path: Path) -> None:
    found = _scan_registry(
        tmp_path,
        [
            'op="gemm.dual", backend=KernelBackend.CUTE_DSL, target="eng.ops.dual:dual",\n'
            "    capabilities=_SM10X"
        ],
        {
            "eng/ops/dual.py": """
        import cutlass.cute.nvgpu.tcgen05 as tcgen05

        def dual(a, b):
            return tcgen05.mma(a, b)
    """,
        },
    )
    assert _brief(found) == [("registry-excludes-arch", "low", "eng/ops/__init__.py", 6)]
    assert found[0].consequence.startswith("expected: eng.ops.dual.dual needs tcgen05")


def test_the_target_s_own_kernel_for_the_op_is_no_gap(tmp_path: Path) -> None:
    found = _scan_registry(
        tmp_path,
        [
            'op="attn.fp8", backend=KernelBackend.CUTE_DSL, capabilities=_SM10X',
            'op="attn.fp8", backend=KernelBackend.JIT,\n'
            "    capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(12, 0), max_sm=(12, 1))})",
        ],
    )
    assert found == []


def test_an_unrestricted_fallback_is_what_the_target_gets(tmp_path: Path) -> None:
    found = _scan_registry(
        tmp_path,
        [
            'op="moe.gate", backend=KernelBackend.CUTE_DSL, capabilities=_SM10X',
            'op="moe.gate", backend=KernelBackend.TRITON, capabilities=CUDA_ONLY',
        ],
    )
    assert [f.extra["instead"] for f in found] == ["12.0 gets only the unrestricted TRITON kernel"]


def test_a_kernel_only_a_product_of_the_target_s_family_gets_is_no_gap(tmp_path: Path) -> None:
    # a GB10 (12.1) workaround registered for 12.1 alone: that product's, as a gate naming it is
    found = _scan_registry(
        tmp_path,
        [
            'op="attn.qsa_sm121", backend=KernelBackend.TRITON,\n'
            "    capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(12, 1), max_sm=(12, 1))})",
        ],
    )
    assert found == []


def test_what_a_registration_says_its_kernel_uses_is_evidence(tmp_path: Path) -> None:
    # the kernel module imports its kernel from elsewhere and spells nothing; the registration
    # says what it is: a programmatic-dependent-launch kernel, which GPUs before 9.0 cannot launch
    entry = (
        'op="moe.gate", backend=KernelBackend.TRITON, target="eng.ops.gate:gate",\n'
        '    description="FP32 sigmoid gate from one BF16 row, with PDL.",\n'
        "    capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(9, 0))})"
    )
    gate = "from eng.ops.kernels import gate_kernel\n\ndef gate(x):\n    return gate_kernel(x)\n"
    modules = {"eng/ops/gate.py": gate}
    (found,) = _scan(tmp_path, {"eng/ops/__init__.py": _registry(entry), **modules}, arch="8.9")
    assert found.severity == "low"
    assert found.extra["evidence"] == "'pdl' in the registration's description"
    assert kernel_specs.read(_registry(entry))[0].description.endswith("with PDL.")
