"""episteme families w3c and whatwg."""
