# SPDX-License-Identifier: Apache-2.0
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
import contextlib
import datetime
import itertools
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


# Each table's columns, in the order its row functions give values.
PROVIDER_COLUMNS = ('id', 'uuid', 'name', 'generation', 'parent_provider_id',
                    'root_provider_id', 'created_at')
INVENTORY_COLUMNS = ('resource_provider_id', 'resource_class_id', 'total',
                     'reserved', 'min_unit', 'max_unit', 'step_size',
                     'allocation_ratio', 'created_at')
PEOPLE_COLUMNS = ('id', 'external_id', 'created_at')
CONSUMER_COLUMNS = ('uuid', 'generation', 'project_id', 'user_id',
                    'consumer_type_id', 'created_at')
ALLOCATION_COLUMNS = ('resource_provider_id', 'consumer_id',
                      'resource_class_id', 'used', 'created_at')


# Rows are generators of tuples: at 100,000 nodes a list of dicts of the
# 5.5 million allocation rows alone would take gigabytes.
def provider_rows(ordered, rp_ids, bumps, now):
    for spec in ordered:
        yield (rp_ids[spec['uuid']], spec['uuid'], spec['name'],
               bumps[spec['uuid']], rp_ids.get(spec.get('parent')),
               rp_ids[spec.get('parent') or spec['uuid']], now)


def inventory_rows(ordered, rp_ids, class_ids, now):
    for spec in ordered:
        for rc, inv in spec['inventories'].items():
            yield (rp_ids[spec['uuid']], class_ids[rc], inv['total'], 0, 1,
                   MAX_INT, 1, inv.get('allocation_ratio', 1.0), now)


def link_rows(ordered, rp_ids, key, ids, now):
    """Rows linking each provider to its traits or aggregates."""
    for spec in ordered:
        for value in spec.get(key, ()):
            yield rp_ids[spec['uuid']], ids[value], now


def people_rows(ids, now):
    return ((i, value, now) for value, i in ids.items())


def consumer_rows(consumers, project_ids, user_ids, now):
    for consumer, body in consumers:
        yield (consumer, 1, project_ids[body['project_id']],
               user_ids[body['user_id']], 1, now)


def allocation_rows(consumers, rp_ids, class_ids, now):
    for consumer, body in consumers:
        for rp, item in body['allocations'].items():
            for rc, used in item['resources'].items():
                yield rp_ids[rp], consumer, class_ids[rc], used, now


# Rows per INSERT statement where COPY is not used: on MySQL and SQLite
# the triggers run per row anyway, but one statement per row would cost
# a round trip per row.
CHUNK = 5000


def insert(conn, table, columns, rows):
    """Write ``rows`` (tuples in ``columns``' order) into ``table``: one
    COPY on PostgreSQL, multi-row INSERTs elsewhere. Either way the
    database's triggers run, as for any writer."""
    if conn.dialect.name == 'postgresql':
        copy_rows(conn, table, columns, rows)
    else:
        insert_in_chunks(conn, table, columns, rows)


def copy_rows(conn, table, columns, rows):
    """psycopg 3's COPY through the DBAPI connection of ``conn``, so the
    rows land in its transaction; PostgreSQL takes them much faster than
    multi-row INSERTs, which matters for the millions of allocation rows
    of the largest clouds."""
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        with cursor.copy('COPY %s (%s) FROM STDIN' % (
                table, ', '.join(columns))) as copy:
            for row in rows:
                copy.write_row(row)
    finally:
        cursor.close()


def insert_in_chunks(conn, table, columns, rows):
    target = sa.table(table, *(sa.column(name) for name in columns))
    rows = iter(rows)
    while True:
        chunk = [dict(zip(columns, row))
                 for row in itertools.islice(rows, CHUNK)]
        if not chunk:
            return
        conn.execute(target.insert().values(chunk))


def names_to_ids(conn, table):
    return dict(conn.execute(sa.text(
        'SELECT name, id FROM %s' % table)).all())


class Stopwatch:
    """Seconds per named step, printed by ``main`` (rows per second of
    the big tables, and the commit, where PostgreSQL runs the deferred
    structure-stamp triggers of every row)."""

    def __init__(self):
        self.seconds = {}

    @contextlib.contextmanager
    def step(self, name):
        start = time.monotonic()
        yield
        self.seconds[name] = time.monotonic() - start


def write(engine, specs, batches, stopwatch=None):
    """Every row of the cloud, in one transaction."""
    stopwatch = stopwatch or Stopwatch()
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    ordered = creation_order(specs)
    rp_ids = numbered(spec['uuid'] for spec in ordered)
    aggregate_ids = numbered(agg for spec in ordered
                             for agg in spec.get('aggregates', ()))
    consumers = [item for batch in batches for item in batch.items()]
    project_ids = numbered(body['project_id'] for _, body in consumers)
    user_ids = numbered(body['user_id'] for _, body in consumers)
    with engine.connect() as conn:
        transaction = conn.begin()
        class_ids = names_to_ids(conn, 'resource_classes')
        insert(conn, 'traits', ('name', 'created_at'), [(MARKER_TRAIT, now)])
        trait_ids = names_to_ids(conn, 'traits')
        with stopwatch.step('providers'):
            # Roots come first: the self and parent references are
            # foreign keys.
            insert(conn, 'resource_providers', PROVIDER_COLUMNS,
                   provider_rows(ordered, rp_ids,
                                 generations(specs, batches), now))
            insert(conn, 'inventories', INVENTORY_COLUMNS,
                   inventory_rows(ordered, rp_ids, class_ids, now))
            insert(conn, 'placement_aggregates', ('id', 'uuid', 'created_at'),
                   ((i, agg, now) for agg, i in aggregate_ids.items()))
            insert(conn, 'resource_provider_traits',
                   ('resource_provider_id', 'trait_id', 'created_at'),
                   link_rows(ordered, rp_ids, 'traits', trait_ids, now))
            insert(conn, 'resource_provider_aggregates',
                   ('resource_provider_id', 'aggregate_id', 'created_at'),
                   link_rows(ordered, rp_ids, 'aggregates', aggregate_ids,
                             now))
        with stopwatch.step('consumers'):
            insert(conn, 'projects', PEOPLE_COLUMNS,
                   people_rows(project_ids, now))
            insert(conn, 'users', PEOPLE_COLUMNS, people_rows(user_ids, now))
            insert(conn, 'consumer_types', ('id', 'name', 'created_at'),
                   [(1, CONSUMER_TYPE, now)])
            insert(conn, 'consumers', CONSUMER_COLUMNS,
                   consumer_rows(consumers, project_ids, user_ids, now))
        with stopwatch.step('allocations'):
            # The database's triggers sum the usage and set a new
            # structure stamp, as for any writer.
            insert(conn, 'allocations', ALLOCATION_COLUMNS,
                   allocation_rows(consumers, rp_ids, class_ids, now))
        with stopwatch.step('commit'):
            transaction.commit()
    if engine.dialect.name == 'postgresql':
        with stopwatch.step('vacuum analyze'):
            catch_up_postgresql(engine)
    return stopwatch


def catch_up_postgresql(engine):
    """Explicit ids leave PostgreSQL's sequences behind; and the planner
    wants fresh statistics and the visibility map (index-only scans),
    as autovacuum would give shortly after so many inserts."""
    with engine.begin() as conn:
        for table in EXPLICIT_ID_TABLES:
            conn.execute(sa.text(
                "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                "max(id)) FROM %s" % (table, table)))
    with engine.connect() as conn:
        conn.execution_options(isolation_level='AUTOCOMMIT').execute(
            sa.text('VACUUM ANALYZE'))


def load(connection, nodes, seed=1):
    """Schema, then the cloud of ``nodes`` compute nodes, into the empty
    database at ``connection``: ``(cloud, stopwatch)``."""
    stopwatch = Stopwatch()
    with stopwatch.step('schema'):
        create_schema(connection)
    engine = sa.create_engine(connection)
    try:
        with stopwatch.step('build'):
            cloud, specs, batches = build(nodes, seed)
        with stopwatch.step('total write'):
            write(engine, specs, batches, stopwatch)
    finally:
        engine.dispose()
    return cloud, stopwatch


def summary(cloud, stopwatch):
    """What the loader did, saying it is the bulk loader, and how fast."""
    seconds = stopwatch.seconds
    lines = ['bulk SQL loader (benchmark set-up, not over HTTP): %d '
             'providers, %d consumers, %d allocation rows in %.1f s' % (
                 cloud.providers, cloud.consumers, cloud.allocation_rows,
                 sum(seconds[step] for step in ('schema', 'build',
                                                'total write')))]
    lines.append('  ' + ', '.join('%s %.1f s' % item
                                  for item in seconds.items()))
    lines.append('  allocation rows %.0f/s' % (
        cloud.allocation_rows / max(seconds['allocations'], 1e-9)))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='an empty database (its schema is created '
                             'by the server\'s db sync)')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--state', required=True)
    args = parser.parse_args(argv)
    cloud, stopwatch = load(args.database_connection, args.nodes, args.seed)
    candidates.save_cloud(args.state, cloud)
    for line in summary(cloud, stopwatch):
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
