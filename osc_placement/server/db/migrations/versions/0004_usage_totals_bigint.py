"""usage_totals.used as a 64-bit integer.

A provider's summed usage may pass 2**31 - 1: an inventory of total
2147483647 with allocation_ratio 2.0 holds two consumers of 2147483647.
Upstream sums the allocations at read time and never stores the sum; a
32-bit column made the second such write fail on PostgreSQL and MariaDB.

Revision ID: 0004_usage_totals_bigint
Revises: 0003_provider_structure
Create Date: 2026-12-02 03:15:00
"""

from alembic import op
import sqlalchemy as sa


revision = '0004_usage_totals_bigint'
down_revision = '0003_provider_structure'
branch_labels = None
depends_on = None


def upgrade():
    # Batch mode: SQLite alters a column by copying the table.
    with op.batch_alter_table('usage_totals') as batch:
        batch.alter_column('used', type_=sa.BigInteger(),
                           existing_type=sa.Integer(),
                           existing_nullable=False)


def downgrade():
    with op.batch_alter_table('usage_totals') as batch:
        batch.alter_column('used', type_=sa.Integer(),
                           existing_type=sa.BigInteger(),
                           existing_nullable=False)
