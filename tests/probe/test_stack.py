"""The stack inventory: another env through --python (a real venv), and dist-info read in place."""

from __future__ import annotations

import json
from pathlib import Path

from capgap.probe.stack import inventory, torch_build
from tests.cli_runner import run_cli


def _dist_info(site: Path, name: str, version: str, direct_url: dict | None = None) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


def test_other_env_through_its_python(engine_venv: Path) -> None:
    stack = inventory(str(engine_venv))
    assert stack.python.startswith(str(engine_venv.parent.parent))
    assert stack.torch is not None
    assert (stack.torch.version, stack.torch.cuda, stack.torch.cuda_tag) == ("2.11.0+cu130", "13.0", "cu130")
    assert stack.torch.arch_list is None
    assert stack.torch.arch_list_note == "torch/include/caffe2/core/macros.h not found"
    assert {n: p.version for n, p in stack.components().items()} == {
        "torch": "2.11.0+cu130",
        "flashinfer-python": "0.5.2",
        "flashinfer-cubin": "0.5.1",
    }
    assert {n: p.version for n, p in stack.nccl().items()} == {"nvidia-nccl-cu13": "2.28.3"}
    assert {n: p.version for n, p in stack.nvidia_wheels().items()} == {
        "nvidia-cublas": "13.0.2.14",
        "nvidia-nccl-cu13": "2.28.3",
    }
    assert stack.warnings == [
        "flashinfer packages must share one version (lockstep), found: "
        "flashinfer-python 0.5.2, flashinfer-cubin 0.5.1"
    ]


def test_cli_probe_with_python_reports_that_envs_stack(engine_venv: Path) -> None:
    r = run_cli("probe", "--python", str(engine_venv), "--format", "json")
    assert r.code == 0, r.err
    stack = json.loads(r.out)["stack"]
    assert stack["torch"]["cuda_tag"] == "cu130"
    assert stack["components"]["flashinfer-cubin"]["version"] == "0.5.1"
    assert len(stack["warnings"]) == 1
    text = run_cli("probe", "--python", str(engine_venv))
    assert text.code == 0
    assert "lockstep" in text.err and "flashinfer-cubin" in text.out


def test_python_may_name_the_venv_directory(engine_venv: Path) -> None:
    stack = inventory(str(engine_venv.parent.parent))
    assert stack.packages["flashinfer-python"].version == "0.5.2"


def test_missing_python_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("probe", "--python", str(tmp_path / "nope" / "python"))
    assert r.code == 2
    assert "no such file" in r.err


def test_flashinfer_lockstep_ignores_the_jit_cache_cuda_label(tmp_path: Path) -> None:
    _dist_info(tmp_path, "flashinfer-python", "0.5.2")
    _dist_info(tmp_path, "flashinfer-cubin", "0.5.2")
    _dist_info(tmp_path, "flashinfer-jit-cache", "0.5.2+cu129")
    assert inventory(paths=[str(tmp_path)]).warnings == []


def test_flashinfer_lockstep_warns_on_a_mismatch(tmp_path: Path) -> None:
    _dist_info(tmp_path, "flashinfer-python", "0.5.3")
    _dist_info(tmp_path, "flashinfer-cubin", "0.5.3")
    _dist_info(tmp_path, "flashinfer-jit-cache", "0.5.2+cu129")
    assert inventory(paths=[str(tmp_path)]).warnings == [
        "flashinfer packages must share one version (lockstep), found: "
        "flashinfer-python 0.5.3, flashinfer-cubin 0.5.3, flashinfer-jit-cache 0.5.2+cu129"
    ]


def test_editable_install_and_first_on_path_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _dist_info(
        first, "sglang", "0.5.6.dev1", {"url": "file:///src/sglang/python", "dir_info": {"editable": True}}
    )
    _dist_info(second, "sglang", "0.4.0")
    _dist_info(second, "sgl_kernel", "0.3.17")
    stack = inventory(paths=[str(first), str(second)])
    sglang = stack.packages["sglang"]
    assert (sglang.version, sglang.editable, sglang.url) == ("0.5.6.dev1", True, "file:///src/sglang/python")
    assert list(stack.components()) == ["sglang", "sgl-kernel"]


def test_torch_arch_list_from_recorded_build_flags() -> None:
    # caffe2/core/macros.h layout; torch 2.11+cu130 records only CUDA_VERSION there (seen on the
    # H200 machine), so the arch list comes back as unknown with a note.
    real_cu130 = '  {"CUDA_VERSION", "13.0"}, \\\n  {"USE_CUDNN", "ON"}, \\\n'
    build = torch_build("2.11.0+cu130", "cuda: Optional[str] = '13.0'\n", real_cu130)
    assert (build.cuda, build.cuda_tag, build.arch_list) == ("13.0", "cu130", None)
    assert "records no arch list" in (build.arch_list_note or "")
    flags = (
        '{"CUDA_FLAGS", "-gencode arch=compute_90a,code=sm_90a '
        '-gencode arch=compute_120,code=[sm_120,compute_120]"}'
    )
    assert torch_build("2.9.0", None, flags).arch_list == ["sm_90a", "sm_120", "compute_120"]
    listed = '{"TORCH_CUDA_ARCH_LIST", "8.0;9.0a;12.0+PTX"}'
    assert torch_build("2.9.0", None, listed).arch_list == ["8.0", "9.0a", "12.0+PTX"]
    assert torch_build("2.13.0+cpu", "cuda: Optional[str] = None\n", None).cuda is None
