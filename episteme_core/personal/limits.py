"""Default limits of the personal sources (a module of constants, cheap to import for ``--help``)."""

RECORD_CONTENT_TYPE = "application/vnd.episteme.record+json"
BOOK_MAX_BYTES = 64 * 1024 * 1024
CLAUDE_PROJECTS = "~/.claude/projects"
CLAUDE_MAX_LINE_BYTES = 16 * 1024 * 1024
CLAUDE_MAX_BYTES = 512 * 1024 * 1024
