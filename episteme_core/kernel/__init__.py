"""The plugin kernel: the registry of components, their contracts, and the context a run receives.

The hooks themselves are ``episteme_core.hookspecs``; plugins reach all of this through
``episteme_core.api``.
"""
