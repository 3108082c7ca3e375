"""Services behind the studio's pages: the only part of ``core`` the pages import.

Each module is one page concern (role-play, live watching, background jobs, the inspector and
timeline, the Home page, dashboards, study display, auth and the sign-in throttle, uploads, store
health, first-run bootstrap). Pages import from here, :mod:`core.model`, :mod:`core.errors` and
:mod:`core.paths` only; everything below (engine, store, construction, GRIP) is reached through
these services. Nothing here imports streamlit.
"""
