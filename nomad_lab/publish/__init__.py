"""The publish ring: what turns stored results into pages, above the studies that make them.

The figure markers of README.md and docs/ and their checks (``docs``, ``docs_prose``) and the results
gallery (``gallery``, ``gallery_extras``) read what studies stored; nothing below this ring imports it.
"""
