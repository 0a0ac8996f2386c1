"""JSON schemas per route and microversion (plain dicts)."""


def for_version(table, version):
    """The schema of the highest entry in ``table`` at or below version.

    ``table`` is a list of (version, schema) in ascending order."""
    chosen = None
    for since, schema in table:
        if version >= since:
            chosen = schema
    return chosen
