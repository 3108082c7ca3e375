"""The studio's page registry: files, titles, URL paths and what each page is for.

``app.py`` builds its navigation from :data:`PAGES`; the Home page describes each page a role
can open from :attr:`PageSpec.purpose`; services that hand out links (Home's resume list, the
Inspect page's branch links) name pages by :func:`page_file` so the pages can use
``st.page_link`` / ``st.switch_page`` and stay in the same tab.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    """One page of the studio."""

    page_id: str
    file: str
    title: str
    icon: str  # a Material icon (``:material/name:``): emoji need a colour font chromium may lack
    section: str
    purpose: str

    @property
    def url_path(self) -> str:
        """The page's URL path ("" for Home, which is served at ``/``)."""
        return "" if self.page_id == "home" else self.page_id


PAGES: dict[str, PageSpec] = {
    p.page_id: p
    for p in (
        PageSpec(
            "home",
            "pages/home.py",
            "Home",
            ":material/home:",
            "Studio",
            "What you can do here, your assigned work and episodes to resume.",
        ),
        PageSpec(
            "play_user",
            "pages/play_user.py",
            "Play as user",
            ":material/theater_comedy:",
            "Play",
            "Role-play a customer with a private goal against an agent; answer in your own "
            "words and see what the agent will learn from them.",
        ),
        PageSpec(
            "play_agent",
            "pages/play_agent.py",
            "Play as agent",
            ":material/joystick:",
            "Play",
            "Be the agent against a simulated customer, blind to their hidden goal; a debrief "
            "shows the truth when the episode ends.",
        ),
        PageSpec(
            "annotate",
            "pages/annotate.py",
            "Annotate",
            ":material/edit_note:",
            "Play",
            "Work through your study queue one item at a time (number keys pick a label, "
            "Enter saves).",
        ),
        PageSpec(
            "watch",
            "pages/watch.py",
            "Watch live",
            ":material/sensors:",
            "Research",
            "Start simulated episodes and follow the patience meter and shift timeline live.",
        ),
        PageSpec(
            "inspect",
            "pages/inspect.py",
            "Inspect",
            ":material/search:",
            "Research",
            "Filter and search episodes like a log viewer, read them turn by turn, reveal the "
            "hidden intent, compare, branch from a turn.",
        ),
        PageSpec(
            "grip",
            "pages/grip.py",
            "GRIP dashboard",
            ":material/bar_chart:",
            "Research",
            "The results grid with its n per cell, paired deltas, the paper's figures and the "
            "persona ranking heatmap.",
        ),
        PageSpec(
            "construction",
            "pages/construction.py",
            "Construction",
            ":material/account_tree:",
            "Research",
            "Intent graphs, samples by fault type and the verifier's rejections.",
        ),
        PageSpec(
            "runs",
            "pages/runs.py",
            "Runs",
            ":material/rocket_launch:",
            "Research",
            "Compose a sweep, launch it in the background, follow its progress, cancel or "
            "resume it.",
        ),
        PageSpec(
            "agreement",
            "pages/agreement.py",
            "Agreement & QA",
            ":material/handshake:",
            "Research",
            "Inter-annotator agreement, confusion matrices and the disagreements to review.",
        ),
        PageSpec(
            "sessions",
            "pages/sessions.py",
            "Sessions",
            ":material/move_to_inbox:",
            "Research",
            "Import production agent logs, judge them twice and read any one of them.",
        ),
        PageSpec(
            "data",
            "pages/data.py",
            "Data",
            ":material/database:",
            "Admin",
            "Imports, study set-up and assignments, personas and store health.",
        ),
    )
}
"""Every page, in navigation order."""


def page_file(page_id: str) -> str:
    """The script path of a page (for ``st.page_link`` / ``st.switch_page``).

    Raises:
        KeyError: Unknown page id.
    """
    return PAGES[page_id].file
