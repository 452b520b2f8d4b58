"""episteme-git: ``episteme ingest git REPO_DIR...``, one record ``git:<repo>@<sha>`` per commit."""

__version__ = "0.1.0"
