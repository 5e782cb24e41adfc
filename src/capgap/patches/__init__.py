"""Keep local patches across upgrades: a store of saved patches, detection of local changes,
a journaled apply pipeline and the upgrade flow (`capgap patch ...`, `capgap upgrade`)."""
