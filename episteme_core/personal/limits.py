"""Default limits of the personal sources (a module of constants, cheap to import for ``--help``)."""

RECORD_CONTENT_TYPE = "application/vnd.episteme.record+json"
BOOK_MAX_BYTES = 64 * 1024 * 1024
# a book's record is held whole while it is stored and extracted: a 64 MiB book of one-letter
# paragraphs would be 21 million of them (about 1.7 GB of record)
BOOK_MAX_PARAGRAPHS = 1_000_000
CLAUDE_PROJECTS = "~/.claude/projects"
CLAUDE_MAX_LINE_BYTES = 16 * 1024 * 1024
# a session's files in all: its record is held whole while stored and extracted (peak RSS about
# 1.1x this plus 75 MiB, under the 512 MiB every command keeps to)
CLAUDE_MAX_BYTES = 320 * 1024 * 1024
