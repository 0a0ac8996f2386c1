#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time the Nova audits on a big cloud: consumer audit and stale list.

For each ``--nodes`` size it loads benchmarks/cloud.py's cloud into
PostgreSQL with the bulk loader (``benchmarks.sql_cloud``; set-up only),
starts the embedded server on it with its defaults, seeds problems
through Placement's HTTP API, and serves a stub of Nova's compute API
(``benchmarks.nova_stub``) made from the cloud: every consumer is a live
server on the compute node (hypervisor) of the root provider it holds,
except the seeded problems:

* orphaned consumers: no server or migration in Nova;
* consumers that are migrations Nova has finished (``confirmed``);
* consumers that are migrations under way (``migrating``), whose server
  holds a second compute tree, as during a move: neither is reported;
* doubled servers: a second allocation in another compute tree, and no
  migration under way;
* stale roots: a retired node's provider (compute classes), one with
  only a COMPUTE_ trait, and a node Nova replaced (same name, a new
  UUID) with its children; a root that is no compute node, nor
  the sharing disks, must not be listed.

Nova's lists come in pages of 1,000, as Nova's ``max_limit`` has them.
Then it runs the real ``openstack resource provider consumer audit -f
json`` and ``openstack resource provider stale list -f json`` in
subprocesses (admin_token auth to our server,
``OS_COMPUTE_ENDPOINT_OVERRIDE`` to the stub), checks that every run
finds exactly the seeded problems, and prints per command and size the
median wall time, client and server CPU (benchmarks.operator_commands'
measures) and the requests sent: Nova's counted by the stub,
Placement's by kind from one extra ``--debug`` run (not timed). Last,
how each grows from the first size to the others.

    python -m benchmarks.nova_audit --database-connection \\
        postgresql+psycopg://postgres@127.0.0.1/auditbench \\
        --nodes 1000 --nodes 10000 --runs 3

With one ``--nodes`` the database is the one named; with several, one
per size, named ``<name>_<nodes>``. A missing database is created; one
the loader filled before is reused with ``--no-populate`` (the seeding
over HTTP is done again only where it is missing). ``--upstream-venv
.venv-upstream`` also times upstream Placement 16.0.0 on the same
database, in turn with ours; the commands only read.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid

import sqlalchemy as sa

from benchmarks import client as http_client
from benchmarks import databases
from benchmarks import local_server
from benchmarks import nova_stub
from benchmarks import operator_commands
from benchmarks import sql_cloud

AUDIT = ['resource', 'provider', 'consumer', 'audit']
STALE = ['resource', 'provider', 'stale', 'list']
COMMANDS = (('consumer audit', AUDIT), ('stale list', STALE))
# The audits' exit status when they found problems.
FOUND = 3

# Shares of the cloud's consumers seeded as each problem.
ORPHANED_SHARE = 0.02
FINISHED_SHARE = 0.01
MOVING_SHARE = 0.005
DOUBLED_SHARE = 0.01
# Servers Nova has that hold nothing in Placement (shelved, say), and
# migrations it still lists whose allocations are long gone, per node.
IDLE_SERVERS_PER_NODE = 0.05
OLD_MIGRATIONS_PER_NODE = 0.1
# What a doubled server holds in its second tree.
SECOND_TREE = {'VCPU': 1, 'MEMORY_MB': 512}
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'
WIDGET_CLASS = 'CUSTOM_AUDITBENCH_WIDGET'
# The providers seeded for the stale list: (name, inventories, traits,
# listed as stale).
SEEDED_ROOTS = (
    ('auditbench-retired-node', {'VCPU': 16, 'MEMORY_MB': 65536}, [], True),
    ('auditbench-traited-node', {'DISK_GB': 100},
     ['COMPUTE_NET_VIF_MODEL_VIRTIO'], True),
    ('auditbench-widget-rack', {WIDGET_CLASS: 4}, [], False),
)
NAMESPACE = uuid.UUID('0b4f7a4e-5a51-4f4e-9d0c-6a7ab1e2c3d4')


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='a PostgreSQL database URL (one per size is '
                             'derived from it when several --nodes are '
                             'given)')
    parser.add_argument('--nodes', type=int, action='append',
                        help='compute nodes (repeatable; default 1000)')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--no-populate', action='store_true',
                        help='the databases hold the cloud already')
    parser.add_argument('--openstack',
                        default=operator_commands._default_openstack())
    parser.add_argument('--upstream-venv',
                        help='also time upstream Placement 16.0.0 from this '
                             'virtualenv, on the same database')
    parser.add_argument('--upstream-workers', type=int, default=2)
    parser.add_argument('--upstream-threads', type=int, default=4)
    args = parser.parse_args(argv)
    args.nodes = args.nodes or [1000]
    return args


def database_for(args, nodes):
    if len(args.nodes) == 1:
        return args.database_connection
    url = sa.engine.make_url(args.database_connection)
    return url.set(database='%s_%d' % (url.database, nodes)
                   ).render_as_string(hide_password=False)


def ensure_database(connection):
    """Create the database unless it exists; True when it was made."""
    url = sa.engine.make_url(connection)
    admin = databases.admin_engine(connection)
    try:
        with admin.connect() as conn:
            found = conn.exec_driver_sql(
                'SELECT 1 FROM pg_database WHERE datname = %(name)s',
                {'name': url.database}).first()
    finally:
        admin.dispose()
    if not found:
        databases.create(connection, None, name=url.database)
    return not found


# --- The cloud as Placement holds it, read with SQL (set-up only).

class Cloud:
    """Roots, their children and every consumer's allocations."""

    def __init__(self, roots, children, held):
        # {root uuid: (name, sharing)}, {root uuid: [child uuid]}.
        self.roots = roots
        self.children = children
        # {consumer: [(root uuid, resource class, used)]}
        self.held = held

    def hosts(self):
        """The compute nodes' roots: what the loader made, sorted."""
        return sorted(uuid for uuid, (name, sharing) in self.roots.items()
                      if not sharing and uuid not in seeded_uuids())

    def home(self, consumer):
        """The root of the consumer's own server: the tree holding most
        of its memory (a doubled server's second tree holds less)."""
        memory = collections.Counter()
        for root, rc, used in self.held[consumer]:
            memory[root] += used if rc == 'MEMORY_MB' else 0
        return max(sorted(memory), key=lambda root: memory[root])


ROOTS_SQL = '''
SELECT rp.uuid, rp.name, EXISTS (
    SELECT 1 FROM resource_provider_traits rpt
    JOIN traits t ON t.id = rpt.trait_id
    WHERE rpt.resource_provider_id = rp.id AND t.name = :sharing)
FROM resource_providers rp WHERE rp.id = rp.root_provider_id'''
CHILDREN_SQL = '''
SELECT rp.uuid, root.uuid FROM resource_providers rp
JOIN resource_providers root ON root.id = rp.root_provider_id
WHERE rp.id <> rp.root_provider_id'''
HELD_SQL = '''
SELECT a.consumer_id, root.uuid, rc.name, a.used FROM allocations a
JOIN resource_providers rp ON rp.id = a.resource_provider_id
JOIN resource_providers root ON root.id = rp.root_provider_id
JOIN resource_classes rc ON rc.id = a.resource_class_id'''


def read_cloud(connection):
    engine = sa.create_engine(connection)
    try:
        with engine.connect() as conn:
            roots = {uuid: (name, sharing) for uuid, name, sharing in
                     conn.execute(sa.text(ROOTS_SQL),
                                  {'sharing': SHARING_TRAIT})}
            children = collections.defaultdict(list)
            for child, root in conn.execute(sa.text(CHILDREN_SQL)):
                children[root].append(child)
            held = collections.defaultdict(list)
            for consumer, root, rc, used in conn.execute(sa.text(HELD_SQL)):
                held[consumer].append((root, rc, used))
    finally:
        engine.dispose()
    return Cloud(roots, dict(children), dict(held))


# --- The problems seeded, chosen from the cloud by the seed alone.

Plan = collections.namedtuple(
    'Plan', 'homes orphaned finished moving moved doubled second_trees '
            'replaced')


def seeded_uuids():
    return {seeded_uuid(name) for name, _, _, _ in SEEDED_ROOTS}


def seeded_uuid(name):
    return str(uuid.uuid5(NAMESPACE, name))


def make_plan(cloud, seed):
    """Which consumers are which problem. Chosen from the loader's cloud
    only (each consumer's home tree, not the trees seeded), so that a
    cloud seeded before gives the same plan."""
    rng = random.Random(seed)
    hosts = cloud.hosts()
    replaced = rng.choice([host for host in hosts if cloud.children.get(host)])
    homes = {consumer: cloud.home(consumer) for consumer in sorted(cloud.held)}
    picked = sorted(consumer for consumer, home in homes.items()
                    if home != replaced)
    rng.shuffle(picked)
    counts = [int(len(picked) * share) for share in (
        ORPHANED_SHARE, FINISHED_SHARE, MOVING_SHARE, MOVING_SHARE,
        DOUBLED_SHARE)]
    slices = []
    for count in counts:
        slices.append(picked[:count])
        picked = picked[count:]
    orphaned, finished, moving, moved, doubled = slices
    # A second tree: a host without NUMA children (its root has the
    # compute classes), not the server's own nor the replaced node.
    flat = [host for host in hosts
            if not cloud.children.get(host) and host != replaced]
    second_trees = {}
    for server in moved + doubled:
        second_trees[server] = rng.choice(
            [host for host in rng.sample(flat, 2) if host != homes[server]])
    return Plan(homes, set(orphaned), finished, moving, moved, set(doubled),
                second_trees, replaced)


def expected_findings(plan):
    return ({(c, 'orphaned') for c in plan.orphaned}
            | {(c, 'migration-finished') for c in plan.finished}
            | {(c, 'doubled') for c in plan.doubled})


def expected_stale(cloud, plan):
    stale = {(seeded_uuid(name), 'stale')
             for name, _, _, listed in SEEDED_ROOTS if listed}
    stale.add((plan.replaced, 'stale'))
    return stale | {(child, 'child-of-stale')
                    for child in cloud.children[plan.replaced]}


# --- Seeding through Placement's HTTP API (again only where missing).

def seed_problems(url, plan):
    client = http_client.Client(url)
    client.put('/resource_classes/' + WIDGET_CLASS, expect=(201, 204))
    for name, inventories, traits, _ in SEEDED_ROOTS:
        ensure_root(client, name, inventories, traits)
    jobs = [lambda server=server: add_second_tree(
        client, server, plan.second_trees[server])
        for server in sorted(plan.second_trees)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        http_client.run_all(pool, jobs, progress=True,
                            label='second trees seeded')


def ensure_root(client, name, inventories, traits):
    uuid_ = seeded_uuid(name)
    path = '/resource_providers/' + uuid_
    if client.get(path, expect=(200, 404)).status_code == 200:
        return
    generation = client.post('/resource_providers', {
        'uuid': uuid_, 'name': name}).json()['generation']
    generation = client.put(path + '/inventories', {
        'resource_provider_generation': generation,
        'inventories': {rc: {'total': total}
                        for rc, total in inventories.items()}},
    ).json()['resource_provider_generation']
    if traits:
        client.put(path + '/traits', {
            'resource_provider_generation': generation, 'traits': traits})


def add_second_tree(client, server, host):
    path = '/allocations/' + server
    held = client.get(path).json()
    if host in held['allocations']:
        return
    allocations = {provider: {'resources': item['resources']}
                   for provider, item in held['allocations'].items()}
    allocations[host] = {'resources': dict(SECOND_TREE)}
    client.put(path, {
        'allocations': allocations,
        'consumer_generation': held['consumer_generation'],
        'consumer_type': held['consumer_type'],
        'project_id': held['project_id'], 'user_id': held['user_id']},
        expect=(204,))


# --- Nova as the stub shows it.

def nova_world(cloud, plan, seed):
    """``(servers, migrations, hypervisors, flavors)`` of the stub."""
    rng = random.Random(seed + 1)
    names = {host: cloud.roots[host][0] for host in cloud.hosts()}
    migrations_of = set(plan.finished) | set(plan.moving)
    moving = set(plan.moved)
    servers = [server_body(consumer, names[plan.homes[consumer]],
                           moving=consumer in moving)
               for consumer in sorted(plan.homes)
               if consumer not in plan.orphaned
               and consumer not in migrations_of]
    hosts = sorted(names)
    servers += [server_body(new_uuid(rng), names[rng.choice(hosts)])
                for _ in range(int(len(hosts) * IDLE_SERVERS_PER_NODE))]
    live = [server['id'] for server in servers]
    migrations = (
        [migration_body(consumer, rng.choice(live), 'confirmed', index)
         for index, consumer in enumerate(plan.finished)]
        + [migration_body(consumer, server, 'migrating', index)
           for index, (consumer, server) in enumerate(
               zip(plan.moving, plan.moved))]
        + [migration_body(new_uuid(rng), rng.choice(live), 'completed',
                          index)
           for index in range(int(len(hosts) * OLD_MIGRATIONS_PER_NODE))])
    hypervisors = [hypervisor_body(
        new_uuid(rng) if host == plan.replaced else host, names[host])
        for host in hosts]
    return servers, migrations, hypervisors, FLAVORS


def new_uuid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def server_body(server, host, moving=False):
    """The members of Nova's server detail the audit reads, and the
    usual others, so that pages weigh what Nova's do; a server being
    live-migrated says so, as Nova's does."""
    return {
        'id': server, 'name': 'server-' + server[:8],
        'status': 'MIGRATING' if moving else 'ACTIVE',
        'tenant_id': 'project', 'user_id': 'user',
        'OS-EXT-SRV-ATTR:host': host,
        'OS-EXT-SRV-ATTR:hypervisor_hostname': host,
        'OS-EXT-SRV-ATTR:instance_name': 'instance-' + server[:8],
        'OS-EXT-STS:vm_state': 'active',
        'OS-EXT-STS:task_state': 'migrating' if moving else None,
        'OS-EXT-STS:power_state': 1, 'OS-EXT-AZ:availability_zone': 'nova',
        'flavor': {'original_name': 'm1.small', 'vcpus': 1, 'ram': 2048,
                   'disk': 20, 'ephemeral': 0, 'swap': 0, 'extra_specs': {}},
        'image': {'id': '70a599e0-31e7-49b7-b260-868f441e862b'},
        'addresses': {}, 'metadata': {}, 'key_name': None,
        'created': '2026-01-01T00:00:00Z', 'updated': '2026-01-01T00:00:00Z',
        'links': [{'rel': 'self', 'href': '/v2.1/servers/' + server}]}


def migration_body(migration, server, status, index):
    return {
        'id': index + 1, 'uuid': migration, 'instance_uuid': server,
        'status': status, 'migration_type': 'migration',
        'source_compute': 'source', 'dest_compute': 'dest',
        'source_node': 'source', 'dest_node': 'dest',
        'created_at': '2026-01-01T00:00:00Z',
        'updated_at': '2026-01-01T00:00:00Z'}


def hypervisor_body(node, name):
    return {
        'id': node, 'hypervisor_hostname': name, 'state': 'up',
        'status': 'enabled', 'hypervisor_type': 'QEMU',
        'host_ip': '192.0.2.1',
        'service': {'host': name, 'id': node, 'disabled_reason': None}}


FLAVORS = [
    {'id': str(index), 'name': 'm1.%d' % index, 'vcpus': vcpus, 'ram': ram,
     'disk': disk, 'os-flavor-access:is_public': True,
     'extra_specs': {'hw:cpu_policy': 'shared'}}
    for index, (vcpus, ram, disk) in enumerate(
        ((1, 2048, 20), (2, 4096, 40), (4, 8192, 80), (8, 16384, 160)), 1)]


# --- Running the commands.

def command(args, url, words, debug=False):
    return operator_commands.command(args, url, words, debug,
                                     formatter='json')


def environment(endpoint):
    return dict(os.environ, OS_COMPUTE_ENDPOINT_OVERRIDE=endpoint)


def found(stdout, words):
    """The ``(uuid, problem)`` rows a command printed."""
    key = 'consumer_uuid' if words == AUDIT else 'uuid'
    return {(row[key], row['problem']) for row in json.loads(stdout or '[]')}


def check(name, side, got, expected):
    if got == expected:
        return
    raise SystemExit(
        '%s against %s found other problems than were seeded:\n'
        '  not found (%d): %s\n  found, not seeded (%d): %s'
        % (name, side, len(expected - got), sorted(expected - got)[:10],
           len(got - expected), sorted(got - expected)[:10]))


UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')
# keystoneauth quotes a URL with a query string.
CURL_URL = re.compile(r' "?(https?://[^\s"]+)')


def counted_run(args, url, words, env, name, side, expected):
    """One untimed ``--debug`` run: the Placement requests sent, by kind
    (the URL, UUIDs and query left out), read line by line as they come
    (a big cloud's debug output is too big to keep)."""
    kinds = collections.Counter()
    argv = command(args, url, words, debug=True)
    with subprocess.Popen(argv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=env) as process:
        out = []
        reader = threading.Thread(
            target=lambda: out.append(process.stdout.read()))
        reader.start()
        for line in process.stderr:
            if line.startswith('REQ: curl'):
                target = CURL_URL.search(line)
                if target and target.group(1).startswith(url):
                    kinds[kind_of(target.group(1)[len(url):])] += 1
        reader.join()
    if process.returncode not in accepted_statuses(words):
        raise SystemExit('%s failed (exit %s)' % (' '.join(argv),
                                                  process.returncode))
    check(name, side, found(out[0], words), expected)
    return kinds


def accepted_statuses(words):
    """Both commands exit 3 when they find what was seeded."""
    return (0, FOUND)


def kind_of(path):
    return UUID.sub('{uuid}', path.split('?')[0])


def timed_runs(args, sides, words, name, expected, stub):
    """``{side: [(wall, client CPU, server CPU, Nova requests)]}``, the
    sides in turn run by run."""
    runs = {side: [] for side in sides}
    accepted = accepted_statuses(words)
    for _ in range(args.runs):
        for side, (url, env, pid) in sides.items():
            before = operator_commands.server_cpu(pid)
            asked = sum(stub.requests.values())
            wall, done, cpu = operator_commands.run(
                command(args, url, words), env, accepted=accepted)
            served = operator_commands.server_cpu(pid) - before
            check(name, side, found(done.stdout, words), expected)
            runs[side].append((wall, cpu, served,
                               sum(stub.requests.values()) - asked))
    return runs


Figure = collections.namedtuple(
    'Figure', 'median fastest client server placement nova rows kinds')


def measure(args, sides, stub, name, words, expected):
    kinds = {side: counted_run(args, url, words, env, name, side, expected)
             for side, (url, env, _) in sides.items()}
    runs = timed_runs(args, sides, words, name, expected, stub)
    figures = {}
    for side, done in runs.items():
        walls = [run[0] for run in done]
        figures[side] = Figure(
            statistics.median(walls), min(walls),
            statistics.median(run[1] for run in done),
            statistics.median(run[2] for run in done),
            sum(kinds[side].values()), done[-1][3], len(expected),
            kinds[side])
    return figures


def report(nodes, name, side, figure, runs):
    print('%6d nodes %-15s %-8s median %7.2f s  min %7.2f s  client CPU '
          '%6.2f s  server CPU %6.2f s  %6d Placement + %d Nova requests  '
          '%d rows  (%d runs)' % (
              nodes, name, side, figure.median, figure.fastest, figure.client,
              figure.server, figure.placement, figure.nova, figure.rows,
              runs), flush=True)
    print('      Placement requests by kind: ' + ', '.join(
        '%s %d' % item for item in figure.kinds.most_common()), flush=True)


def report_growth(results):
    """Each size's median over the first size's, per command and side."""
    sizes = sorted(results)
    for later in sizes[1:]:
        for (name, side), figure in sorted(results[later].items()):
            first = results[sizes[0]][(name, side)]
            print('growth %d -> %d nodes (%.0fx) %-15s %-8s wall %.1fx  '
                  'client CPU %.1fx  server CPU %.1fx  requests %.1fx'
                  % (sizes[0], later, later / sizes[0], name, side,
                     figure.median / first.median,
                     figure.client / first.client,
                     figure.server / max(first.server, 1e-9),
                     (figure.placement + figure.nova)
                     / (first.placement + first.nova)), flush=True)


def populate(connection, nodes, seed):
    ensure_database(connection)
    cloud, stopwatch = sql_cloud.load(connection, nodes, seed)
    for line in sql_cloud.summary(cloud, stopwatch):
        print(line, flush=True)


def one_size(args, nodes):
    """``{(command, side): Figure}`` of one cloud size."""
    connection = database_for(args, nodes)
    if not args.no_populate:
        populate(connection, nodes, args.seed)
    processes = []
    stub_server = None
    try:
        server, url = local_server.start(connection)
        processes.append(server)
        started = time.monotonic()
        plan = make_plan(read_cloud(connection), args.seed)
        seed_problems(url, plan)
        # Read again: the seeded roots and second trees are in now.
        cloud = read_cloud(connection)
        stub = nova_stub.NovaStub(*nova_world(cloud, plan, args.seed))
        stub_server, endpoint = nova_stub.serve(stub)
        print('%d nodes: %d consumers; seeded %d orphaned, %d finished '
              'migrations, %d under way, %d doubled servers, %d stale '
              'providers (%.1f s)' % (
                  nodes, len(cloud.held), len(plan.orphaned),
                  len(plan.finished), len(plan.moving), len(plan.doubled),
                  len(expected_stale(cloud, plan)),
                  time.monotonic() - started), flush=True)
        env = environment(endpoint)
        sides = {'ours': (url, env, server.pid)}
        if args.upstream_venv:
            upstream, upstream_url = operator_commands.start_upstream(
                argparse.Namespace(**dict(
                    vars(args), database_connection=connection)))
            processes.append(upstream)
            sides['upstream'] = (upstream_url, env, upstream.pid)
        expected = {'consumer audit': expected_findings(plan),
                    'stale list': expected_stale(cloud, plan)}
        results = {}
        for name, words in COMMANDS:
            figures = measure(args, sides, stub, name, words, expected[name])
            for side, figure in figures.items():
                report(nodes, name, side, figure, args.runs)
                results[(name, side)] = figure
        if stub.refused:
            raise SystemExit('the Nova stub refused: %s' % stub.refused[:5])
        return results
    finally:
        if stub_server is not None:
            stub_server.shutdown()
        for process in processes:
            local_server.stop(process)


def main(argv=None):
    args = parse_args(argv)
    results = {nodes: one_size(args, nodes) for nodes in args.nodes}
    report_growth(results)
    return 0


if __name__ == '__main__':
    sys.exit(main())
