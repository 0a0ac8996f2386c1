"""Bulk SQL loader: benchmarks/cloud.py's cloud written straight into an
empty database, for benchmark set-up only.

Populating over HTTP (``python -m benchmarks.candidates``) takes long for
clouds of thousands of nodes; this writes the same cloud with plain SQL in
seconds. The same seed gives the same providers, uuids, traits,
aggregates, consumers and allocations, created in the order the HTTP
population creates them, so a server on this database answers as one
populated over HTTP (tests/server/test_sql_cloud.py checks it). What is
then measured goes over HTTP, as every benchmark does.

The schema comes from the server's own command (``python -m
osc_placement.server db sync``); nothing else of the server is used, so
the rows written here are the loader's own SQL against that schema.

    python -m benchmarks.sql_cloud --database-connection \\
        postgresql+psycopg://postgres@127.0.0.1/ours_bench --nodes 1000 \\
        --state /tmp/ours1000.json
    python -m benchmarks.candidates --url http://127.0.0.1:8779 \\
        --no-populate --state /tmp/ours1000.json --loop-seconds 0
"""

import argparse
import collections
import datetime
import random
import subprocess
import sys
import time

import sqlalchemy as sa

from benchmarks import candidates
from benchmarks import cloud as cloud_builder

MAX_INT = 2 ** 31 - 1
# The trait the HTTP population creates before anything else.
MARKER_TRAIT = 'CUSTOM_BENCH_MARKER'
CONSUMER_TYPE = 'INSTANCE'
# The tables given explicit ids here, whose sequences PostgreSQL must be
# told about.
EXPLICIT_ID_TABLES = ('resource_providers', 'placement_aggregates',
                      'projects', 'users', 'consumer_types')


def build(nodes, seed):
    """The provider specs and allocation batches cloud.build would send."""
    rng = random.Random(seed)
    cloud = cloud_builder.Cloud()
    specs = cloud_builder._provider_specs(nodes, rng, cloud)
    cloud.providers = len(specs)
    batches = cloud_builder._allocation_batches(specs, rng, cloud)
    return cloud, specs, batches


def create_schema(connection):
    """The schema and standard classes and traits, by the server's own
    ``db sync``."""
    subprocess.run([sys.executable, '-m', 'osc_placement.server',
                    '--database-connection', connection, 'db', 'sync'],
                   check=True)


def creation_order(specs):
    """Providers as the HTTP population creates them: roots, then
    children."""
    return ([spec for spec in specs if not spec.get('parent')]
            + [spec for spec in specs if spec.get('parent')])


def numbered(values):
    """{value: id}, ids from 1 in order of first appearance."""
    ids = {}
    for value in values:
        ids.setdefault(value, len(ids) + 1)
    return ids


def generations(specs, batches):
    """Each provider's generation after the HTTP population: one bump
    per inventory, trait and aggregate write, and per allocation request
    that touches it."""
    counts = collections.Counter()
    for spec in specs:
        counts[spec['uuid']] += 1 + bool(spec.get('traits')) + bool(
            spec.get('aggregates'))
    for batch in batches:
        counts.update({rp for body in batch.values()
                       for rp in body['allocations']})
    return counts


def provider_rows(ordered, rp_ids, bumps, now):
    return [{'id': rp_ids[spec['uuid']], 'uuid': spec['uuid'],
             'name': spec['name'], 'generation': bumps[spec['uuid']],
             'parent_provider_id': rp_ids.get(spec.get('parent')),
             'root_provider_id': rp_ids[spec.get('parent') or spec['uuid']],
             'created_at': now}
            for spec in ordered]


def inventory_rows(ordered, rp_ids, class_ids, now):
    return [{'resource_provider_id': rp_ids[spec['uuid']],
             'resource_class_id': class_ids[rc], 'total': inv['total'],
             'reserved': 0, 'min_unit': 1, 'max_unit': MAX_INT,
             'step_size': 1,
             'allocation_ratio': inv.get('allocation_ratio', 1.0),
             'created_at': now}
            for spec in ordered for rc, inv in spec['inventories'].items()]


def link_rows(ordered, rp_ids, key, ids, column, now):
    """Rows linking each provider to its traits or aggregates."""
    return [{'resource_provider_id': rp_ids[spec['uuid']],
             column: ids[value], 'created_at': now}
            for spec in ordered for value in spec.get(key, ())]


def people_rows(ids, now):
    return [{'id': i, 'external_id': value, 'created_at': now}
            for value, i in ids.items()]


def consumer_rows(consumers, project_ids, user_ids, now):
    return [{'uuid': consumer, 'generation': 1,
             'project_id': project_ids[body['project_id']],
             'user_id': user_ids[body['user_id']],
             'consumer_type_id': 1, 'created_at': now}
            for consumer, body in consumers]


def allocation_rows(consumers, rp_ids, class_ids, now):
    return [{'resource_provider_id': rp_ids[rp], 'consumer_id': consumer,
             'resource_class_id': class_ids[rc], 'used': used,
             'created_at': now}
            for consumer, body in consumers
            for rp, item in body['allocations'].items()
            for rc, used in item['resources'].items()]


# Rows per INSERT statement: on PostgreSQL the usage and stamp triggers
# run per statement, so one statement per row would cost a trigger run
# per row.
CHUNK = 5000


def insert(conn, table, rows):
    """Multi-row INSERTs of ``rows`` (dicts with the same keys)."""
    if rows:
        target = sa.table(table, *(sa.column(name) for name in rows[0]))
        for start in range(0, len(rows), CHUNK):
            conn.execute(target.insert().values(rows[start:start + CHUNK]))


def names_to_ids(conn, table):
    return dict(conn.execute(sa.text(
        'SELECT name, id FROM %s' % table)).all())


def write(engine, specs, batches):
    """Every row of the cloud, in one transaction."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    ordered = creation_order(specs)
    rp_ids = numbered(spec['uuid'] for spec in ordered)
    aggregate_ids = numbered(agg for spec in ordered
                             for agg in spec.get('aggregates', ()))
    consumers = [item for batch in batches for item in batch.items()]
    project_ids = numbered(body['project_id'] for _, body in consumers)
    user_ids = numbered(body['user_id'] for _, body in consumers)
    with engine.begin() as conn:
        class_ids = names_to_ids(conn, 'resource_classes')
        insert(conn, 'traits', [{'name': MARKER_TRAIT, 'created_at': now}])
        trait_ids = names_to_ids(conn, 'traits')
        # Roots come first: the self and parent references are foreign
        # keys.
        insert(conn, 'resource_providers', provider_rows(
            ordered, rp_ids, generations(specs, batches), now))
        insert(conn, 'inventories',
               inventory_rows(ordered, rp_ids, class_ids, now))
        insert(conn, 'placement_aggregates', [
            {'id': i, 'uuid': agg, 'created_at': now}
            for agg, i in aggregate_ids.items()])
        insert(conn, 'resource_provider_traits', link_rows(
            ordered, rp_ids, 'traits', trait_ids, 'trait_id', now))
        insert(conn, 'resource_provider_aggregates', link_rows(
            ordered, rp_ids, 'aggregates', aggregate_ids, 'aggregate_id',
            now))
        insert(conn, 'projects', people_rows(project_ids, now))
        insert(conn, 'users', people_rows(user_ids, now))
        insert(conn, 'consumer_types',
               [{'id': 1, 'name': CONSUMER_TYPE, 'created_at': now}])
        insert(conn, 'consumers',
               consumer_rows(consumers, project_ids, user_ids, now))
        allocations = allocation_rows(consumers, rp_ids, class_ids, now)
        # The database's triggers sum the usage and set a new structure
        # stamp, as for any writer.
        insert(conn, 'allocations', allocations)
    if engine.dialect.name == 'postgresql':
        catch_up_postgresql(engine)


def catch_up_postgresql(engine):
    """Explicit ids leave PostgreSQL's sequences behind; and the planner
    wants fresh statistics, as autovacuum would give shortly."""
    with engine.begin() as conn:
        for table in EXPLICIT_ID_TABLES:
            conn.execute(sa.text(
                "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                "max(id)) FROM %s" % (table, table)))
    with engine.connect() as conn:
        conn.execution_options(isolation_level='AUTOCOMMIT').execute(
            sa.text('ANALYZE'))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='an empty database (its schema is created '
                             'by the server\'s db sync)')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--state', required=True)
    args = parser.parse_args(argv)
    create_schema(args.database_connection)
    engine = sa.create_engine(args.database_connection)
    start = time.monotonic()
    try:
        cloud, specs, batches = build(args.nodes, args.seed)
        write(engine, specs, batches)
    finally:
        engine.dispose()
    candidates.save_cloud(args.state, cloud)
    print('bulk SQL loader (benchmark set-up, not over HTTP): %d providers, '
          '%d consumers, %d allocation rows in %.1f s' % (
              cloud.providers, cloud.consumers, cloud.allocation_rows,
              time.monotonic() - start))
    return 0


if __name__ == '__main__':
    sys.exit(main())
