"""Judging what the files say: syntax trees to facts, capability expressions evaluated per arch,
whole decisions, evidence of needs, consequences, and the rules. Nothing here reads a tree or a cache."""
