"""Capture: turn URLs, local files and WARC records into snapshots (see ``docs/capture.md``).

``manifest`` parses manifests and maps, ``urls`` normalises URLs, ``netguard`` decides which
addresses may be connected, ``http`` fetches with bounds, ``manual`` ingests local files,
``warc`` moves snapshots in and out of WARC files, ``run`` drives a snapshot run.
"""
