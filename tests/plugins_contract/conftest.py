"""The fixtures ``episteme_core.testing`` offers plugin test suites, imported as a plugin's conftest would."""

from episteme_core.testing import sample_home  # noqa: F401
