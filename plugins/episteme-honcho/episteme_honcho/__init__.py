"""episteme-honcho: ``episteme ingest honcho``, one record ``chat:honcho/<workspace>/<session>`` each."""

__version__ = "0.1.0"
