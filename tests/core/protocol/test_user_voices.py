"""Voices: template phrasing per persona style, the LLM voice's prompt and repairs."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from protohelp import ListAgent, ask, buy, persona

from core.engine import episode
from core.envs.mock import mock_graph, mock_sample
from core.errors import ConfigError
from core.llm import ScriptedLLM
from core.model.actions import Propose
from core.model.config import ProtocolConfig
from core.model.events import Repair, UserReplied
from core.model.sample import FaultType
from core.paths import DATA_DIR
from core.protocol.user import Fact, ReplyPlan
from core.protocol.voices import make_voice
from core.protocol.voices.llm import LLMVoice, contradicts
from core.protocol.voices.template import LINE_KINDS, TemplateVoice, load_style

NEVER = ProtocolConfig(shift_fire_prob=0.0)
PIDS = ["rational", "dependent", "avoidant", "intuitive", "spontaneous"]


def _fact() -> Fact:
    return Fact(
        slot="color", label="colour", value="teal", phrase="the colour should be teal", how="answer"
    )


def test_every_persona_has_a_complete_style_file():
    for pid in PIDS:
        assert (DATA_DIR / "voices" / f"{pid}.yaml").is_file()
        style = load_style(pid)
        assert set(LINE_KINDS) <= set(style)


def test_styles_differ_and_phrase_only_the_plan():
    v = TemplateVoice()
    plan = ReplyPlan(kind="answer", turn=1, facts=(_fact(),), asked=("color",))
    texts = {pid: v.say(plan, persona(pid), "k").text for pid in PIDS}
    assert len(set(texts.values())) == 5
    assert all("teal" in t for t in texts.values())
    assert "?" in texts["dependent"]  # seeks reassurance
    assert len(texts["avoidant"]) <= len(texts["dependent"])


def test_every_sentence_of_a_template_reply_starts_with_a_capital():
    """Fact phrases are lowercase ("my zip code is …"); placed after a sentence they start one."""
    v = TemplateVoice()
    facts = (
        _fact(),
        Fact(
            slot="zip", label="zip code", value="30251", phrase="my zip code is 30251", how="answer"
        ),
    )
    context = tuple(dataclasses.replace(f, how="context") for f in facts)
    plans = [
        ReplyPlan(kind="answer", turn=t, facts=facts, asked=("color", "zip")) for t in range(8)
    ]
    plans += [ReplyPlan(kind="context", turn=t, facts=context) for t in range(8)]
    plans += [
        ReplyPlan(kind="rejection", turn=t, hinted=("color",), hinted_labels=("colour",))
        for t in range(8)
    ]
    plans += [
        ReplyPlan(kind="answer", turn=t, note="confirm_no", hinted_labels=("colour",))
        for t in range(8)
    ]
    for pid in PIDS:
        for plan in plans:
            text = v.say(plan, persona(pid), "k").text
            assert not re.search(r"(^|[.!?] )[a-z]", text), (pid, text)


def test_variety_across_turns_is_seeded():
    v = TemplateVoice()
    p = persona("dependent")
    got = [v.say(ReplyPlan(kind="confusion", turn=t), p, "k").text for t in range(12)]
    assert len(set(got)) > 1
    assert got == [v.say(ReplyPlan(kind="confusion", turn=t), p, "k").text for t in range(12)]


def test_rejection_hint_template_uses_labels_only():
    v = TemplateVoice()
    plan = ReplyPlan(kind="rejection", turn=2, hinted=("color",), hinted_labels=("colour",))
    assert "colour" in v.say(plan, persona("rational"), "k").text


def test_bad_voice_file_names_file_and_field(tmp_path: Path):
    (tmp_path / "default.yaml").write_text((DATA_DIR / "voices" / "default.yaml").read_text())
    (tmp_path / "odd.yaml").write_text("answer: []\n")
    with pytest.raises(ConfigError) as ei:
        load_style("odd", tmp_path)
    assert ei.value.field == "answer" and "odd.yaml" in str(ei.value.file)


def test_llm_prompt_shows_only_decided_facts_with_private_tags():
    llm = ScriptedLLM(["Teal, please."])
    voice = LLMVoice(llm, name="scripted/fake")
    plan = ReplyPlan(
        kind="answer", turn=1, question="Which colour?", facts=(_fact(),), asked=("color",)
    )
    out = voice.say(plan, persona("intuitive"), "k")
    assert out.text == "Teal, please." and out.repairs == ()
    msgs = llm.calls[0].messages
    user = msgs[1]["content"]
    assert "- the colour should be teal" in user
    assert all(
        ln.startswith("[PRIVATE]")
        or ln.startswith("- ")
        or ln in ("Say:", "", "Which colour?", "Write your reply now.")
        for ln in user.splitlines()
    )
    assert "medium" not in user and "40" not in user  # nothing the code did not decide
    assert persona("intuitive").bio in msgs[0]["content"]


def test_contradiction_regenerated_once_then_fixed_line():
    plan = ReplyPlan(kind="rejection", turn=3, accepted=False)
    assert contradicts(plan, "Yes, perfect, thanks!")
    assert not contradicts(plan, "No, that's not right.")
    llm = ScriptedLLM(["Yes, perfect!", "Great, thank you!"])
    out = LLMVoice(llm, name="m").say(plan, persona("rational"), "k")
    assert [r.target for r in out.repairs] == ["voice_regenerate", "voice_fallback"]
    assert not contradicts(plan, out.text)
    llm2 = ScriptedLLM(["Yes, perfect!", "Hmm, no, that is not what I wanted."])
    out2 = LLMVoice(llm2, name="m").say(plan, persona("rational"), "k")
    assert [r.target for r in out2.repairs] == ["voice_regenerate"]
    assert out2.text.startswith("Hmm, no")


def test_llm_voice_repairs_are_recorded_as_events(log):
    llm = ScriptedLLM(["Teal.", "Yes, perfect!", "Wonderful, thanks!"], cycle=False)
    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "L",
        NEVER,
        graph=mock_graph(),
        user_voice="scripted/fake",
    )
    voice = LLMVoice(llm, name="scripted/fake")
    episode.run(log, eid, ListAgent([ask("color"), buy("s04"), Propose(text="done")]), voice=voice)
    ev = log.events(eid)
    reps = [e for e in ev if isinstance(e, Repair)]
    assert [r.target for r in reps] == ["voice_regenerate", "voice_fallback"]
    rej = [e for e in ev if isinstance(e, UserReplied) and e.reply_kind == "rejection"][0]
    assert rej.voice == "scripted/fake" and not contradicts(
        ReplyPlan(kind="rejection", turn=0), rej.text
    )


def test_llm_failure_ends_episode_as_error(log):
    from core.errors import LLMError

    llm = ScriptedLLM([LLMError("boom", model="m")])
    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "L",
        NEVER,
        graph=mock_graph(),
        user_voice="scripted/fake",
    )
    st = episode.run(log, eid, ListAgent([ask("color")]), voice=LLMVoice(llm, name="m"))
    assert st.outcome.value == "ERROR" and st.reason.value == "voice_error" and "boom" in st.error
    assert log.summary(eid)["outcome"] == "ERROR"


def test_make_voice_specs():
    assert make_voice("human") is None
    assert make_voice("template").name == "template"
    assert make_voice("mute").name == "mute"


# -- issue 29: the voice's words are checked, and what they disclose is read from them --------
def test_echoed_private_lines_are_rejected_regenerated_then_replaced():
    plan = ReplyPlan(kind="answer", turn=1, facts=(_fact(),), asked=("color",))
    echo = "[PRIVATE] What your reply must do: answer. Say: the colour should be teal"
    llm = ScriptedLLM([echo, "Teal, please."])
    out = LLMVoice(llm, name="m").say(plan, persona("rational"), "k")
    assert [r.target for r in out.repairs] == ["voice_rejected"]
    assert out.text == "Teal, please." and not out.fallback
    llm2 = ScriptedLLM([echo, "Say: teal"])
    out2 = LLMVoice(llm2, name="m").say(plan, persona("rational"), "k")
    assert [r.target for r in out2.repairs] == ["voice_rejected", "voice_fallback"]
    assert out2.fallback and "[PRIVATE]" not in out2.text and "teal" in out2.text


def test_repeating_the_persona_description_is_an_echo():
    p = persona("dependent")
    words = p.bio.split()
    assert len(words) >= 10
    plan = ReplyPlan(kind="answer", turn=1, facts=(_fact(),), asked=("color",))
    bio_echo = "Hello! " + " ".join(words[:10]) + " Teal."
    out = LLMVoice(ScriptedLLM([bio_echo, "Teal would be lovely."]), name="m").say(plan, p, "k")
    assert [r.target for r in out.repairs] == ["voice_rejected"]
    assert "8 words" in out.repairs[0].detail


def _voice_episode(log, replies):  # type: ignore[no-untyped-def]
    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "L",
        NEVER,
        graph=mock_graph(),
        user_voice="scripted/fake",
    )
    voice = LLMVoice(ScriptedLLM(replies, cycle=True), name="scripted/fake")
    episode.run(log, eid, ListAgent([ask("color"), Propose(text="done")]), voice=voice)
    events = log.events(eid)
    reply = next(e for e in events if isinstance(e, UserReplied) and e.reply_kind == "answer")
    return reply, [e for e in events if isinstance(e, Repair)]


def test_disclosures_are_read_from_the_voices_words(log):
    said, _ = _voice_episode(log, ["Teal, thanks."])
    assert [d.slot for d in said.disclosures] == ["color"]


def test_a_voice_that_does_not_say_the_value_discloses_nothing(log):
    """Issue 29: 8 of 9 'answer' disclosures named values absent from the reply."""
    said, _ = _voice_episode(log, ["Hmm, let me think about what I would like."])
    assert said.disclosures == ()


def test_a_voice_that_says_more_or_otherwise_is_recorded(log):
    said, reps = _voice_episode(log, ["Red, in medium."])
    assert "color" not in [d.slot for d in said.disclosures]
    rejected = [r for r in reps if r.target == "voice_rejected"]
    assert rejected and (
        "not to disclose" in rejected[0].detail or "other values" in rejected[0].detail
    )
