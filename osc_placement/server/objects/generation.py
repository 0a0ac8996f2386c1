"""Provider generations: compare-and-swap in SQL."""


from osc_placement.server import errors
from osc_placement.server.db import lists
from osc_placement.server.db import structure
from osc_placement.server.db import tables

_RP = tables.resource_providers
# A generation is not part of what the candidate search keeps, so its
# bump alone does not change the structure version (db/structure.py).
_NOT_STRUCTURE = {structure.UNCHANGED: True}


class GenerationConflict(errors.Conflict):
    """A lost compare-and-swap on a provider generation."""

    def __init__(self, detail='resource provider generation conflict'):
        super().__init__(detail, code=errors.CONCURRENT_UPDATE)


def bump(conn, provider_id, expected, conflict=GenerationConflict):
    """Set generation to ``expected + 1`` if it is still ``expected``."""
    result = conn.execute(
        _RP.update()
        .where(_RP.c.id == provider_id, _RP.c.generation == expected)
        .values(generation=expected + 1, updated_at=tables.utcnow())
        .execution_options(**_NOT_STRUCTURE))
    if result.rowcount != 1:
        raise conflict()
    return expected + 1


def bump_many(conn, provider_ids):
    """+1 on each provider (allocation writes), in one statement."""
    if provider_ids:
        conn.execute(
            _RP.update().where(lists.one_of(conn, _RP.c.id,
                                            sorted(provider_ids)))
            .values(generation=_RP.c.generation + 1,
                    updated_at=tables.utcnow())
            .execution_options(**_NOT_STRUCTURE))


def check(provider, given, conflict=GenerationConflict):
    """Fail early when the client's generation is already stale."""
    if provider['generation'] != given:
        raise conflict()
