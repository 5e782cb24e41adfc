"""The `binaries` scan analyzer: rule binary-missing-arch over a target's shared objects and cubins.

A library with kernels but no SASS or PTX a target GPU can run fails at its first kernel launch
with "no kernel image is available for execution on the device". Libraries without CUDA code
produce nothing; unreadable binaries are reported as skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capgap.scan.analyzers import AnalyzerResult

if TYPE_CHECKING:
    from capgap.scan.analyzers import ScanOptions
    from capgap.targets import Target

ANALYZER_ID = "binaries"
RULES = ("binary-missing-arch",)


def analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    if not options.binaries or not options.archs:
        return AnalyzerResult()
    from capgap.binaries.names import is_candidate_name
    from capgap.targets import iter_files

    files = list(iter_files(target, is_candidate_name))
    if not files:  # most source trees: the reader and the cache are not even imported
        return AnalyzerResult()
    from capgap.binaries.audit import audit_files, audit_findings
    from capgap.binaries.cache import BinaryCache
    from capgap.paths import cache_dir

    ccs = list(dict.fromkeys((a.major, a.minor) for a in options.archs))
    cache = BinaryCache(cache_dir()) if options.use_cache else None
    audit = audit_files(files, target.root, ccs, cache)
    return AnalyzerResult(audit_findings(audit), list(audit.skipped), audit.files)
