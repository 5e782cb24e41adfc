"""Tuned kernel configs named after GPUs: coverage (scan rule `config-missing-device`) and copies.

naming.py    file names -> shape key + device spelling; each engine's GPU-name spelling
devices.py   GPU name -> compute capability (arch facts products)
smem.py      shared memory a Triton tile config needs per block (documented estimate)
coverage.py  per directory: what a device lacks, siblings ranked by closeness, fit checks
analyzer.py  the scan analyzer (ANALYZER_ID "configs")
fixer.py     fix_configs: copy the closest fitting sibling's file, mark it not measured
report.py    text renderers: show_config_findings (scan), show_config_copies (fix)
"""
