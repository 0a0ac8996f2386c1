# SPDX-License-Identifier: Apache-2.0
"""Allocation writers spread over several API hosts on one replicated
database, then a check of every row they left.

    python -m benchmarks.replicated_writes \\
        --url http://127.0.0.1:18801 --url http://127.0.0.1:18802 \\
        --db-url mysql+pymysql://root@127.0.0.1:13306/placement \\
        --db-url mysql+pymysql://root@127.0.0.1:13307/placement \\
        --log /tmp/run/server1.log --log /tmp/run/server2.log

Providers with little room (VCPU 8 each) are created, then threads, spread
round-robin over the URLs, claim new consumers (PUT /allocations at 1.39,
consumer_generation null), move consumers onto another provider and delete
them (both as a PUT with the consumer generation just read, so that every
accepted write is ordered), for a fixed time or count. Writers on
different hosts race for the same providers: on Galera the loser's commit
fails certification and the server re-runs the write.

Afterwards, through SQL on every database URL and through the API of every
URL: no provider over capacity; every consumer exactly as its last
accepted write left it (consumer row and allocation rows) and every
refused claim absent; each provider's usages from every URL equal to the
SQL sums. Retries are counted from the servers' log files (the
``Write retried`` lines of osc_placement.server.db.engine). One table is
printed; the exit status is 1 on any violation or 5xx answer.
"""

import argparse
import collections
import random
import re
import sys
import threading
import time
import uuid as uuidlib

import requests
import sqlalchemy as sa

MICROVERSION = '1.39'
RETRY_MARKER = 'Write retried'
PROJECT, USER = 'replicated-project', 'replicated-user'
MEMORY_PER_VCPU = 256
# Every other answer (a 400, a 404, a 5xx) is a violation.
EXPECTED_ANSWERS = ('204', '409 capacity', '409 generation')


class Api:
    """Plain HTTP to one server, a session per thread."""

    headers = {'X-Auth-Token': 'admin', 'Accept': 'application/json',
               'OpenStack-API-Version': 'placement ' + MICROVERSION}

    def __init__(self, url):
        self.url = url.rstrip('/')
        self._local = threading.local()

    def call(self, method, path, body=None):
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self.headers)
        response = session.request(method, self.url + path, json=body,
                                   timeout=120)
        payload = response.json() if response.content else None
        return response.status_code, payload


def create_providers(api, count, vcpu):
    """``count`` providers with VCPU ``vcpu`` and memory to spare."""
    uuids = []
    for index in range(count):
        rp = str(uuidlib.uuid4())
        status, body = api.call('POST', '/resource_providers',
                                {'name': 'replicated-%d-%s' % (index, rp),
                                 'uuid': rp})
        _expect(200, status, body)
        inventories = {
            'VCPU': {'total': vcpu},
            'MEMORY_MB': {'total': vcpu * MEMORY_PER_VCPU * 2}}
        status, body = api.call(
            'PUT', '/resource_providers/%s/inventories' % rp,
            {'resource_provider_generation': 0, 'inventories': inventories})
        _expect(200, status, body)
        uuids.append(rp)
    return uuids


def _expect(wanted, status, body):
    if status != wanted:
        raise RuntimeError('set-up answer %s: %s' % (status, body))


def _resources(vcpu):
    return {'VCPU': vcpu, 'MEMORY_MB': vcpu * MEMORY_PER_VCPU}


def _put_body(allocations, generation):
    return {'allocations': {rp: {'resources': res}
                            for rp, res in allocations.items()},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': generation, 'consumer_type': 'INSTANCE'}


def classify(status, body):
    """The answer's column in the table."""
    if status == 409:
        codes = [e.get('code') for e in (body or {}).get('errors', [])]
        if 'placement.concurrent_update' in codes:
            return '409 generation'
        return '409 capacity'
    if status >= 500:
        return '5xx'
    return str(status)


class Ledger:
    """What the writers were told, per consumer: each accepted write with
    the consumer generation it was made against (None for a claim), and
    the claims refused. Every accepted write moves the generation by one,
    so the accepted writes of a consumer form one chain and the last is
    the one made against the highest generation."""

    def __init__(self):
        self._lock = threading.Lock()
        self.accepted = collections.defaultdict(list)
        self.refused_claims = set()
        self.unknown = set()
        self.live = []
        self.answers = collections.Counter()
        self.torn_reads = []

    def record(self, op, consumer, base, allocations, status, body):
        answer = classify(status, body)
        with self._lock:
            self.answers[(op, answer)] += 1
            if status == 204:
                self.accepted[consumer].append((base, allocations))
                if op == 'claim':
                    self.live.append(consumer)
            elif op == 'claim' and status == 409:
                self.refused_claims.add(consumer)
            elif status >= 500:
                self.unknown.add(consumer)

    def torn_read(self, consumer, body):
        with self._lock:
            self.torn_reads.append((consumer, body))

    def pick_live(self, rng):
        with self._lock:
            return rng.choice(self.live) if self.live else None

    def forget(self, consumer):
        with self._lock:
            if consumer in self.live:
                self.live.remove(consumer)

    def expected(self):
        """consumer -> {rp: resources} (None: must not exist), and the
        consumers with two accepted writes on one generation (a lost
        update)."""
        final, lost = {}, []
        for consumer, writes in self.accepted.items():
            bases = [base for base, _ in writes]
            if len(set(bases)) != len(bases):
                lost.append(consumer)
            last = max(writes, key=lambda w: -1 if w[0] is None else w[0])
            final[consumer] = last[1] or None
        for consumer in self.refused_claims - set(final):
            final[consumer] = None
        return final, lost


class Writer(threading.Thread):
    """One thread of claims, moves and deletes on one API host."""

    def __init__(self, api, providers, ledger, seed, stop_at, max_writes,
                 mix):
        super().__init__(daemon=True)
        self.api, self.providers, self.ledger = api, providers, ledger
        self.rng = random.Random(seed)
        self.stop_at, self.max_writes, self.mix = stop_at, max_writes, mix
        self.error = None

    def run(self):
        try:
            done = 0
            while done < self.max_writes and time.monotonic() < self.stop_at:
                done += self.one_write()
        except Exception as exc:  # reported by the main thread
            self.error = exc

    def one_write(self):
        roll = self.rng.random()
        if roll < self.mix['move']:
            return self.move()
        if roll < self.mix['move'] + self.mix['delete']:
            return self.delete()
        return self.claim()

    def claim(self):
        consumer = str(uuidlib.uuid4())
        allocations = {self.rng.choice(self.providers):
                       _resources(self.rng.randint(1, 3))}
        status, body = self.api.call('PUT', '/allocations/' + consumer,
                                     _put_body(allocations, None))
        self.ledger.record('claim', consumer, None, allocations, status,
                           body)
        return 1

    def _current(self, consumer):
        status, body = self.api.call('GET', '/allocations/' + consumer)
        if status != 200 or not body['allocations']:
            # Deleted by another writer, or, on Galera, a claim through
            # another node not applied on this one yet: nothing to do.
            return None, None
        if 'consumer_generation' not in body:
            # Allocations without their consumer: a read that saw two
            # states (upstream always names the generation with them).
            self.ledger.torn_read(consumer, body)
            return None, None
        current = {rp: entry['resources']
                   for rp, entry in body['allocations'].items()}
        return current, body['consumer_generation']

    def move(self):
        """A live consumer's allocations moved whole to another provider."""
        def elsewhere(current):
            target = self.rng.choice(
                [rp for rp in self.providers if rp not in current])
            return {target: sum_resources(current.values())}
        return self._rewrite('move', elsewhere)

    def delete(self):
        """A live consumer's allocations removed (a PUT of none, with its
        generation)."""
        return self._rewrite('delete', lambda current: {})

    def _rewrite(self, op, new_allocations):
        """PUT ``new_allocations(current)`` for a live consumer with the
        generation just read; a claim when none is live."""
        consumer = self.ledger.pick_live(self.rng)
        if consumer is None:
            return self.claim()
        current, generation = self._current(consumer)
        if current is None:
            return 0
        allocations = new_allocations(current)
        status, body = self.api.call('PUT', '/allocations/' + consumer,
                                     _put_body(allocations, generation))
        self.ledger.record(op, consumer, generation, allocations, status,
                           body)
        if status == 204 and not allocations:
            self.ledger.forget(consumer)
        return 1


def sum_resources(resource_dicts):
    total = collections.Counter()
    for resources in resource_dicts:
        total.update(resources)
    return dict(total)


# -- verification ----------------------------------------------------------

def read_database(db_url):
    """(allocations by consumer, consumer uuids, usage and capacity per
    provider and class) as the rows on one database say."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            if _is_galera(conn):
                # A node applies the others' write-sets a little after
                # they commit: wait until this node has applied every
                # write committed before this read.
                conn.execute(sa.text('SET SESSION wsrep_sync_wait = 1'))
            rows = conn.execute(sa.text(
                'SELECT a.consumer_id, rp.uuid, rc.name, a.used'
                ' FROM allocations a'
                ' JOIN resource_providers rp'
                '   ON rp.id = a.resource_provider_id'
                ' JOIN resource_classes rc ON rc.id = a.resource_class_id'))
            allocations = collections.defaultdict(dict)
            for consumer, rp, rc, used in rows:
                allocations[consumer].setdefault(rp, {})[rc] = used
            consumers = {row[0] for row in conn.execute(
                sa.text('SELECT uuid FROM consumers'))}
            capacity = conn.execute(sa.text(
                'SELECT rp.uuid, rc.name, i.total, i.reserved,'
                '       i.allocation_ratio,'
                '       (SELECT COALESCE(SUM(a.used), 0) FROM allocations a'
                '  WHERE a.resource_provider_id = i.resource_provider_id'
                '    AND a.resource_class_id = i.resource_class_id)'
                ' FROM inventories i'
                ' JOIN resource_providers rp'
                '   ON rp.id = i.resource_provider_id'
                ' JOIN resource_classes rc'
                '   ON rc.id = i.resource_class_id')).fetchall()
    finally:
        engine.dispose()
    return allocations, consumers, capacity


def _is_galera(conn):
    if conn.dialect.name != 'mysql':
        return False
    return conn.execute(sa.text(
        "SHOW VARIABLES LIKE 'wsrep_on'")).fetchone() not in (
            None, ('wsrep_on', 'OFF'))


def check_database(rows, db_url, expected, providers, apis):
    """Violations seen on one database, as sentences; ``rows`` is what
    read_database read there."""
    allocations, consumers, capacity = rows
    problems = []
    sums = collections.defaultdict(dict)
    for rp, rc, total, reserved, ratio, used in capacity:
        sums[rp][rc] = int(used)
        limit = int((total - reserved) * ratio)
        if used > limit:
            problems.append('%s: provider %s %s used %d of %d'
                            % (db_url, rp, rc, used, limit))
    for consumer, want in expected.items():
        have = allocations.get(consumer) or None
        if have != want:
            problems.append('%s: consumer %s has %s, its last accepted '
                            'write said %s' % (db_url, consumer, have, want))
        if (want is None) == (consumer in consumers):
            problems.append('%s: consumer %s row %s' % (
                db_url, consumer,
                'present after delete/refusal' if want is None
                else 'missing'))
    strangers = set(allocations) - set(expected)
    for consumer in strangers:
        problems.append('%s: allocations of a consumer no write accepted: '
                        '%s' % (db_url, consumer))
    problems += check_usages(apis, providers, sums)
    return problems


def check_usages(apis, providers, sums):
    """GET /resource_providers/{u}/usages from every URL against SQL."""
    problems = []
    for api in apis:
        for rp in providers:
            status, body = api.call('GET',
                                    '/resource_providers/%s/usages' % rp)
            usages = body['usages'] if status == 200 else body
            want = sums.get(rp, {})
            if {k: v for k, v in usages.items() if v or k in want} != want:
                problems.append('%s: usages of %s %s, SQL sums %s'
                                % (api.url, rp, usages, want))
    return problems


def count_retries(log_paths):
    """Lines of re-run writes per log file and per reason."""
    per_log, reasons = {}, collections.Counter()
    for path in log_paths:
        count = 0
        with open(path, errors='replace') as log:
            for line in log:
                if RETRY_MARKER in line:
                    count += 1
                    reasons[line.rsplit(': ', 1)[-1].strip()] += 1
        per_log[path] = count
    return per_log, reasons


# What the server logs with a 5xx: the 503's reason on its own line, the
# 500's in the last line of its traceback.
_FIVE_XX_LINE = re.compile(
    r'(Database unavailable in .*|Outcome unknown: .*'
    r'|\] (?:\w+\.)*\w+(?:Error|Exception|Warning)\b.*)$')


def server_errors(log_paths):
    """What the servers logged with their 5xx answers, per message."""
    found = collections.Counter()
    for path in log_paths:
        with open(path, errors='replace') as log:
            for line in log:
                match = _FIVE_XX_LINE.search(line)
                if match:
                    found[_without_ids(match.group(1))] += 1
    return found


def _without_ids(text):
    return re.sub(r'req-[0-9a-f-]+|[0-9a-f]{8}-[0-9a-f-]{27}', '...', text)


# -- the run ---------------------------------------------------------------

Result = collections.namedtuple(
    'Result', 'answers accepted seconds retries_per_log retry_reasons '
              'problems server_errors')


def run(urls, db_urls, log_paths=(), providers=20, vcpu=8, threads=16,
        seconds=30.0, max_writes=10 ** 9, seed=1, mix=None):
    """Run the writers, verify, and return a Result."""
    mix = mix or {'move': 0.25, 'delete': 0.2}
    apis = [Api(url) for url in urls]
    provider_uuids = create_providers(apis[0], providers, vcpu)
    ledger = Ledger()
    per_thread = max(1, max_writes // threads)
    started = time.monotonic()
    writers = [Writer(apis[i % len(apis)], provider_uuids, ledger,
                      seed * 1000 + i, started + seconds, per_thread, mix)
               for i in range(threads)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    elapsed = time.monotonic() - started
    errors = [w.error for w in writers if w.error]
    if errors:
        raise errors[0]
    expected, lost = ledger.expected()
    problems = ['consumer %s: two writes accepted on one generation'
                % consumer for consumer in lost]
    problems += ['consumer %s: a 5xx answer' % c for c in ledger.unknown]
    problems += ['%d %s answered %s' % (n, op, answer)
                 for (op, answer), n in sorted(ledger.answers.items())
                 if answer not in EXPECTED_ANSWERS]
    problems += ['GET /allocations/%s answered %s: allocations without '
                 'consumer_generation' % (consumer, body)
                 for consumer, body in ledger.torn_reads]
    if not ledger.accepted:
        problems.append('no write was accepted: nothing was tested')
    # Every node read (and caught up) before any API answer is compared.
    rows = [read_database(db_url) for db_url in db_urls]
    for db_url, read in zip(db_urls, rows):
        problems += check_database(read, db_url, expected, provider_uuids,
                                   apis)
    per_log, reasons = count_retries(log_paths)
    accepted = sum(n for (op, answer), n in ledger.answers.items()
                   if answer == '204')
    return Result(ledger.answers, accepted, elapsed, per_log, reasons,
                  problems, server_errors(log_paths))


def format_result(result, urls, db_urls):
    ops = ('claim', 'move', 'delete')
    columns = ('204', '409 capacity', '409 generation', '5xx', 'other')
    lines = ['%d URLs, %d databases checked, %.1f s'
             % (len(urls), len(db_urls), result.seconds),
             '%-8s' % 'writes' + ''.join('%16s' % c for c in columns)]
    for op in ops:
        row = collections.Counter()
        for (name, answer), count in result.answers.items():
            if name == op:
                row[answer if answer in columns else 'other'] += count
        lines.append('%-8s' % op + ''.join('%16d' % row[c] for c in columns))
    total_5xx = sum(n for (_, a), n in result.answers.items() if a == '5xx')
    retries = sum(result.retries_per_log.values())
    lines.append('retries (server logs): %d %s' % (
        retries, dict(result.retry_reasons) if retries else ''))
    lines.append('500s: %s' % (total_5xx or 'none'))
    lines += ['  %5d x %s' % (n, text[:300])
              for text, n in result.server_errors.most_common(10)]
    lines.append('verification: %s' % (
        'passed (capacity, every consumer as its last accepted write, '
        'usages from every URL)' if not result.problems
        else '%d violations' % len(result.problems)))
    lines += ['  ' + p for p in result.problems[:30]]
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', action='append', required=True,
                        help='A server URL (repeat: one per API host).')
    parser.add_argument('--db-url', action='append', default=[],
                        help='SQLAlchemy URL of the database to check '
                             '(repeat: one per node).')
    parser.add_argument('--log', action='append', default=[],
                        help="A server's log file, for the retry count.")
    parser.add_argument('--providers', type=int, default=20)
    parser.add_argument('--vcpu', type=int, default=8)
    parser.add_argument('--threads', type=int, default=16)
    parser.add_argument('--seconds', type=float, default=30.0)
    parser.add_argument('--writes', type=int, default=10 ** 9,
                        help='Stop after this many writes (all threads).')
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args(argv)
    result = run(args.url, args.db_url, args.log, args.providers, args.vcpu,
                 args.threads, args.seconds, args.writes, args.seed)
    print(format_result(result, args.url, args.db_url))
    failed = result.problems or any(
        a == '5xx' for (_, a) in result.answers)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
