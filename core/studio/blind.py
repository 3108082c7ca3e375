"""The hidden-intent visibility rule: who may see a sample's hidden goal, and when.

A play page reveals a sample's hidden goal: Play as user shows it from the start (it is the
person's private goal), Play as agent shows it in the debrief once the episode ends. In a blind
study that must never reach a person who still has to play that task blind. The server enforces
it here — the pages only ask — in one rule with these reasons (:func:`hidden_reasons`):

1. **Other seat.** A person assigned (in any study) to play one seat on a sample never opens it
   in the other seat; with ``strict`` (annotators) a recorded play of the other seat blocks too.
2. **Own item outside the study.** While a blind study item of a person is pending, that sample
   is played only *as that item* (from the queue): free play of it — in either page — is refused,
   so junk answers cannot buy a debrief while the item stays pending.
3. **Siblings.** While a blind *agent* item is pending (its goal is what the person must find
   out), every sample that shares its intent graph or its root intent is not offered in either
   play page and cannot be started or opened (another agent item of the person's own stays
   playable as that item; its debrief waits, see below).

:func:`reveal_refusal` keeps a debrief (or any reveal) closed until the study item an episode
fulfils is submitted. :func:`why_hidden` lists every reason for an admin. Items of studies that
are not blind, and items that are done or skipped, hide nothing.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from core.model.base import Strict
from core.store import Store
from core.studies.schema import ensure_study_schema

PlayRole = Literal["user", "agent"]
STUDY_ROLE: dict[str, str] = {"user": "play_user", "agent": "play_agent"}
OTHER: dict[str, PlayRole] = {"user": "agent", "agent": "user"}


class HiddenReason(Strict):
    """Why a sample is hidden from a person in a play role."""

    code: Literal["other_seat", "played_other_seat", "own_item", "sibling"]
    text: str
    study_id: str | None = None
    assignment_id: int | None = None
    via_sample: str | None = None


class _Pending(Strict):
    assignment_id: int
    study_id: str
    role: str
    sample_id: str
    graph_id: str
    root: str


def _pending_blind(store: Store, person: str) -> list[_Pending]:
    """The person's pending play items in blind, open studies (with graph and root intent)."""
    ensure_study_schema(store)
    rows = store.conn.execute(
        "SELECT a.assignment_id, a.study_id, a.role, a.target_id, s.spec, "
        "sm.graph_id, json_extract(sm.body, '$.root_intent_id') "
        "FROM assignments a JOIN studies s ON s.study_id = a.study_id "
        "LEFT JOIN samples sm ON sm.sample_id = a.target_id "
        "WHERE a.annotator_id=? AND a.status='pending' AND a.target_kind='sample' "
        "AND s.status='open'",
        (person,),
    ).fetchall()
    out = []
    for aid, sid, role, target, spec, graph, root in rows:
        if not json.loads(spec).get("blind", True):
            continue
        out.append(
            _Pending(
                assignment_id=int(aid),
                study_id=str(sid),
                role=str(role),
                sample_id=str(target),
                graph_id=str(graph or ""),
                root=str(root or ""),
            )
        )
    return out


def _sibling_blocks(p: _Pending, role: PlayRole, assignment_id: int | None) -> bool:
    """Whether a pending item hides its siblings from this play.

    Only a pending *agent* item has a goal its player must not know; a person playing another
    agent item as such may (its debrief stays closed while a sibling is pending).
    """
    if p.role != "play_agent":
        return False
    return not (assignment_id is not None and role == "agent")


def _identity(store: Store, sample_id: str) -> tuple[str, str]:
    row = store.conn.execute(
        "SELECT graph_id, json_extract(body, '$.root_intent_id') FROM samples WHERE sample_id=?",
        (sample_id,),
    ).fetchone()
    return (str(row[0] or ""), str(row[1] or "")) if row else ("", "")


def hidden_reasons(
    store: Store,
    person: str,
    sample_id: str,
    role: PlayRole,
    *,
    strict: bool,
    assignment_id: int | None = None,
) -> list[HiddenReason]:
    """Every reason ``person`` may not play (or open) ``sample_id`` as ``role`` (empty: may).

    Args:
        store: The store.
        person: Who asks.
        sample_id: The sample.
        role: ``user`` or ``agent``.
        strict: Annotators: their own plays of the other seat count too.
        assignment_id: The study item this play fulfils (None: free play).
    """
    ensure_study_schema(store)
    out: list[HiddenReason] = []
    other = STUDY_ROLE[OTHER[role]]
    row = store.conn.execute(
        "SELECT study_id, assignment_id FROM assignments WHERE annotator_id=? AND role=? "
        "AND target_kind='sample' AND target_id=? LIMIT 1",
        (person, other, sample_id),
    ).fetchone()
    if row is not None:
        out.append(
            HiddenReason(
                code="other_seat",
                text=(
                    f"You are assigned to play the {OTHER[role]} on this sample, so you cannot "
                    f"open it as the {role}: it would reveal what the other side must not know."
                ),
                study_id=row[0],
                assignment_id=row[1],
            )
        )
    if strict:
        played = store.conn.execute(
            "SELECT 1 FROM study_plays WHERE annotator_id=? AND role=? AND sample_id=? LIMIT 1",
            (person, other, sample_id),
        ).fetchone()
        if played is not None:
            out.append(
                HiddenReason(
                    code="played_other_seat",
                    text=(
                        f"You have played the {OTHER[role]} on this sample, so you cannot play "
                        f"it as the {role}. Pick another sample."
                    ),
                )
            )
    pending = _pending_blind(store, person)
    if not pending:
        return out
    graph, root = _identity(store, sample_id)
    for p in pending:
        if p.sample_id == sample_id:
            if assignment_id is not None and p.assignment_id == assignment_id:
                continue
            out.append(
                HiddenReason(
                    code="own_item",
                    text=(
                        "This sample is one of your pending study items: play it from your "
                        "study queue (Home or Annotate), not on its own."
                    ),
                    study_id=p.study_id,
                    assignment_id=p.assignment_id,
                    via_sample=p.sample_id,
                )
            )
        elif _sibling_blocks(p, role, assignment_id) and (
            (graph and graph == p.graph_id) or (root and root == p.root)
        ):
            out.append(
                HiddenReason(
                    code="sibling",
                    text=(
                        "This sample shares its task with one of your pending blind study "
                        "items; it opens once that item is submitted."
                    ),
                    study_id=p.study_id,
                    assignment_id=p.assignment_id,
                    via_sample=p.sample_id,
                )
            )
    return out


def hidden_refusal(
    store: Store,
    person: str,
    sample_id: str,
    role: PlayRole,
    *,
    strict: bool,
    assignment_id: int | None = None,
) -> str | None:
    """The first reason's text (None when ``person`` may play ``sample_id`` as ``role``)."""
    reasons = hidden_reasons(
        store, person, sample_id, role, strict=strict, assignment_id=assignment_id
    )
    return reasons[0].text if reasons else None


def hidden_samples(store: Store, person: str, role: PlayRole, *, strict: bool) -> set[str]:
    """Every sample :func:`hidden_reasons` hides from free play for ``person`` as ``role``."""
    ensure_study_schema(store)
    other = STUDY_ROLE[OTHER[role]]
    out = {
        str(r[0])
        for r in store.conn.execute(
            "SELECT target_id FROM assignments WHERE annotator_id=? AND role=? "
            "AND target_kind='sample'",
            (person, other),
        )
    }
    if strict:
        out |= {
            str(r[0])
            for r in store.conn.execute(
                "SELECT sample_id FROM study_plays WHERE annotator_id=? AND role=?",
                (person, other),
            )
        }
    pending = _pending_blind(store, person)
    if pending:
        out |= {p.sample_id for p in pending}
        agents = [p for p in pending if p.role == "play_agent"]
        graphs = sorted({p.graph_id for p in agents if p.graph_id})
        roots = sorted({p.root for p in agents if p.root})
        if graphs:
            ph = ",".join("?" * len(graphs))
            out |= {
                str(r[0])
                for r in store.conn.execute(
                    f"SELECT sample_id FROM samples WHERE graph_id IN ({ph})", graphs
                )
            }
        if roots:
            ph = ",".join("?" * len(roots))
            out |= {
                str(r[0])
                for r in store.conn.execute(
                    "SELECT sample_id FROM samples WHERE "
                    f"json_extract(body, '$.root_intent_id') IN ({ph})",
                    roots,
                )
            }
    return out


def reveal_refusal(store: Store, person: str, episode_id: str) -> str | None:
    """Why an episode's hidden goal may not be revealed to ``person`` yet (None: it may).

    An episode that fulfils a study item reveals nothing until that item is submitted (done);
    any other play reveals nothing while the person has a pending blind item on its task.
    """
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT p.assignment_id, p.sample_id, p.role, a.status FROM study_plays p "
        "LEFT JOIN assignments a ON a.assignment_id = p.assignment_id WHERE p.episode_id=?",
        (episode_id,),
    ).fetchone()
    if row is None:
        return None
    aid, sample_id, role, status = row
    if aid is not None and status == "pending":
        return "The debrief opens once this study item is submitted."
    play_role: PlayRole = "agent" if role == "play_agent" else "user"
    reasons = [
        r
        for r in hidden_reasons(
            store, person, str(sample_id), play_role, strict=False, assignment_id=aid
        )
        if r.code in ("own_item", "sibling")
    ]
    return reasons[0].text if reasons else None


def blind_play(store: Store, episode_id: str) -> bool:
    """Whether ``episode_id`` is a play of a blind study (the other seat is not named).

    A blind study hides the model identity and method on the other side of the table: the
    person playing the user is not told which agent (method, model) they face.
    """
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT s.spec FROM study_plays p JOIN studies s ON s.study_id = p.study_id "
        "WHERE p.episode_id=?",
        (episode_id,),
    ).fetchone()
    return row is not None and bool(json.loads(row[0]).get("blind", True))


def why_hidden(store: Store, person: str, sample_id: str) -> list[HiddenReason]:
    """For an admin: every reason ``sample_id`` is hidden from ``person``, in either seat."""
    out: list[HiddenReason] = []
    seen: set[tuple[str, int | None]] = set()
    roles: tuple[PlayRole, ...] = ("user", "agent")
    for role in roles:
        for r in hidden_reasons(store, person, sample_id, role, strict=True):
            key = (r.code + role, r.assignment_id)
            if key not in seen:
                seen.add(key)
                out.append(r.model_copy(update={"text": f"as the {role}: {r.text}"}))
    return out


def debrief_for(store: Store, episode_id: str, person: str) -> Any:
    """The play-as-agent debrief of ``episode_id`` for ``person``, once the rule allows it.

    Raises:
        ProtocolError: The episode has not ended, or its study item (or a pending blind item
            on its task) keeps the goal hidden.
    """
    from core.errors import ProtocolError
    from core.studio.debrief import agent_debrief

    why = reveal_refusal(store, person, episode_id)
    if why is not None:
        raise ProtocolError(why)
    return agent_debrief(store, episode_id)
