# SPDX-License-Identifier: Apache-2.0
"""Provider generations: compare-and-swap in SQL.

A generation is not part of what the candidate search keeps, so a bump
alone does not say the structure changed (db/structure.py).
"""

from osc_placement.server.db import tables
from osc_placement.server import errors

_RP = tables.resource_providers


class GenerationConflict(errors.Conflict):
    """A lost compare-and-swap on a provider generation."""

    def __init__(self, detail='resource provider generation conflict'):
        super().__init__(detail, code=errors.CONCURRENT_UPDATE)


def already_changed():
    """The aggregate and trait routes' wording of a stale generation."""
    return GenerationConflict("Resource provider's generation already "
                              "changed. Please update the generation and "
                              "try again.")


def bump(conn, provider_id, expected, conflict=GenerationConflict):
    """Set generation to ``expected + 1`` if it is still ``expected``."""
    result = conn.execute(
        _RP.update()
        .where(_RP.c.id == provider_id, _RP.c.generation == expected)
        .values(generation=expected + 1, updated_at=tables.utcnow()))
    if result.rowcount != 1:
        raise conflict()
    return expected + 1


def check(provider, given, conflict=GenerationConflict):
    """Fail early when the client's generation is already stale."""
    if provider['generation'] != given:
        raise conflict()
