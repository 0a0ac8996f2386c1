# SPDX-License-Identifier: Apache-2.0
"""The whole Placement data model as SQLAlchemy Core tables: upstream
Placement's tables, then this server's additions."""

from oslo_utils import timeutils
import sqlalchemy as sa

# Upstream Placement 16.0.0's schema (its alembic head a082b8bb98d0) with
# its own names for every constraint and index, so that upstream can run
# on a database this server created, and this server on one upstream
# created (db/migration.py). Constraints upstream leaves unnamed are left
# unnamed here too: the database names them the same way for both.
metadata = sa.MetaData()

# Custom resource classes get ids from here up; standard ones below it.
CUSTOM_RC_MIN_ID = 10000


def utcnow():
    """Naive UTC, as times are stored (and handlers/common.now answers)."""
    return timeutils.utcnow()


def _timestamps():
    return (sa.Column('created_at', sa.DateTime, default=utcnow),
            sa.Column('updated_at', sa.DateTime, onupdate=utcnow))


def _table(name, *items):
    """A table whose columns follow the timestamps, as upstream's do."""
    return sa.Table(name, metadata, *_timestamps(), *items)


resource_classes = _table(
    'resource_classes',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.String(255), nullable=False),
    sa.UniqueConstraint('name', name='uniq_resource_classes0name'))

resource_providers = _table(
    'resource_providers',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False),
    sa.Column('name', sa.Unicode(200)),
    # Nullable as upstream's; every writer sets it.
    sa.Column('generation', sa.Integer, default=0),
    sa.Column('root_provider_id', sa.Integer),
    sa.Column('parent_provider_id', sa.Integer),
    # In upstream's order: MySQL numbers unnamed foreign keys
    # (<table>_ibfk_N) in the order CREATE TABLE lists them.
    sa.ForeignKeyConstraint(['parent_provider_id'],
                            ['resource_providers.id']),
    sa.ForeignKeyConstraint(['root_provider_id'], ['resource_providers.id']),
    sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
    sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
    sa.Index('resource_providers_parent_provider_id_idx',
             'parent_provider_id'),
    sa.Index('resource_providers_root_provider_id_idx', 'root_provider_id'))

inventories = _table(
    'inventories',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, nullable=False),
    sa.Column('resource_class_id', sa.Integer, nullable=False),
    sa.Column('total', sa.Integer, nullable=False),
    sa.Column('reserved', sa.Integer, nullable=False),
    sa.Column('min_unit', sa.Integer, nullable=False),
    sa.Column('max_unit', sa.Integer, nullable=False),
    sa.Column('step_size', sa.Integer, nullable=False),
    sa.Column('allocation_ratio', sa.Float, nullable=False),
    sa.UniqueConstraint(
        'resource_provider_id', 'resource_class_id',
        name='uniq_inventories0resource_provider_resource_class'),
    sa.Index('inventories_resource_class_id_idx', 'resource_class_id'))

# The (provider, class, used) index makes a provider's usage of a class
# an index-only sum, for the capacity checks.
allocations = _table(
    'allocations',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, nullable=False),
    sa.Column('consumer_id', sa.String(36), nullable=False),
    sa.Column('resource_class_id', sa.Integer, nullable=False),
    sa.Column('used', sa.Integer, nullable=False),
    sa.Index('allocations_resource_provider_class_used_idx',
             'resource_provider_id', 'resource_class_id', 'used'),
    sa.Index('allocations_resource_class_id_idx', 'resource_class_id'),
    sa.Index('allocations_consumer_id_idx', 'consumer_id'))

placement_aggregates = _table(
    'placement_aggregates',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36)),
    sa.UniqueConstraint('uuid', name='uniq_placement_aggregates0uuid'))

resource_provider_aggregates = _table(
    'resource_provider_aggregates',
    sa.Column('resource_provider_id', sa.Integer, primary_key=True),
    sa.Column('aggregate_id', sa.Integer, primary_key=True),
    sa.Index('resource_provider_aggregates_aggregate_id_idx',
             'aggregate_id'))

traits = _table(
    'traits',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.Unicode(255), nullable=False),
    sa.UniqueConstraint('name', name='uniq_traits0name'))

resource_provider_traits = _table(
    'resource_provider_traits',
    sa.Column('trait_id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, primary_key=True),
    sa.ForeignKeyConstraint(['resource_provider_id'],
                            ['resource_providers.id']),
    sa.ForeignKeyConstraint(['trait_id'], ['traits.id']),
    sa.Index('resource_provider_traits_resource_provider_trait_idx',
             'resource_provider_id', 'trait_id'))

projects = _table(
    'projects',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('external_id', sa.String(255), nullable=False),
    sa.UniqueConstraint('external_id', name='uniq_projects0external_id'))

users = _table(
    'users',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('external_id', sa.String(255), nullable=False),
    sa.UniqueConstraint('external_id', name='uniq_users0external_id'))

consumer_types = _table(
    'consumer_types',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.Unicode(255), nullable=False),
    sa.UniqueConstraint('name', name='uniq_consumer_types0name'))

consumers = _table(
    'consumers',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False),
    sa.Column('project_id', sa.Integer, nullable=False),
    sa.Column('user_id', sa.Integer, nullable=False),
    sa.Column('generation', sa.Integer, nullable=False, default=0,
              server_default=sa.text('0')),
    sa.Column('consumer_type_id', sa.Integer,
              sa.ForeignKey('consumer_types.id',
                            name='consumers_consumer_type_id_fkey')),
    sa.UniqueConstraint('uuid', name='uniq_consumers0uuid'),
    sa.Index('consumers_project_id_user_id_uuid_idx',
             'project_id', 'user_id', 'uuid'),
    sa.Index('consumers_project_id_uuid_idx', 'project_id', 'uuid'),
    sa.Index('consumers_consumer_type_id_idx', 'consumer_type_id'))

# Upstream's tables, in an order that creates referenced tables first.
UPSTREAM_TABLES = (
    resource_classes, resource_providers, inventories, allocations,
    placement_aggregates, resource_provider_aggregates, traits,
    resource_provider_traits, projects, users, consumer_types, consumers)

# Upstream's alembic version table, as alembic creates it.
upstream_version = sa.Table(
    'alembic_version', metadata,
    sa.Column('version_num', sa.String(32), nullable=False),
    sa.PrimaryKeyConstraint('version_num', name='alembic_version_pkc'))

# What this server adds, created by its own migrations
# (db/migrations, history in the osc_placement_version table) and kept
# right for every writer by database triggers
# (db/migrations/versions/1001_derived_data.py).

# sum(allocations.used) per provider and class, for the candidate
# search, which reads thousands at once. 64 bits: the sum of 32-bit
# amounts may pass 2**31 when allocation_ratio is above 1.
# ``changed``: on PostgreSQL the id of the transaction that last changed
# the total, indexed there (db/migrations/versions/1002_usage_changes.py),
# so that a worker reads only the totals changed since its last read; 0
# elsewhere.
usage_totals = sa.Table(
    'usage_totals', metadata,
    sa.Column('resource_provider_id', sa.Integer, primary_key=True,
              autoincrement=False),
    sa.Column('resource_class_id', sa.Integer, primary_key=True,
              autoincrement=False),
    sa.Column('used', sa.BigInteger, nullable=False),
    sa.Column('changed', sa.BigInteger, nullable=False, server_default='0'))

# One row: the structure stamp, a token that changes in every transaction
# that changes what the candidate search reads besides usage (providers,
# their trees, inventories, traits, aggregates, class names). A worker may
# keep that structure between requests while the stamp it read it under
# stands; see db/structure.py. Random rather than a counter, so that a
# database re-created or restored never repeats one a worker has seen.
provider_structure = sa.Table(
    'provider_structure', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('version', sa.String(64), nullable=False))
