"""The CLI shell: commands parse options, call one library function, and return an Outcome.

``main`` parses and dispatches; the commands themselves are registered by the builtins (and plugins)
through ``episteme_commands``. What a command is and gets lives in the kernel (``kernel.contracts.Command``,
``kernel.context.RunContext`` and ``Outcome``).
"""
