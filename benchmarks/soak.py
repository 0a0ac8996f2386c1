# SPDX-License-Identifier: Apache-2.0
"""Soak: the scheduler loop, moves, deletes and inventory updates for an
hour (or --minutes), with throughput, latency and memory every minute and
a verification of the database at the end.

A cloud of --nodes compute nodes is loaded by the bulk SQL loader
(benchmarks/sql_cloud.py, set-up only; --no-populate reuses one), our
server is started on it, and from --clients threads, over HTTP only:

- claims, the scheduler loop of benchmarks/candidates.py: candidates with
  limit=10, then ``PUT /allocations/{consumer}`` with a null consumer
  generation; on 409 the next alternate, as Nova does, then fresh
  candidates;
- moves: a held consumer's allocations put on another host with its
  consumer generation (a resize or cold migration's end state);
- deletes: ``DELETE /allocations/{consumer}`` of a held consumer, one
  before each claim once --fill consumers are held, so the cloud stays
  near one fill level;
- inventory updates, --inventory-rate per second from a thread of their
  own: a random host's reserved memory toggled with its provider
  generation, never reserving what its allocations use.

Every --interval seconds one line: operations per second, claim and
candidate latency, 4xx by code and 5xx, the RSS of each server process and
the memory of the PostgreSQL backends serving the database. At the end
the database is verified with SQL and against the server's own usages;
the exit status is non-zero on any failed check, any 5xx and any 4xx
other than a 409.

    python -m benchmarks.soak --database-connection \\
        postgresql+psycopg://postgres@127.0.0.1/soak10k --nodes 10000 \\
        --minutes 60 --json /tmp/soak.json
"""

import argparse
import collections
import concurrent.futures
import json
import os
import random
import statistics
import sys
import threading
import time
import uuid

import sqlalchemy as sa

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import databases
from benchmarks import local_server
from benchmarks import sql_cloud

PROJECT = str(uuid.UUID(int=1))
USER = str(uuid.UUID(int=2))
# Claims and moves, in these proportions; deletes come with claims once
# the fill level is reached. Inventory updates have a thread of their
# own at a fixed rate: each one changes the structure every worker keeps
# for the candidate search (db/structure.py), which a cloud changes
# rarely, so their rate is the run's choice, not a share of the others.
DEFAULT_MIX = {'claim': 8, 'move': 2}
# Alternates a claim tries before it asks for fresh candidates, and
# rounds of fresh candidates before it gives up.
ALTERNATES = 3
ROUNDS = 5
# The class whose reserved amount inventory updates toggle, and by how
# much (at most).
TOGGLED_CLASS = 'MEMORY_MB'
TOGGLED_RESERVE = 512
ANY_STATUS = tuple(range(100, 600))


class Minute:
    """What happened during one interval."""

    def __init__(self):
        self.operations = collections.Counter()
        self.statuses = collections.Counter()
        self.conflicts = collections.Counter()
        self.claim_ms = []
        self.candidates_ms = []


class Recorder:
    """Counters shared by the client threads, swapped every interval."""

    def __init__(self):
        self._lock = threading.Lock()
        self._minute = Minute()
        self.errors = []

    def swap(self):
        with self._lock:
            minute, self._minute = self._minute, Minute()
        return minute

    def status(self, code, conflict=None):
        with self._lock:
            self._minute.statuses[code] += 1
            if conflict:
                self._minute.conflicts[conflict] += 1

    def done(self, operation):
        with self._lock:
            self._minute.operations[operation] += 1

    def latency(self, kind, milliseconds):
        with self._lock:
            getattr(self._minute, kind + '_ms').append(milliseconds)


class Soak:
    """The client side: one instance shared by all client threads."""

    def __init__(self, client, hosts, fill, mix, seed, inventory_rate=0):
        self.client = client
        self.inventory_rate = inventory_rate
        self.hosts = hosts
        self.fill = fill
        self.mix = mix
        self.recorder = Recorder()
        self.held = []
        self._held_lock = threading.Lock()
        self._seed = seed
        self.stop = threading.Event()

    # -- HTTP, every answer counted
    def call(self, method, path, body=None, params=None, timed=None):
        with http_client.Timer() as t:
            response = self.client.request(method, path, body, params,
                                           expect=ANY_STATUS)
        self.recorder.status(response.status_code,
                             conflict_kind(response)
                             if response.status_code == 409 else None)
        if timed and response.status_code < 300:
            self.recorder.latency(timed, t.seconds * 1000)
        return response

    def candidates(self):
        response = self.call('GET', '/allocation_candidates', params={
            'resources': candidates.PLAIN, 'limit': '10'},
            timed='candidates')
        if response.status_code != 200:
            return []
        return response.json()['allocation_requests']

    # -- held consumers: each is used by one thread at a time
    def take(self, rng):
        with self._held_lock:
            if not self.held:
                return None
            index = rng.randrange(len(self.held))
            self.held[index], self.held[-1] = self.held[-1], self.held[index]
            return self.held.pop()

    def give_back(self, consumer):
        with self._held_lock:
            self.held.append(consumer)

    def held_count(self):
        with self._held_lock:
            return len(self.held)

    # -- the operations
    def claim(self, rng):
        """Nova's way: the first candidate, on 409 the next alternates,
        then fresh candidates."""
        consumer = str(uuid.uuid4())
        for _ in range(ROUNDS):
            for request in self.candidates()[:ALTERNATES]:
                response = self.call('PUT', '/allocations/' + consumer, {
                    'allocations': request['allocations'],
                    'project_id': PROJECT, 'user_id': USER,
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'}, timed='claim')
                if response.status_code == 204:
                    self.give_back(consumer)
                    self.recorder.done('claim')
                    return
                if response.status_code != 409:
                    return
        self.recorder.done('claim_given_up')

    def delete(self, rng):
        consumer = self.take(rng)
        if consumer is None:
            return
        if self.call('DELETE', '/allocations/' + consumer).status_code \
                == 204:
            self.recorder.done('delete')
        else:
            self.give_back(consumer)

    def move(self, rng):
        consumer = self.take(rng)
        if consumer is None:
            return self.claim(rng)
        try:
            self._move(consumer)
        finally:
            self.give_back(consumer)

    def _move(self, consumer):
        current = self.call('GET', '/allocations/' + consumer)
        if current.status_code != 200:
            return
        current = current.json()
        here = compute_providers(current['allocations'])
        for request in self.candidates():
            if here & compute_providers(request['allocations']):
                continue
            response = self.call('PUT', '/allocations/' + consumer, {
                'allocations': request['allocations'],
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': current['consumer_generation'],
                'consumer_type': 'INSTANCE'})
            if response.status_code == 204:
                self.recorder.done('move')
                return
            if response.status_code != 409:
                return
            # Another writer took the target; our generation still
            # stands, as no other thread holds this consumer.

    def inventory(self, rng):
        """Toggle a host's reserved memory: some, or none. The provider
        generation read with its usage guards the new capacity against
        claims made since."""
        host = rng.choice(self.hosts)
        base = '/resource_providers/%s/' % host
        for _ in range(ROUNDS):
            inventories = self.call('GET', base + 'inventories')
            usages = self.call('GET', base + 'usages')
            if inventories.status_code != 200 or usages.status_code != 200:
                return
            inventories, usages = inventories.json(), usages.json()
            generation = inventories['resource_provider_generation']
            if usages['resource_provider_generation'] != generation:
                continue
            record = inventories['inventories'][TOGGLED_CLASS]
            record['reserved'] = new_reserved(
                record, usages['usages'].get(TOGGLED_CLASS, 0))
            record['resource_provider_generation'] = generation
            response = self.call('PUT', base + 'inventories/' +
                                 TOGGLED_CLASS, record)
            if response.status_code == 200:
                self.recorder.done('inventory')
                return
            if response.status_code != 409:
                return

    # -- the client threads
    def client_thread(self, number):
        rng = random.Random(self._seed * 1000 + number)
        names, weights = zip(*self.mix.items())
        try:
            while not self.stop.is_set():
                operation = rng.choices(names, weights)[0]
                if operation == 'claim' and self.held_count() >= self.fill:
                    self.delete(rng)
                getattr(self, operation)(rng)
        except Exception as error:
            self.recorder.errors.append('%s: %r' % (
                threading.current_thread().name, error))
            self.stop.set()

    def inventory_thread(self):
        """Inventory updates at ``inventory_rate`` per second, on a
        schedule that does not drift with their latency."""
        rng = random.Random(self._seed * 1000 - 1)
        period = 1.0 / self.inventory_rate
        due = time.monotonic()
        try:
            while not self.stop.wait(max(0.0, due - time.monotonic())):
                self.inventory(rng)
                due += period
        except Exception as error:
            self.recorder.errors.append('inventory: %r' % (error,))
            self.stop.set()

    def release_all(self):
        """Delete what the soak still holds, leaving the cloud as it was
        loaded (the verification runs before, on the soaked state)."""
        for consumer in self.held:
            self.client.request('DELETE', '/allocations/' + consumer,
                                expect=(204,))
        self.held = []


def conflict_kind(response):
    """A 409's error code without its ``placement.`` prefix:
    ``concurrent_update`` for a generation that moved, ``undefined_code``
    for capacity another writer took."""
    try:
        code = response.json()['errors'][0].get('code', 'none')
    except (ValueError, KeyError, IndexError, TypeError):
        code = 'unreadable'
    return code.replace('placement.', '')


def compute_providers(allocations):
    """The providers of the VCPU in ``allocations``: a move leaves
    these, while a sharing disk provider may serve both hosts."""
    return {provider for provider, held in allocations.items()
            if 'VCPU' in held['resources']}


def new_reserved(record, used):
    """None reserved if some is, else as much as the host's usage leaves
    room for, up to TOGGLED_RESERVE."""
    if record['reserved']:
        return 0
    room = record['total'] - used / record['allocation_ratio']
    return max(0, min(TOGGLED_RESERVE, int(room)))


# -- memory, from /proc
def children_of():
    """{pid: [child pids]} of every process."""
    tree = collections.defaultdict(list)
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces: the fields follow its ')'.
        parent = int(stat.rsplit(')', 1)[1].split()[1])
        tree[parent].append(int(name))
    return tree


def process_tree(root):
    """``root``, then its descendants by pid: the same order in every
    interval while no worker is replaced."""
    tree, descendants = children_of(), []
    todo = list(tree.get(root, ()))
    while todo:
        pid = todo.pop()
        descendants.append(pid)
        todo.extend(tree.get(pid, ()))
    return [root] + sorted(descendants)


def memory_kib(pid, field):
    """``field`` (VmRSS from status, Pss from smaps_rollup) in KiB, or
    None once the process is gone."""
    path = '/proc/%d/%s' % (pid, 'status' if field == 'VmRSS'
                            else 'smaps_rollup')
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ':'):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def server_rss_mib(server_pid):
    """RSS of the server's processes (the parent first, then each
    worker) in MiB."""
    figures = [memory_kib(pid, 'VmRSS') for pid in process_tree(server_pid)]
    return [round(kib / 1024, 1) for kib in figures if kib is not None]


def postgres_memory_mib(engine):
    """(PSS sum, RSS sum, backends) of the PostgreSQL backends connected
    to the database, other than the one asking. PSS shares the shared
    buffers out between the processes mapping them; RSS counts them in
    every backend."""
    with engine.connect() as conn:
        pids = conn.execute(sa.text(
            'SELECT pid FROM pg_stat_activity WHERE datname = '
            'current_database() AND pid <> pg_backend_pid()')).scalars()
        pids = list(pids)
    pss = [memory_kib(pid, 'Pss') for pid in pids]
    rss = [memory_kib(pid, 'VmRSS') for pid in pids]
    return (round(sum(k for k in pss if k) / 1024, 1),
            round(sum(k for k in rss if k) / 1024, 1),
            sum(1 for k in rss if k is not None))


# -- the per-minute report
def minute_figures(number, minute, seconds, held, server_pid, engine):
    ops = minute.operations
    pss, rss, backends = postgres_memory_mib(engine)
    fourxx = {str(code): count for code, count in
              sorted(minute.statuses.items()) if 400 <= code < 500}
    return {
        'minute': number, 'seconds': round(seconds, 1),
        'claims_per_s': round(ops['claim'] / seconds, 2),
        'moves_per_s': round(ops['move'] / seconds, 2),
        'deletes_per_s': round(ops['delete'] / seconds, 2),
        'inventory_per_s': round(ops['inventory'] / seconds, 2),
        'claims_given_up': ops['claim_given_up'],
        'claim_ms': quantiles(minute.claim_ms),
        'candidates_ms': quantiles(minute.candidates_ms),
        'requests': sum(minute.statuses.values()),
        '4xx': fourxx,
        '409_kinds': dict(minute.conflicts),
        '5xx': sum(c for code, c in minute.statuses.items() if code >= 500),
        'held': held,
        'server_rss_mib': server_rss_mib(server_pid),
        'postgres_pss_mib': pss, 'postgres_rss_mib': rss,
        'postgres_backends': backends}


def quantiles(samples):
    if not samples:
        return {'p50': None, 'p95': None}
    return {'p50': round(statistics.median(samples), 1),
            'p95': round(http_client.percentile(samples, 0.95), 1)}


def minute_line(f):
    fourxx = ','.join('%s:%d' % item for item in f['4xx'].items()) or '-'
    if f['409_kinds']:
        fourxx += ' (%s)' % ','.join('%s %d' % item for item in
                                     sorted(f['409_kinds'].items()))
    return ('%3d  claims %6.1f/s  moves %5.1f/s  deletes %6.1f/s  '
            'inv %4.1f/s  claim p50/p95 %s/%s ms  cand %s/%s ms  4xx %s  '
            '5xx %d  held %d  server MiB %s  pg %.1f MiB PSS (%.0f RSS, %d)'
            % (f['minute'], f['claims_per_s'], f['moves_per_s'],
               f['deletes_per_s'], f['inventory_per_s'],
               f['claim_ms']['p50'], f['claim_ms']['p95'],
               f['candidates_ms']['p50'], f['candidates_ms']['p95'],
               fourxx, f['5xx'], f['held'],
               '+'.join('%.0f' % m for m in f['server_rss_mib']),
               f['postgres_pss_mib'], f['postgres_rss_mib'],
               f['postgres_backends']))


def run(soak, clients, minutes, interval, server_pid, engine):
    """Drive the client threads for ``minutes`` (in whole intervals),
    one line per ``interval``; the per-interval figures."""
    series = []
    if minutes <= 0:
        return series
    threads = [threading.Thread(target=soak.client_thread, args=(n,),
                                name='client-%d' % n, daemon=True)
               for n in range(clients)]
    if soak.inventory_rate > 0:
        threads.append(threading.Thread(target=soak.inventory_thread,
                                        name='inventory', daemon=True))
    for thread in threads:
        thread.start()
    # Whole intervals, on a fixed schedule: a short last one would give
    # noisy rates, and the last one is what the run is judged by.
    intervals = max(1, round(minutes * 60 / interval))
    started = previous = time.monotonic()
    for number in range(1, intervals + 1):
        if soak.stop.wait(max(0.0, started + number * interval
                              - time.monotonic())):
            break
        swapped_at = time.monotonic()
        figures = minute_figures(number, soak.recorder.swap(),
                                 swapped_at - previous, soak.held_count(),
                                 server_pid, engine)
        previous = swapped_at
        series.append(figures)
        _say(minute_line(figures))
    soak.stop.set()
    for thread in threads:
        thread.join()
    return series


# -- the verification, straight from the database
SQL_CHECKS = {
    'no provider over capacity': """
        SELECT count(*) FROM (
          SELECT a.resource_provider_id, a.resource_class_id,
                 sum(a.used) AS used
          FROM allocations a
          GROUP BY a.resource_provider_id, a.resource_class_id) u
        JOIN inventories i
          ON i.resource_provider_id = u.resource_provider_id
         AND i.resource_class_id = u.resource_class_id
        WHERE u.used > (i.total - i.reserved) * i.allocation_ratio""",
    'no allocation of a missing provider': """
        SELECT count(*) FROM allocations a
        LEFT JOIN resource_providers p ON p.id = a.resource_provider_id
        WHERE p.id IS NULL""",
    'no allocation of a missing consumer': """
        SELECT count(*) FROM allocations a
        LEFT JOIN consumers c ON c.uuid = a.consumer_id
        WHERE c.id IS NULL""",
    'no allocation without inventory': """
        SELECT count(*) FROM allocations a
        LEFT JOIN inventories i
          ON i.resource_provider_id = a.resource_provider_id
         AND i.resource_class_id = a.resource_class_id
        WHERE i.id IS NULL""",
    'no consumer without allocations': """
        SELECT count(*) FROM consumers c
        WHERE NOT EXISTS (SELECT 1 FROM allocations a
                          WHERE a.consumer_id = c.uuid)""",
    'no consumer of a missing project or user': """
        SELECT count(*) FROM consumers c
        LEFT JOIN projects p ON p.id = c.project_id
        LEFT JOIN users u ON u.id = c.user_id
        WHERE p.id IS NULL OR u.id IS NULL""",
    'no inventory of a missing provider': """
        SELECT count(*) FROM inventories i
        LEFT JOIN resource_providers p ON p.id = i.resource_provider_id
        WHERE p.id IS NULL""",
    # Both directions of the comparison: MariaDB has no FULL JOIN.
    'usage_totals equal the sums of allocations': """
        SELECT count(*) FROM (
          SELECT s.used AS summed, t.used AS kept FROM {sums} s
          LEFT JOIN usage_totals t
            ON t.resource_provider_id = s.resource_provider_id
           AND t.resource_class_id = s.resource_class_id
          UNION ALL
          SELECT NULL AS summed, t.used AS kept FROM usage_totals t
          LEFT JOIN {sums} s
            ON t.resource_provider_id = s.resource_provider_id
           AND t.resource_class_id = s.resource_class_id
          WHERE s.resource_provider_id IS NULL) d
        WHERE coalesce(d.summed, 0) <> coalesce(d.kept, 0)""".format(
        sums="""(SELECT resource_provider_id, resource_class_id,
                        sum(used) AS used
                 FROM allocations
                 GROUP BY resource_provider_id, resource_class_id)"""),
}


def sql_checks(engine):
    """{check: rows that break it}."""
    with engine.connect() as conn:
        return {name: conn.execute(sa.text(query)).scalar()
                for name, query in SQL_CHECKS.items()}


def sql_usages(engine):
    """{provider uuid: {class name: used}}, classes used only."""
    usages = collections.defaultdict(dict)
    with engine.connect() as conn:
        for provider, name, used in conn.execute(sa.text("""
                SELECT p.uuid, rc.name, sum(a.used)
                FROM allocations a
                JOIN resource_providers p ON p.id = a.resource_provider_id
                JOIN resource_classes rc ON rc.id = a.resource_class_id
                GROUP BY p.uuid, rc.name""")):
            if used:
                usages[provider][name] = int(used)
        providers = list(conn.execute(sa.text(
            'SELECT uuid FROM resource_providers ORDER BY id')).scalars())
    return providers, usages


def server_usage_mismatches(client, engine, sample, threads):
    """(providers compared, those whose server usages differ from the
    SQL sums)."""
    providers, usages = sql_usages(engine)
    if sample and sample < len(providers):
        providers = random.Random(0).sample(providers, sample)

    def differs(provider):
        served = client.get('/resource_providers/%s/usages'
                            % provider).json()['usages']
        served = {name: used for name, used in served.items() if used}
        return served != usages.get(provider, {})

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        flags = list(pool.map(differs, providers))
    return len(providers), [p for p, bad in zip(providers, flags) if bad]


def verify(client, engine, sample, threads):
    """Print PASS or FAIL per check; True when all pass."""
    results = {}
    for name, count in sql_checks(engine).items():
        results[name] = count == 0
        _say('%s  %s (%d rows)' % ('PASS' if count == 0 else 'FAIL',
                                   name, count))
    compared, wrong = server_usage_mismatches(client, engine, sample,
                                              threads)
    results['server usages equal the SQL sums'] = not wrong
    _say('%s  server usages equal the SQL sums (%d providers, %d differ%s)'
         % ('PASS' if not wrong else 'FAIL', compared, len(wrong),
            ': ' + ', '.join(wrong[:5]) if wrong else ''))
    return results


# -- flatness
def growth(series, baseline_intervals):
    """Throughput and memory at the end against the start, each the mean
    of a window of ``baseline_intervals`` intervals: the first window for
    throughput; for memory, the window after it, once the caches have
    filled. A worker's memory moves from one minute to the next by more
    than the growth looked for, so single samples would say little."""
    if len(series) < 2:
        return {}
    window = max(1, min(baseline_intervals, len(series) // 3))
    warm = min(window, len(series) - 2 * window) if len(series) > 2 else 0
    first, settled, last = (series[:window],
                            series[warm:warm + window], series[-window:])

    def mean(frames, pick):
        return statistics.mean(pick(f) for f in frames)

    def percent(pick, now, then):
        now, then = mean(now, pick), mean(then, pick)
        return round(100.0 * (now - then) / then, 1) if then else None

    workers = min(len(f['server_rss_mib']) for f in settled + last)
    return {
        'baseline_intervals': window,
        'memory_from_interval': warm + 1,
        'claims_per_s_baseline': round(
            mean(first, lambda f: f['claims_per_s']), 2),
        'claims_per_s_last': round(mean(last, lambda f: f['claims_per_s']), 2),
        'claims_growth_pct': percent(lambda f: f['claims_per_s'], last,
                                     first),
        'server_rss_growth_pct': percent(lambda f: sum(f['server_rss_mib']),
                                         last, settled),
        'worker_rss_growth_pct': [
            percent(lambda f, i=i: f['server_rss_mib'][i], last, settled)
            for i in range(workers)],
        'postgres_pss_growth_pct': percent(lambda f: f['postgres_pss_mib'],
                                           last, settled)}


def summary_lines(series, flat):
    total = collections.Counter()
    for f in series:
        total.update({'5xx': f['5xx']})
        total.update({code: n for code, n in f['4xx'].items()})
    lines = ['%d intervals; 5xx %d; 4xx %s' % (
        len(series), total.pop('5xx', 0),
        dict(total) or 'none')]
    if flat:
        lines.append(
            'claims/s, means of the first and last %d intervals: %.1f, '
            '%.1f (%+.1f%%); memory, means of the %d intervals from '
            'interval %d and of the last: server %+.1f%% (parent, '
            'workers: %s), PostgreSQL PSS %+.1f%%' % (
                flat['baseline_intervals'], flat['claims_per_s_baseline'],
                flat['claims_per_s_last'], flat['claims_growth_pct'] or 0,
                flat['baseline_intervals'], flat['memory_from_interval'],
                flat['server_rss_growth_pct'] or 0,
                ', '.join('%+.1f%%' % (p or 0)
                          for p in flat['worker_rss_growth_pct']),
                flat['postgres_pss_growth_pct'] or 0))
    return lines


# -- set-up
def prepare(args):
    """Create the database and load the cloud, unless --no-populate."""
    if args.no_populate:
        return
    url = sa.engine.make_url(args.database_connection)
    server = url.set(database='postgres').render_as_string(
        hide_password=False)
    databases.create(server, 'soak', name=url.database)
    cloud, stopwatch = sql_cloud.load(args.database_connection, args.nodes,
                                      args.seed)
    if args.state:
        candidates.save_cloud(args.state, cloud)
    for line in sql_cloud.summary(cloud, stopwatch):
        _say(line)


def hosts_of(engine):
    """The uuids of the providers with inventories of TOGGLED_CLASS."""
    with engine.connect() as conn:
        return list(conn.execute(sa.text("""
            SELECT p.uuid FROM resource_providers p
            JOIN inventories i ON i.resource_provider_id = p.id
            JOIN resource_classes rc ON rc.id = i.resource_class_id
            WHERE rc.name = :name ORDER BY p.id"""), {
            'name': TOGGLED_CLASS}).scalars())


def soak_and_verify(args, engine):
    popen, url = local_server.start(args.database_connection,
                                    workers=args.workers,
                                    threads=args.threads, seconds=300)
    try:
        client = http_client.Client(url)
        warm_up(client)
        soak = Soak(client, hosts_of(engine), args.fill, parse_mix(args.mix),
                    args.seed, args.inventory_rate)
        _say('soak: %d clients, fill %d consumers, mix %s, %.2f inventory '
             'updates/s, server %d workers x %d threads' % (
                 args.clients, args.fill, args.mix, args.inventory_rate,
                 args.workers, args.threads))
        series = run(soak, args.clients, args.minutes, args.interval,
                     popen.pid, engine)
        for error in soak.recorder.errors:
            _say('client error: ' + error)
        _say('verification (%d consumers held by the soak):'
             % soak.held_count())
        checks = verify(client, engine, args.usage_sample, args.clients)
        if not args.keep:
            soak.release_all()
        return series, checks, soak.recorder.errors
    finally:
        local_server.stop(popen)


def warm_up(client):
    """One claim, deleted: the first request of a worker reads the
    structure the candidate search keeps."""
    claimed = []
    candidates.claim_once(client, claimed)
    for consumer in claimed:
        client.delete('/allocations/' + consumer)


def parse_mix(text):
    mix = {}
    for part in text.split(','):
        name, weight = part.split('=')
        if name not in DEFAULT_MIX:
            raise SystemExit('--mix: unknown operation %r' % name)
        mix[name] = float(weight)
    return mix


def _say(text):
    print(text, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection', required=True,
                        help='PostgreSQL database; created and loaded '
                             'unless --no-populate')
    parser.add_argument('--nodes', type=int, default=10000)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--state', help='where to save the loaded cloud')
    parser.add_argument('--no-populate', action='store_true',
                        help='soak the cloud already in the database')
    parser.add_argument('--minutes', type=float, default=60)
    parser.add_argument('--interval', type=float, default=60,
                        help='seconds between report lines')
    parser.add_argument('--baseline-minutes', type=float, default=10,
                        help='the length of the windows compared: the '
                             'first with the last for throughput, the one '
                             'after the first with the last for memory')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--threads', type=int, default=4)
    parser.add_argument('--clients', type=int, default=4)
    parser.add_argument('--fill', type=int,
                        help='consumers the soak keeps (default: a fifth '
                             'of --nodes)')
    parser.add_argument('--mix', default=','.join(
        '%s=%d' % item for item in DEFAULT_MIX.items()))
    parser.add_argument('--inventory-rate', type=float, default=1.0,
                        help='inventory updates per second (0: none)')
    parser.add_argument('--usage-sample', type=int, default=0,
                        help='providers whose server usages are compared '
                             '(0: all)')
    parser.add_argument('--keep', action='store_true',
                        help='leave the soak\'s consumers in the database')
    parser.add_argument('--json', help='write the series and checks here')
    args = parser.parse_args(argv)
    if args.fill is None:
        args.fill = max(1, args.nodes // 5)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    prepare(args)
    engine = sa.create_engine(args.database_connection)
    try:
        series, checks, errors = soak_and_verify(args, engine)
    finally:
        engine.dispose()
    flat = growth(series, max(1, round(args.baseline_minutes * 60
                                       / args.interval)))
    for line in summary_lines(series, flat):
        _say(line)
    failures = [name for name, ok in checks.items() if not ok]
    failures += ['%d 5xx' % sum(f['5xx'] for f in series)] \
        if any(f['5xx'] for f in series) else []
    failures += ['4xx other than 409'] if any(
        code != '409' for f in series for code in f['4xx']) else []
    failures += ['client errors'] if errors else []
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'args': vars(args), 'series': series,
                       'checks': checks, 'flatness': flat,
                       'failures': failures}, f, indent=2)
    _say('FAIL: ' + '; '.join(failures) if failures else 'PASS')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
