"""`capgap tune`: measure collectives on this machine and recommend engine table values.

Modules: spec (the frozen sweep), worker (runs under torchrun, measures only), recommend
(samples -> statistics -> table values), values (the JSON `capgap fix --values` reads), plot,
link (how close to the NVLink limit), launch (starts the worker under torchrun).
"""
