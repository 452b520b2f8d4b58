"""Personal records: books, Claude Code transcripts, intent, and any source a plugin adds.

A record is one book, one chat session, one commit or the intent file: a stable id, a time, and
numbered paragraphs. It is stored as a snapshot whose bytes are the record's canonical JSON; the
``record`` extractor turns it into a document. See ``docs/personal-records.md``.
"""
