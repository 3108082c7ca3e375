"""The offline heuristic judge: a classifier over features of the user turns.

Features describe *manner*, not content: message length, disclosures per answer, volunteered
facts, declines, rejection hints, hedges, politeness, punctuation. An extra-trees forest
(scikit-learn, fixed ``random_state``) is trained on labelled simulated episodes and judges
held-out ones. In a report every episode is judged by a model that never saw it
(cross-fitting over folds grouped by sample), so the recorded accuracy is a held-out
accuracy. Its judgments are labelled ``heuristic``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from core.grip.judges.base import DIFFERENT, SAME, Judgment, PersonaCard, UserTurn

HEURISTIC_NAME = "heuristic"

HEDGES = (
    "maybe",
    "perhaps",
    "i think",
    "i guess",
    "not sure",
    "probably",
    "kind of",
    "sort of",
    "i suppose",
    "might",
    "could be",
    "i don't know",
    "whatever",
)
POLITE = ("please", "thank", "sorry")
FEATURE_NAMES: tuple[str, ...] = (
    "n_turns",
    "mean_words",
    "sd_words",
    "max_words",
    "answer_per_answer",
    "volunteer_per_answer",
    "decline_rate",
    "hint_rate",
    "already_rate",
    "confusion_rate",
    "hedges_per_turn",
    "polite_per_turn",
    "question_marks",
    "exclamations",
    "first_person",
    "type_token",
)

_WORD = re.compile(r"[a-z']+")


def features(turns: Sequence[UserTurn]) -> list[float]:
    """The feature vector of one episode's user turns (order = :data:`FEATURE_NAMES`)."""
    texts = [t.text.lower() for t in turns]
    words = [_WORD.findall(t) for t in texts]
    lens = np.array([len(w) for w in words], dtype=float) if words else np.zeros(1)
    n = max(len(turns), 1)
    answers = [t for t in turns if t.reply_kind == "answer"]
    questions = [
        t for t in turns if t.reply_kind in ("answer", "decline", "already_asked", "confusion")
    ]
    rejections = [t for t in turns if t.reply_kind == "rejection"]
    all_words = [w for ws in words for w in ws]
    n_words = max(len(all_words), 1)
    na = max(len(answers), 1)
    nq = max(len(questions), 1)
    return [
        float(len(turns)),
        float(lens.mean()),
        float(lens.std()),
        float(lens.max()),
        sum(t.n_answer for t in answers) / na,
        sum(t.n_volunteer for t in answers) / na,
        sum(1 for t in questions if t.reply_kind == "decline") / nq,
        (sum(1 for t in rejections if t.n_hint > 0) / len(rejections)) if rejections else -1.0,
        sum(1 for t in questions if t.reply_kind == "already_asked") / nq,
        sum(1 for t in questions if t.reply_kind == "confusion") / nq,
        sum(t.count(h) for t in texts for h in HEDGES) / n,
        sum(t.count(p) for t in texts for p in POLITE) / n,
        sum(t.count("?") for t in texts) / n,
        sum(t.count("!") for t in texts) / n,
        sum(1 for w in all_words if w in ("i", "me", "my", "i'm", "i'd")) / n_words,
        len(set(all_words)) / n_words,
    ]


class HeuristicJudge:
    """A trained feature classifier acting as a judge.

    Args:
        n_estimators: Trees of the forest.
        seed: ``random_state`` of the forest.
    """

    name = HEURISTIC_NAME

    def __init__(self, *, n_estimators: int = 100, seed: int = 0) -> None:
        from sklearn.ensemble import ExtraTreesClassifier

        self.model: Any = ExtraTreesClassifier(
            n_estimators=n_estimators, random_state=seed, min_samples_leaf=2, n_jobs=1
        )
        self.fitted = False

    def fit(self, episodes: Sequence[Sequence[UserTurn]], labels: Sequence[str]) -> HeuristicJudge:
        """Train on labelled episodes (labels = persona ids)."""
        x = np.array([features(t) for t in episodes], dtype=float)
        self.model.fit(x, np.array(labels))
        self.fitted = True
        return self

    def predict(self, episodes: Sequence[Sequence[UserTurn]]) -> list[str]:
        """Predicted persona ids."""
        if not episodes:
            return []
        x = np.array([features(t) for t in episodes], dtype=float)
        return [str(v) for v in self.model.predict(x)]

    def proba(self, turns: Sequence[UserTurn]) -> dict[str, float]:
        """Class probabilities of one episode."""
        p = self.model.predict_proba(np.array([features(turns)], dtype=float))[0]
        return {str(c): float(v) for c, v in zip(self.model.classes_, p, strict=True)}

    def identify(
        self, items: Sequence[tuple[str, Sequence[UserTurn]]], cards: Sequence[PersonaCard]
    ) -> list[Judgment]:
        """Identification (cards are not needed: the classes are the training personas)."""
        out = []
        for eid, turns in items:
            probs = self.proba(turns)
            best = max(sorted(probs), key=lambda k: probs[k])
            out.append(
                Judgment(self.name, "identification", eid, best, json.dumps(probs, sort_keys=True))
            )
        return out

    def compare(
        self, items: Sequence[tuple[str, Sequence[UserTurn], Sequence[UserTurn]]]
    ) -> list[Judgment]:
        """Consistency: SAME when both episodes get the same predicted persona."""
        out = []
        for pid, ta, tb in items:
            a, b = self.predict([ta, tb])
            raw = json.dumps({"a": a, "b": b})
            out.append(Judgment(self.name, "consistency", pid, SAME if a == b else DIFFERENT, raw))
        return out


def cross_fit(
    episodes: Sequence[Sequence[UserTurn]],
    labels: Sequence[str],
    groups: Sequence[str],
    *,
    folds: int = 5,
    seed: int = 0,
) -> list[str | None]:
    """Out-of-fold predictions: each episode judged by a model trained without its group.

    Args:
        episodes: User turns per episode.
        labels: True persona per episode.
        groups: Fold groups (sample ids: no sample is in both train and test).
        folds: Number of folds (fewer when there are fewer groups).
        seed: Forest seed.

    Returns:
        Predicted persona per episode (None where a fold could not be trained).
    """
    from sklearn.model_selection import GroupKFold

    n_groups = len(set(groups))
    k = min(folds, n_groups)
    out: list[str | None] = [None] * len(episodes)
    if k < 2 or len(set(labels)) < 2:
        return out
    x_idx = np.arange(len(episodes))
    for train, test in GroupKFold(n_splits=k).split(x_idx, groups=list(groups)):
        train_labels = [labels[i] for i in train]
        if len(set(train_labels)) < 2:
            continue
        judge = HeuristicJudge(seed=seed).fit([episodes[i] for i in train], train_labels)
        for i, p in zip(test, judge.predict([episodes[i] for i in test]), strict=True):
            out[int(i)] = p
    return out
