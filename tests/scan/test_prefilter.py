"""The byte pre-filter: exact offsets of capability tokens and capability-like keys."""

from __future__ import annotations

from capgap.reading.prefilter import has_cc_key, hit_offsets, worth_parsing


def test_offsets_of_every_token_and_key_style() -> None:
    data = b'T = {9: 1, 10: 2}\nS = {"sm90": 1}\nD = {"9.0": 1}\nU = {(10, 0): 1}\nx = y[9: ]\n'
    hits = hit_offsets(data)
    expected = [b"9: 1, ", b"10: 2}", b'"sm90"', b'sm90":', b'.0": 1', b", 0): "]
    assert [data[i : i + 6] for i in hits] == expected
    # `y[9: ]` starts no key: `9: ` must follow a space, `{`, `,` or a newline
    assert data.index(b"[9: ") + 1 not in hits


def test_keys_alone_make_a_file_worth_parsing_and_plain_code_does_not() -> None:
    assert has_cc_key(b"SIZES = {\n    10: 64,\n}\n")
    assert has_cc_key(b'K = {"sm_100a": "k"}\n')
    assert not has_cc_key(b"x = y[10: ]\nbatch = {1: 2, 8: 4}\n")
    assert worth_parsing(b"major, minor = torch.cuda.get_device_capability()\n")
    assert not worth_parsing(b"def add(a, b):\n    return a + b\n")
