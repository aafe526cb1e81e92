"""The operator's dashboard at /ui: server-rendered pages over the service's own data.

Kept import-free: the Guard imports `ui.auth` without pulling in the pages.
"""
