"""A version token for the providers' structure, for the candidate search.

``provider_structure`` holds one row whose ``version`` changes in every
transaction that changes providers, inventories, traits, aggregates or
class names (db/structure.py), so a worker can tell whether the
structure it read for an earlier request still stands.

Revision ID: 0003_provider_structure
Revises: 0002_usage_totals
Create Date: 2026-11-30 15:00:00
"""

import uuid

from alembic import op
import sqlalchemy as sa


revision = '0003_provider_structure'
down_revision = '0002_usage_totals'
branch_labels = None
depends_on = None


def upgrade():
    table = op.create_table(
        'provider_structure',
        sa.Column('id', sa.Integer(), nullable=False, autoincrement=False),
        sa.Column('version', sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_provider_structure')))
    op.bulk_insert(table, [{'id': 1, 'version': uuid.uuid4().hex}])


def downgrade():
    op.drop_table('provider_structure')
