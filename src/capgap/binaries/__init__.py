"""Audit compiled CUDA kernels: which GPU architectures each shared library, cubin or fatbin can run on.

reader.read_binary(path) lists a file's SASS and PTX images (elf.py + fatbin.py, header-only);
compat.judge() applies the SASS/PTX compatibility rules; audit.audit_files() does both for a
target; analyzer.py is the `binaries` scan analyzer (rule binary-missing-arch).
"""
