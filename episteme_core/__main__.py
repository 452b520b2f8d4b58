"""``python -m episteme_core`` runs the CLI."""

from episteme_core.cli.main import main

main()
