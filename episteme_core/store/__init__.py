"""The home and its store on disk: where the home is, content-addressed blobs, each stage's objects and
its atomic ``index.json`` commit, the append-only log, the writer lock, and the audit behind
``episteme verify``. Nothing here knows what a stage holds; ``episteme_core.stages`` does."""
