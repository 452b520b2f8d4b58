"""episteme family rfc."""
