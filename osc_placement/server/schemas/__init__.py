"""JSON schemas per route and microversion (plain dicts)."""


def for_version(table, version):
    """The schema of the last entry in ``table`` that ``version`` supports.

    ``table`` is a list of (rule, schema), oldest rule first; a rule is
    the name of a row of microversion.RULES."""
    chosen = None
    for rule, schema in table:
        if version.supports(rule):
            chosen = schema
    return chosen
