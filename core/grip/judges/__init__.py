"""Role-realism judges (Identification and Consistency) behind one interface."""

from core.grip.judges.base import (
    DIFFERENT,
    INVALID,
    SAME,
    Judgment,
    PersonaCard,
    RoleJudge,
    UserTurn,
    persona_cards,
    user_turns,
)

__all__ = [
    "DIFFERENT",
    "INVALID",
    "SAME",
    "Judgment",
    "PersonaCard",
    "RoleJudge",
    "UserTurn",
    "persona_cards",
    "user_turns",
]
