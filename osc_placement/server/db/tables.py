"""The whole Placement data model as SQLAlchemy Core tables.

Every table of the API's data has ``created_at``/``updated_at`` (for
``last-modified``). Allocations are indexed by (provider, class, used) so
usage per provider and class is an index-only sum for capacity checks;
``usage_totals`` keeps those sums, written in the transaction that changes
the allocations, for the candidate search, which reads thousands at once.
"""

from oslo_utils import timeutils
import sqlalchemy as sa

metadata = sa.MetaData(naming_convention={
    'ix': 'ix_%(table_name)s_%(column_0_N_name)s',
    'uq': 'uq_%(table_name)s_%(column_0_N_name)s',
    'fk': 'fk_%(table_name)s_%(column_0_name)s',
    'pk': 'pk_%(table_name)s',
})

# Custom resource classes get ids from here up; standard ones below it.
CUSTOM_RC_MIN_ID = 10000


def utcnow():
    """Naive UTC, the stored times' convention: the same clock handlers
    use for answers with no stored time (handlers/common.now)."""
    return timeutils.utcnow()


def _timestamps():
    return (sa.Column('created_at', sa.DateTime, default=utcnow),
            sa.Column('updated_at', sa.DateTime, onupdate=utcnow))


resource_classes = sa.Table(
    'resource_classes', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('name', sa.String(255), nullable=False, unique=True),
    *_timestamps())

resource_providers = sa.Table(
    'resource_providers', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('name', sa.Unicode(200), unique=True),
    sa.Column('generation', sa.Integer, nullable=False, default=0),
    sa.Column('root_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), index=True),
    sa.Column('parent_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), index=True),
    *_timestamps())

inventories = sa.Table(
    'inventories', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), nullable=False),
    sa.Column('resource_class_id', sa.Integer, nullable=False, index=True),
    sa.Column('total', sa.Integer, nullable=False),
    sa.Column('reserved', sa.Integer, nullable=False),
    sa.Column('min_unit', sa.Integer, nullable=False),
    sa.Column('max_unit', sa.Integer, nullable=False),
    sa.Column('step_size', sa.Integer, nullable=False),
    sa.Column('allocation_ratio', sa.Float, nullable=False),
    sa.UniqueConstraint('resource_provider_id', 'resource_class_id'),
    *_timestamps())

allocations = sa.Table(
    'allocations', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('resource_provider_id', sa.Integer, nullable=False),
    sa.Column('consumer_id', sa.String(36), nullable=False, index=True),
    sa.Column('resource_class_id', sa.Integer, nullable=False, index=True),
    sa.Column('used', sa.Integer, nullable=False),
    sa.Index('ix_allocations_rp_rc_used', 'resource_provider_id',
             'resource_class_id', 'used'),
    *_timestamps())

# Derived from allocations, never shown by the API: the sum of ``used``
# per provider and class, kept by objects/usage_totals.py in every
# transaction that writes allocations. 64 bits: the sum of 32-bit
# amounts may pass 2**31 when allocation_ratio is above 1.
usage_totals = sa.Table(
    'usage_totals', metadata,
    sa.Column('resource_provider_id', sa.Integer, primary_key=True,
              autoincrement=False),
    sa.Column('resource_class_id', sa.Integer, primary_key=True,
              autoincrement=False),
    sa.Column('used', sa.BigInteger, nullable=False))

# One row: the structure stamp, a token that changes in every transaction
# that changes what the candidate search reads besides usage (providers,
# their trees, inventories, traits, aggregates, class names). A worker may
# keep that structure between requests while the stamp it read it under
# stands; see db/structure.py. A random token rather than a counter, so
# that a database re-created or restored never repeats one a worker has
# seen. The column is named ``version`` for history's sake.
provider_structure = sa.Table(
    'provider_structure', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('version', sa.String(32), nullable=False))

placement_aggregates = sa.Table(
    'placement_aggregates', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    *_timestamps())

resource_provider_aggregates = sa.Table(
    'resource_provider_aggregates', metadata,
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), primary_key=True),
    sa.Column('aggregate_id', sa.Integer, primary_key=True, index=True),
    *_timestamps())

traits = sa.Table(
    'traits', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.Unicode(255), nullable=False, unique=True),
    *_timestamps())

resource_provider_traits = sa.Table(
    'resource_provider_traits', metadata,
    sa.Column('trait_id', sa.Integer, sa.ForeignKey('traits.id'),
              primary_key=True),
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), primary_key=True),
    sa.Index('ix_resource_provider_traits_rp_trait',
             'resource_provider_id', 'trait_id'),
    *_timestamps())

projects = sa.Table(
    'projects', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('external_id', sa.String(255), nullable=False, unique=True),
    *_timestamps())

users = sa.Table(
    'users', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('external_id', sa.String(255), nullable=False, unique=True),
    *_timestamps())

consumer_types = sa.Table(
    'consumer_types', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('name', sa.Unicode(255), nullable=False, unique=True),
    *_timestamps())

consumers = sa.Table(
    'consumers', metadata,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('project_id', sa.Integer, nullable=False),
    sa.Column('user_id', sa.Integer, nullable=False),
    sa.Column('generation', sa.Integer, nullable=False, default=0),
    sa.Column('consumer_type_id', sa.Integer,
              sa.ForeignKey('consumer_types.id'), index=True),
    sa.Index('ix_consumers_project_uuid', 'project_id', 'uuid'),
    sa.Index('ix_consumers_project_user_uuid', 'project_id', 'user_id',
             'uuid'),
    *_timestamps())
