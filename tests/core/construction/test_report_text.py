"""``build report --text``: request-text statistics that make wording regressions visible."""

from __future__ import annotations

from core.construction.pipeline import load_bundled
from core.construction.report import surface_template, text_of, tool_patterns
from core.envs.registry import load_world
from core.model.sample import FaultType as F


def _tools(bench: str) -> set[str]:
    return {t.name.lower() for t in load_world(bench).tools()}


def test_tool_name_phrasing_counts_ids_and_spaced_names_but_not_plain_words() -> None:
    pat = tool_patterns({"cancel_pending_order", "think", "search"})
    assert pat is not None
    assert pat.search("please use your cancel_pending_order tool")
    assert pat.search("cancel pending order: it's about my order #w1")
    assert not pat.search("i think i want to search for a lamp")
    assert tool_patterns({"think", "click"}) is None


def test_bundled_tau2_requests_name_no_tool_and_use_many_passages() -> None:
    for bench in ("tau2_retail", "tau2_airline"):
        _, samples = load_bundled(bench)
        t = text_of(samples, _tools(bench))
        assert t["tool_name_rate"] == 0.0
        ci = [s for s in samples if F.CONTEXTUAL_IRRELEVANCE in s.faults]
        assert t["distinct_offtopic_passages"] >= min(20, len(ci))
        assert t["median_words"] < 83  # the old median; the released airline one is 50
        tops = t["top_templates"]
        assert set(tops) == {x.value for x in F}
        for rows in tops.values():
            assert rows and all(r["count"] >= 1 and 0 < r["share"] <= 1 for r in rows)
            assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)


def test_a_regression_shows_up_in_the_statistics() -> None:
    _, samples = load_bundled("tau2_retail")
    one = samples[0]
    bad = [one.model_copy(update={"query": "Cancel pending order: it's about my order #W1."})]
    t = text_of(bad * 3, _tools("tau2_retail"))
    assert t["tool_name_rate"] == 1.0
    key = "+".join(f.value for f in one.faults)
    if "+" not in key:
        assert t["top_templates"][key][0] == {
            "template": "cancel pending order: it's about my",
            "count": 3,
            "share": 1.0,
        }


def test_the_template_skips_the_offtopic_passage_and_masks_numbers() -> None:
    _, samples = load_bundled("tau2_airline")
    ci = next(s for s in samples if s.faults == (F.CONTEXTUAL_IRRELEVANCE,))
    passage = next(m.surface for m in ci.mask if m.kind == "noise")
    assert not surface_template(ci).startswith(passage.split()[0].lower())
    fe = next(s for s in samples if "#" not in s.query and any(ch.isdigit() for ch in s.query))
    assert all(not any(ch.isdigit() for ch in w) for w in surface_template(fe).split())
