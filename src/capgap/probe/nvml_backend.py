"""NVML behind one small query interface, so that a live run can be recorded and replayed.

Every question the probe asks is `backend.query(op, *args)` with JSON-safe arguments (GPU
indices, link numbers, field ids) and a JSON-safe answer. `RecordingNvml` wraps the live backend
and keeps every answer (or error); `ReplayNvml` answers from such a recording, so a test runs a
real machine's answers through the same parsing (benchmarks/device/record_nvml.py writes them).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
from pathlib import Path
from typing import Any, Protocol

RECORDING_FORMAT = "capgap-nvml-recording/1"

# NVML field ids (nvml.h, "Field Value Enums"; the same numbers are in pynvml).
FI_NVLINK_SPEED_MBPS_COMMON = 90  # common NVLink speed of all active links, MB/s
FI_NVLINK_LINK_COUNT = 91  # number of NVLinks the device has
FI_NVLINK_GET_SPEED = 164  # per-link speed in MB/s (scopeId = link)

# cuda.h: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED ("Device supports switch multicast and
# reduction operations"). Only *queried*; capgap never creates multicast objects.
CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132


class NvmlUnavailable(Exception):
    """NVML can't be used here at all: no library, no driver, or init failed."""


class NvmlCallError(Exception):
    """One NVML question had no answer (not supported on this GPU, invalid link, ...)."""

    def __init__(self, op: str, args: tuple[Any, ...], error: str) -> None:
        super().__init__(f"{op}{list(args)}: {error}")
        self.op = op
        self.args_ = args
        self.error = error


class NvmlBackend(Protocol):
    def query(self, op: str, *args: Any) -> Any: ...

    def close(self) -> None: ...


def answer_key(op: str, args: tuple[Any, ...]) -> str:
    return f"{op}{json.dumps(list(args))}"


class LiveNvml:
    """Asks the real NVML through nvidia-ml-py (pynvml), and libcuda for the multicast attribute."""

    def __init__(self) -> None:
        try:
            import pynvml
        except ImportError as exc:
            raise NvmlUnavailable(f"nvidia-ml-py is not installed ({exc})") from exc
        self._nvml = pynvml
        try:
            pynvml.nvmlInit()
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
            raise NvmlUnavailable(f"NVML init failed: {exc}") from exc
        self._handles: dict[int, Any] = {}

    def close(self) -> None:
        # Shutting down twice or after a driver error is harmless.
        with contextlib.suppress(Exception):
            self._nvml.nvmlShutdown()

    def _h(self, index: int) -> Any:
        if index not in self._handles:
            self._handles[index] = self._nvml.nvmlDeviceGetHandleByIndex(index)
        return self._handles[index]

    def query(self, op: str, *args: Any) -> Any:
        fn = getattr(self, f"_op_{op}", None)
        if fn is None:
            raise NvmlCallError(op, args, "unknown query")
        try:
            return fn(*args)
        except NvmlCallError:
            raise
        except Exception as exc:  # pynvml.NVMLError_* or OSError from libcuda
            raise NvmlCallError(op, args, f"{type(exc).__name__}: {exc}") from exc

    # --- the questions; each returns plain JSON data -------------------------------------
    def _op_driver_version(self) -> str:
        return _text(self._nvml.nvmlSystemGetDriverVersion())

    def _op_cuda_driver_version(self) -> int:
        return int(self._nvml.nvmlSystemGetCudaDriverVersion())

    def _op_device_count(self) -> int:
        return int(self._nvml.nvmlDeviceGetCount())

    def _op_name(self, i: int) -> str:
        return _text(self._nvml.nvmlDeviceGetName(self._h(i)))

    def _op_compute_capability(self, i: int) -> list[int]:
        major, minor = self._nvml.nvmlDeviceGetCudaComputeCapability(self._h(i))
        return [int(major), int(minor)]

    def _op_memory_total(self, i: int) -> int:
        return int(self._nvml.nvmlDeviceGetMemoryInfo(self._h(i)).total)

    def _op_pci_bus_id(self, i: int) -> str:
        return _text(self._nvml.nvmlDeviceGetPciInfo(self._h(i)).busId)

    def _op_field_value(self, i: int, field_id: int, scope: int = 0) -> float | int:
        values = self._nvml.nvmlDeviceGetFieldValues(self._h(i), [(field_id, scope)])
        v = values[0]
        if v.nvmlReturn != 0:
            raise NvmlCallError("field_value", (i, field_id, scope), f"nvmlReturn {v.nvmlReturn}")
        kinds = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
        return getattr(v.value, kinds.get(v.valueType, "ullVal"))

    def _op_nvlink_state(self, i: int, link: int) -> int:
        return int(self._nvml.nvmlDeviceGetNvLinkState(self._h(i), link))

    def _op_nvlink_version(self, i: int, link: int) -> int:
        return int(self._nvml.nvmlDeviceGetNvLinkVersion(self._h(i), link))

    def _op_nvlink_remote_pci_bus_id(self, i: int, link: int) -> str:
        return _text(self._nvml.nvmlDeviceGetNvLinkRemotePciInfo(self._h(i), link).busId)

    def _op_nvlink_remote_device_type(self, i: int, link: int) -> int:
        return int(self._nvml.nvmlDeviceGetNvLinkRemoteDeviceType(self._h(i), link))

    def _op_topology_common_ancestor(self, i: int, j: int) -> int:
        return int(self._nvml.nvmlDeviceGetTopologyCommonAncestor(self._h(i), self._h(j)))

    def _op_p2p_status(self, i: int, j: int, cap: int) -> int:
        return int(self._nvml.nvmlDeviceGetP2PStatus(self._h(i), self._h(j), cap))

    def _op_cuda_multicast_supported(self) -> dict[str, int]:
        return _cuda_multicast_by_bus_id()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cuda_multicast_by_bus_id() -> dict[str, int]:
    """CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED of every CUDA-visible device, keyed by PCI bus id.

    cuInit loads the driver but creates no context and no multicast object. CUDA's ordinals may
    differ from NVML's (CUDA_VISIBLE_DEVICES, FASTEST_FIRST), so devices are matched by bus id.
    """
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0) != 0:
        raise OSError("cuInit failed")
    count = ctypes.c_int()
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        raise OSError("cuDeviceGetCount failed")
    out: dict[str, int] = {}
    for ordinal in range(count.value):
        dev = ctypes.c_int()
        if cuda.cuDeviceGet(ctypes.byref(dev), ordinal) != 0:
            continue
        bus = ctypes.create_string_buffer(64)
        if cuda.cuDeviceGetPCIBusId(bus, 64, dev) != 0:
            continue
        value = ctypes.c_int()
        if cuda.cuDeviceGetAttribute(ctypes.byref(value), CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev) != 0:
            continue
        out[bus.value.decode()] = int(value.value)
    return out


class RecordingNvml:
    """Passes questions to another backend and keeps every answer for `dump`."""

    def __init__(self, inner: NvmlBackend) -> None:
        self._inner = inner
        self.answers: dict[str, dict[str, Any]] = {}

    def query(self, op: str, *args: Any) -> Any:
        key = answer_key(op, args)
        try:
            value = self._inner.query(op, *args)
        except NvmlCallError as exc:
            self.answers[key] = {"error": exc.error}
            raise
        self.answers[key] = {"value": value}
        return value

    def close(self) -> None:
        self._inner.close()

    def dump(self, path: Path, meta: dict[str, Any]) -> None:
        doc = {"format": RECORDING_FORMAT, **meta, "answers": self.answers}
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


class ReplayNvml:
    """Answers from a recording; a question that wasn't recorded is 'not supported'."""

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self._answers = answers

    @classmethod
    def load(cls, path: Path) -> ReplayNvml:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        if doc.get("format") != RECORDING_FORMAT:
            raise ValueError(f"{path}: not a {RECORDING_FORMAT} file")
        return cls(doc["answers"])

    def query(self, op: str, *args: Any) -> Any:
        answer = self._answers.get(answer_key(op, args))
        if answer is None:
            raise NvmlCallError(op, args, "not recorded")
        if "error" in answer:
            raise NvmlCallError(op, args, answer["error"])
        return answer["value"]

    def close(self) -> None:
        pass
