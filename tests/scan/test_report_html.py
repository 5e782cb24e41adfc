"""`capgap scan --format html`: one self-contained page, every tree text escaped, filters that work
in a real browser (headless Chromium: the DOM after the page's script ran, and a screenshot)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import browser
from tests.cli_runner import run_cli
from tests.scan.report_tree import HOSTILE_NAME, write_report_tree


class _Page(HTMLParser):
    """Tags, attributes and the text of <script> and <style> of a page, as a browser parses it."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline: dict[str, str] = {"script": "", "style": ""}
        self.texts: list[str] = []
        self._in: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in self.inline else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.inline[self._in] += data
        else:
            self.texts.append(data)

    def findings(self) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == "article" and "finding" in (a.get("class") or "")]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tree = write_report_tree(tmp_path_factory.mktemp("html"))
    result = run_cli("scan", str(tree), "--arch", "12.0", "--no-cache", "--format", "html")
    assert result.code == 1, result.err
    out = tmp_path_factory.mktemp("page") / "report.html"
    out.write_text(result.out, encoding="utf-8")
    return out, result.out


def test_the_page_is_self_contained(page: tuple[Path, str]) -> None:
    _, text = page
    parsed = _Page(text)
    assert [t for t, _ in parsed.tags if t in {"script", "link", "img", "iframe", "object", "embed"}] == [
        "script"
    ]
    assert all("src" not in a and "href" not in a for _, a in parsed.tags)
    assert not re.search(r"url\(|@import|https?://", parsed.inline["style"] + parsed.inline["script"])
    # the policy admits this page's own style and script only, by hash, and no network at all
    policy = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv"))
    assert policy is not None and "default-src 'none'" in policy
    for kind in ("style", "script"):
        digest = base64.b64encode(hashlib.sha256(parsed.inline[kind].encode()).digest()).decode()
        assert f"{kind}-src 'sha256-{digest}'" in policy


def test_hostile_text_from_the_tree_is_escaped(page: tuple[Path, str]) -> None:
    _, text = page
    parsed = _Page(text)
    assert sum(1 for t, _ in parsed.tags if t == "script") == 1  # ours; the tree's stays text
    assert not any(t in {"img", "b"} for t, _ in parsed.tags)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    words = " ".join(parsed.texts)
    assert "<script>alert(1)</script> only sm100" in words  # shown as the text it is
    assert HOSTILE_NAME in words
    assert all("onerror" not in k for _, a in parsed.tags for k in a)


def test_every_finding_carries_what_the_filters_read(page: tuple[Path, str]) -> None:
    _, text = page
    findings = _Page(text).findings()
    assert len(findings) == 5  # all of them: low and tests too, the filters decide what shows
    assert Counter(f["data-severity"] for f in findings) == {"high": 1, "medium": 3, "low": 1}
    by_model = Counter(f["data-model"] for f in findings)
    assert by_model["llama_x"] == by_model["qwen_y"] == 1
    assert {f["data-where"] for f in findings} == {"runtime", "test"}
    assert {f["data-subsystem"] for f in findings} >= {"communication", "attention"}


def test_findings_show_their_source_lines_and_consequence(page: tuple[Path, str]) -> None:
    _, text = page
    assert '<span class=at><i>5</i>    if torch.cuda.get_device_capability()[0] == 10:</span>' in text
    assert "<span><i>7</i>    raise ValueError(&quot;&lt;script&gt;" in text  # the lines around it
    assert "KeyError at run time on 12.0 (eng/comm/all_reduce.py:7)" in text
    assert "fix: <code>capgap fix" in text  # the opening block's command


def _visible(dom: str) -> list[dict[str, str | None]]:
    return [f for f in _Page(dom).findings() if "hidden" not in f]


def test_filters_work_in_the_browser(page: tuple[Path, str]) -> None:
    path, _ = page
    url = path.as_uri()
    default = _visible(browser.run(url, "--dump-dom"))  # the command's filters: runtime, medium up
    assert sorted(f["data-severity"] for f in default) == ["high", "medium", "medium", "medium"]
    narrowed = browser.run(url + "#severity=high,medium,low&where=all&model=llama_x", "--dump-dom")
    shown = _visible(narrowed)
    assert {f["data-model"] for f in shown} == {"", "llama_x"}  # the runtime plus that model's file
    assert any(f["data-where"] == "test" for f in shown)
    assert 'data-shown="4"' in narrowed
    comm = _visible(browser.run(url + "#severity=high,medium&subsystem=communication&rule=table-missing-arch",
                                "--dump-dom"))
    assert [(f["data-severity"], f["data-rule"]) for f in comm] == [("high", "table-missing-arch")]


def test_the_page_renders(page: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = page
    shot = tmp_path / "shot.png"
    browser.run(path.as_uri(), f"--screenshot={shot}", "--window-size=900,700")
    width, height, pixels = browser.png_pixels(shot)
    assert (width, height) == (900, 700)
    colors = Counter(pixels)
    assert len(colors) > 50  # text, badges, borders: not a blank or one-colour page
    assert colors.most_common(1)[0][1] < 0.9 * len(pixels)
    # the stylesheet ran (the policy admitted it): the dark header band and the red high badge
    assert pixels[10 * width + 450] == (0x24, 0x29, 0x2F)
    red = (0xB3, 0x26, 0x1E)
    assert sum(n for c, n in colors.items() if sum(abs(a - b) for a, b in zip(c, red, strict=True)) < 12) > 50


def test_the_commands_filters_are_where_the_page_starts(tmp_path: Path) -> None:
    tree = write_report_tree(tmp_path / "tree")
    result = run_cli("scan", str(tree), "--arch", "12.0", "--no-cache", "--format", "html",
                     "--model", "llama-x", "--where", "test")
    body = next(a for t, a in _Page(result.out).tags if t == "body")
    assert body["data-defaults"] == "severity=high,medium,low&where=test&model=llama_x"
