"""The Performance page (docs/performance.md, generated while the site builds): it renders the
committed results of every benchmark, and the README's results table is theirs."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import results  # noqa: E402  (tools/results.py)


def test_the_committed_results_render(tmp_path):
    """benchmarks/results/ holds a well-formed result of every benchmark that records one; the
    page has a section for each, and the README's table is generated from them."""
    recorded = results.load()
    assert set(recorded) == set(results.ORDER)
    page = tmp_path / "performance.md"
    assert results.main(["--output", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    for benchmark in recorded.values():
        assert f"## {benchmark['title']}" in text, benchmark["title"]
    for benchmark, name, _ in results.HEADLINES:
        assert any(case["name"] == name for case in recorded[benchmark]["cases"]), name
    assert results.main(["--check-readme", str(ROOT / "README.md")]) == 0
