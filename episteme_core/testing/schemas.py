"""The JSON Schemas every artifact and the envelope validate against, and ``validate``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any


def schema_dir() -> Path:
    """Where the JSON Schemas are: inside the installed package, else the repository's ``schema/``."""
    package = Path(__file__).resolve().parents[1]  # episteme_core/
    packaged = package / "schemas"
    if packaged.is_dir():
        return packaged
    return package.parent / "schema"


@cache
def _validator(name: str) -> Any:
    import jsonschema
    from referencing import Registry, Resource

    directory = schema_dir()
    resources = []
    for path in sorted(directory.glob("*.schema.json")):
        contents = json.loads(path.read_text("utf-8"))
        resources.append((path.name, Resource.from_contents(contents)))
        if "$id" in contents:
            resources.append((contents["$id"], Resource.from_contents(contents)))
    registry: Any = Registry().with_resources(resources)
    schema = json.loads((directory / f"{name}.schema.json").read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(instance: Any, name: str) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``instance`` fits ``schema/NAME.schema.json``."""
    _validator(name).validate(instance)
