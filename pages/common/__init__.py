"""Widgets and helpers shared by the studio's pages (UI layer only)."""
