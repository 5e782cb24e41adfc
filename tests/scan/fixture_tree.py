"""A toy engine tree covering every pattern `capgap scan` must find, and its near-misses.

Written by the tests themselves (no upstream source). Each expected finding's line is found by
the marker comment on it, so the expectations below say exactly what must be reported.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

FILES: dict[str, str] = {
    "toyengine/__init__.py": "",
    "toyengine/comm/sizes.py": """
        MiB = 1024 * 1024

        SYMM_MAX_SIZES = {  # T1
            9: {2: 64 * MiB, 4: 64 * MiB, 8: 128 * MiB},
            10: {2: 64 * MiB, 4: 64 * MiB, 8: 128 * MiB},
        }

        # near-misses: keyed by world size / batch size / CUDA version, not by arch
        WORLD_SIZE_LIMITS = {2: 1, 4: 2, 8: 4}
        BATCH_BUCKETS = {1: 16, 16: 64, 64: 256}
        CUDA_VERSION_FLAGS = {"12.4": "a", "12.8": "b"}
        RELEASE_NOTES = {9: "nine", 10: "ten"}
        """,
    "toyengine/comm/symm.py": """
        import logging

        import torch

        from toyengine.comm.sizes import RELEASE_NOTES, SYMM_MAX_SIZES

        logger = logging.getLogger(__name__)


        class SymmComm:
            # compute capability major -> world sizes that may use multimem
            _MULTIMEM_SIZES = {  # T2
                9: [4, 8],
                10: [4, 8],
            }

            def __init__(self, world_size, device, version):
                self.world_size = world_size
                self.disabled = True
                self.cap_major = torch.cuda.get_device_capability(device)[0]
                sizes = SYMM_MAX_SIZES.get(self.cap_major)
                if sizes is None:
                    logger.warning("symmetric memory: capability not supported, communicator off")
                    return
                self.note = RELEASE_NOTES[version]
                self.disabled = False

            def all_reduce(self, x):
                if self.world_size in self._MULTIMEM_SIZES.get(self.cap_major, ()):
                    return multimem_all_reduce(x)
                else:
                    return two_shot_all_reduce(x)
        """,
    "toyengine/kernels/configs.py": """
        import torch

        from toyengine.utils import get_device_sm

        ARCH_BLOCK_CONFIGS = {"9.0": 128, "10.0": 256}  # T3
        TUNED_TILES = {(9, 0): 64, (10, 0): 128}  # T4
        SM_SPLITS = {90: 2, 100: 4}  # T5
        KERNEL_NAMES = {"sm_90": "k90", "sm_100": "k100"}  # T6
        COVERED = {9: 1, 10: 2, 12: 3}


        def block_for(capability):
            return ARCH_BLOCK_CONFIGS[capability]


        def tiles():
            try:
                return TUNED_TILES[torch.cuda.get_device_capability()]
            except KeyError:
                return default_tiles()


        def splits(sm_version):
            return SM_SPLITS.get(sm_version, 1)


        def kernel_name():
            arch = f"sm_{get_device_sm()}"
            if arch in KERNEL_NAMES:
                return KERNEL_NAMES[arch]
            return "generic"


        def covered():
            return COVERED[torch.cuda.get_device_capability()[0]]


        def pick_stages():
            major, _ = torch.cuda.get_device_capability()
            stages = {9: 3, 10: 4}  # T7
            return stages[major]
        """,
    "toyengine/utils.py": """
        from functools import lru_cache, partial

        import torch


        def get_device_sm():
            major, minor = torch.cuda.get_device_capability()
            return major * 10 + minor


        def _check_majors(majors):
            return get_device_sm() // 10 in majors


        is_sm90_supported = lru_cache(maxsize=1)(partial(_check_majors, majors=[9]))


        def is_sm100_supported():
            return torch.cuda.get_device_capability()[0] == 10


        is_blackwell = lru_cache(maxsize=1)(partial(_check_majors, majors=[10, 11, 12]))
        """,
    "toyengine/platforms.py": """
        import torch


        class CudaPlatform:
            @classmethod
            def is_blackwell(cls):
                return torch.cuda.get_device_capability()[0] == 10


        current_platform = CudaPlatform()
        """,
    "toyengine/layers/attention.py": """
        import torch

        from toyengine.platforms import current_platform
        from toyengine.utils import get_device_sm, is_blackwell, is_sm90_supported, is_sm100_supported


        def choose_backend(world_size):
            if torch.cuda.get_device_capability()[0] in (9, 10):  # G1
                return fused_attention()
            else:
                return slow_attention()


        def mla_decode(q):
            if is_sm100_supported():  # G2
                return trtllm_gen_mla_decode(q)
            return flashinfer_mla(q)


        def fused_allreduce(x):
            if is_sm100_supported():  # G3
                return flashinfer_fused_allreduce(x)
            return x


        def hopper_only(x):
            if is_sm90_supported():  # G4
                return custom_gemm(x)
            return x


        def gemm(x):
            major, minor = torch.cuda.get_device_capability()
            if major >= 9:  # G5
                return wgmma_gemm(x)
            return mma_gemm(x)


        def only_hopper(x):
            if torch.cuda.get_device_capability() != (9, 0):  # G6
                raise NotImplementedError("needs Hopper")
            return hopper_kernel(x)


        def blackwell_paths(x):
            if is_blackwell():  # the utils helper (imported): admits 12.0
                x = blackwell_kernel(x)
            if current_platform.is_blackwell():  # G7 the platform method: 10.x only
                x = platform_kernel(x)
            return x


        def near_misses(x, world_size):
            major, minor = torch.cuda.get_device_capability()
            if major >= 8:
                x = ampere_path(x)
            if world_size in (2, 4):
                x = small_world(x)
            if torch.version.cuda >= "12.8":
                x = new_cuda(x)
            if torch.cuda.get_device_capability() >= (9, 4):
                x = rocm_or_newer(x)
            if get_device_sm() >= 90:
                x = hopper_or_newer(x)
            return x
        """,
    "setup.py": """
        import os

        os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0 9.0 10.0"  # B1
        NVCC_FLAGS = [
            "-gencode", "arch=compute_90a,code=sm_90a",  # B2
            "-gencode", "arch=compute_100a,code=sm_100a",
        ]
        """,
    "CMakeLists.txt": """
        set(CMAKE_CUDA_ARCHITECTURES 80 90 120)
        set(TORCH_CUDA_ARCH_LIST "8.0;9.0+PTX")  # B3
        """,
}

# (rule, severity, path, marker, symbol, missing) for --arch 12.0
EXPECTED_12_0 = {
    ("table-missing-arch", "medium", "toyengine/comm/sizes.py", "T1", "SYMM_MAX_SIZES", "12"),
    ("table-missing-arch", "low", "toyengine/comm/symm.py", "T2", "SymmComm._MULTIMEM_SIZES", "12"),
    ("table-missing-arch", "high", "toyengine/kernels/configs.py", "T3", "ARCH_BLOCK_CONFIGS", '"12.0"'),
    ("table-missing-arch", "medium", "toyengine/kernels/configs.py", "T4", "TUNED_TILES", "(12, 0)"),
    ("table-missing-arch", "medium", "toyengine/kernels/configs.py", "T5", "SM_SPLITS", "120"),
    ("table-missing-arch", "medium", "toyengine/kernels/configs.py", "T6", "KERNEL_NAMES", '"sm_120"'),
    ("table-missing-arch", "high", "toyengine/kernels/configs.py", "T7", "pick_stages.stages", "12"),
    ("gate-excludes-arch", "medium", "toyengine/layers/attention.py", "G1", "get_device_capability", "12.0"),
    ("gate-excludes-arch", "low", "toyengine/layers/attention.py", "G2", "is_sm100_supported", "12.0"),
    ("gate-excludes-arch", "medium", "toyengine/layers/attention.py", "G3", "is_sm100_supported", "12.0"),
    ("gate-excludes-arch", "medium", "toyengine/layers/attention.py", "G4", "is_sm90_supported", "12.0"),
    ("gate-admits-unsupported", "medium", "toyengine/layers/attention.py", "G5", "major", "12.0"),
    ("gate-excludes-arch", "low", "toyengine/layers/attention.py", "G6", "get_device_capability", "12.0"),
    ("gate-excludes-arch", "medium", "toyengine/layers/attention.py", "G7", "is_blackwell", "12.0"),
    ("build-missing-arch", "medium", "setup.py", "B1", "TORCH_CUDA_ARCH_LIST", "12.0"),
    ("build-missing-arch", "medium", "setup.py", "B2", "-gencode", "sm_120"),
    ("build-missing-arch", "medium", "CMakeLists.txt", "B3", "TORCH_CUDA_ARCH_LIST", "12.0"),
}


def write_tree(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def line_of(root: Path, rel: str, marker: str) -> int:
    for i, line in enumerate((root / rel).read_text().splitlines(), 1):
        if line.rstrip().endswith(f"# {marker}") or f"# {marker} " in line:
            return i
    raise AssertionError(f"marker {marker} not in {rel}")
