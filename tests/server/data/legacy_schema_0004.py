# SPDX-License-Identifier: Apache-2.0
"""This server's schema before it adopted upstream's: the tables its own
migrations 0001_initial to 0004_usage_totals_bigint left, frozen here as
test data so that tests can build such a database after the migrations
themselves are gone (db/legacy_schema.py converts it).

Its marks, against upstream's schema: names from the naming convention
below; foreign keys from inventories and resource_provider_aggregates to
resource_providers; resource_providers.generation and
placement_aggregates.uuid NOT NULL; no server default on
consumers.generation; resource_classes.id without autoincrement; the
timestamps after the other columns; usage_totals and provider_structure
as the old migrations made them; alembic_version at
``0004_usage_totals_bigint``.
"""

import sqlalchemy as sa

REVISION = '0004_usage_totals_bigint'

metadata = sa.MetaData(naming_convention={
    'ix': 'ix_%(table_name)s_%(column_0_N_name)s',
    'uq': 'uq_%(table_name)s_%(column_0_N_name)s',
    'fk': 'fk_%(table_name)s_%(column_0_name)s',
    'pk': 'pk_%(table_name)s',
})


def _stamped(name, *items):
    """A table with the timestamps last, where the old schema had them."""
    return sa.Table(name, metadata, *items,
                    sa.Column('created_at', sa.DateTime),
                    sa.Column('updated_at', sa.DateTime))


def _rp_fk():
    return sa.ForeignKey('resource_providers.id')


resource_classes = _stamped(
    'resource_classes',
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('name', sa.String(255), nullable=False, unique=True))

resource_providers = _stamped(
    'resource_providers',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('name', sa.Unicode(200), unique=True),
    sa.Column('generation', sa.Integer, nullable=False),
    sa.Column('root_provider_id', sa.Integer, _rp_fk(), index=True),
    sa.Column('parent_provider_id', sa.Integer, _rp_fk(), index=True))

inventories = _stamped(
    'inventories',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, _rp_fk(), nullable=False),
    sa.Column('resource_class_id', sa.Integer, nullable=False, index=True),
    sa.Column('total', sa.Integer, nullable=False),
    sa.Column('reserved', sa.Integer, nullable=False),
    sa.Column('min_unit', sa.Integer, nullable=False),
    sa.Column('max_unit', sa.Integer, nullable=False),
    sa.Column('step_size', sa.Integer, nullable=False),
    sa.Column('allocation_ratio', sa.Float, nullable=False),
    sa.UniqueConstraint('resource_provider_id', 'resource_class_id'))

allocations = _stamped(
    'allocations',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, nullable=False),
    sa.Column('consumer_id', sa.String(36), nullable=False, index=True),
    sa.Column('resource_class_id', sa.Integer, nullable=False, index=True),
    sa.Column('used', sa.Integer, nullable=False),
    sa.Index('ix_allocations_rp_rc_used', 'resource_provider_id',
             'resource_class_id', 'used'))

usage_totals = sa.Table(
    'usage_totals', metadata,
    sa.Column('resource_provider_id', sa.Integer, primary_key=True,
              autoincrement=False),
    sa.Column('resource_class_id', sa.Integer, primary_key=True,
              autoincrement=False),
    sa.Column('used', sa.BigInteger, nullable=False))

provider_structure = sa.Table(
    'provider_structure', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('version', sa.String(32), nullable=False))

placement_aggregates = _stamped(
    'placement_aggregates',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True))

resource_provider_aggregates = _stamped(
    'resource_provider_aggregates',
    sa.Column('resource_provider_id', sa.Integer, _rp_fk(),
              primary_key=True),
    sa.Column('aggregate_id', sa.Integer, primary_key=True, index=True))

traits = _stamped(
    'traits',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.Unicode(255), nullable=False, unique=True))

resource_provider_traits = _stamped(
    'resource_provider_traits',
    sa.Column('trait_id', sa.Integer, sa.ForeignKey('traits.id'),
              primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, _rp_fk(),
              primary_key=True),
    sa.Index('ix_resource_provider_traits_rp_trait',
             'resource_provider_id', 'trait_id'))

projects = _stamped(
    'projects',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('external_id', sa.String(255), nullable=False, unique=True))

users = _stamped(
    'users',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('external_id', sa.String(255), nullable=False, unique=True))

consumer_types = _stamped(
    'consumer_types',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.Unicode(255), nullable=False, unique=True))

consumers = _stamped(
    'consumers',
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('project_id', sa.Integer, nullable=False),
    sa.Column('user_id', sa.Integer, nullable=False),
    sa.Column('generation', sa.Integer, nullable=False),
    sa.Column('consumer_type_id', sa.Integer,
              sa.ForeignKey('consumer_types.id'), index=True),
    sa.Index('ix_consumers_project_uuid', 'project_id', 'uuid'),
    sa.Index('ix_consumers_project_user_uuid', 'project_id', 'user_id',
             'uuid'))

# As alembic created it, under alembic's own constraint name.
alembic_version = sa.Table(
    'alembic_version', metadata,
    sa.Column('version_num', sa.String(32), nullable=False),
    sa.PrimaryKeyConstraint('version_num', name='alembic_version_pkc'))


def create(conn):
    """The legacy schema, empty, at its last revision."""
    metadata.create_all(conn)
    conn.execute(alembic_version.insert().values(version_num=REVISION))
