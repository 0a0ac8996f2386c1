"""Usage totals per provider and class, for the candidate search.

``usage_totals`` holds sum(allocations.used) per (provider, class); every
transaction that writes allocations keeps it in step. Filled here from the
allocations already recorded.

Revision ID: 0002_usage_totals
Revises: 0001_initial
Create Date: 2026-11-30 05:00:00
"""

from alembic import op
import sqlalchemy as sa


revision = '0002_usage_totals'
down_revision = '0001_initial'
branch_labels = None
depends_on = None


def upgrade():
    totals = op.create_table(
        'usage_totals',
        sa.Column('resource_provider_id', sa.Integer(), nullable=False,
                  autoincrement=False),
        sa.Column('resource_class_id', sa.Integer(), nullable=False,
                  autoincrement=False),
        sa.Column('used', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('resource_provider_id', 'resource_class_id',
                                name=op.f('pk_usage_totals')))
    allocations = sa.table(
        'allocations', sa.column('resource_provider_id', sa.Integer),
        sa.column('resource_class_id', sa.Integer),
        sa.column('used', sa.Integer))
    sums = (sa.select(allocations.c.resource_provider_id,
                      allocations.c.resource_class_id,
                      sa.cast(sa.func.sum(allocations.c.used), sa.Integer))
            .group_by(allocations.c.resource_provider_id,
                      allocations.c.resource_class_id))
    op.execute(totals.insert().from_select(
        ['resource_provider_id', 'resource_class_id', 'used'], sums))


def downgrade():
    op.drop_table('usage_totals')
